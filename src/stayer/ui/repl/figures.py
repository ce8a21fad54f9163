"""Money, token counts and durations as the REPL shows them (footer, /cost, /context)."""

from __future__ import annotations


def money(usd: float) -> str:
    """Dollars as people read them: cents above a dollar, four places below (a short session
    costs fractions of a cent)."""
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"


def tokens(count: int) -> str:
    """A token count, short: 950, 12.3k, 1.2M."""
    if count < 1_000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1_000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def duration(ms: float) -> str:
    """A duration: 0.4s, 12.3s, 4m 5.6s, 1h 2m 3s."""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}m {seconds:.1f}s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)}h {int(minutes)}m {int(seconds)}s"
