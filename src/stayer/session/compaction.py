"""The run's compaction policy from its options and the environment (Claude Code's names).

* `autocompact_window` (`--autocompact TOKENS`, at least 100k as in Claude Code; `"auto"` for
  the model's own) or `CLAUDE_CODE_AUTO_COMPACT_WINDOW`: judge the threshold by this window
  when it is smaller than the model's;
* `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (1-100; `autocompact_percent` in Python): compact once that
  share of the window less the output reserve is used, when that comes first (it can only make
  compaction earlier, as in Claude Code);
* `DISABLE_AUTO_COMPACT`: no automatic compaction; `DISABLE_COMPACT`: no summary at all (a
  prompt the API refuses as too long still loses old tool output first);
* `pins` (`--pin`): the user's notes, kept word for word;
* a prompt that alone fills the window is saved in the session's folder (`paths`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stayer.errors import ConfigError
from stayer.loop.state import CompactPolicy
from stayer.switches import env_flag

from .options import QueryOptions
from .paths import session_folder

MIN_WINDOW = 100_000
"""Claude Code's floor for `--autocompact`: with the output reserve and the buffer taken off, a
smaller window would leave little room to work before every call compacts."""


def compact_policy(
    options: QueryOptions, env: Mapping[str, str], cwd: Path, session_id: str
) -> CompactPolicy:
    """The policy; raises `ConfigError` with one line for a value that cannot be used."""
    pins = tuple(pin.strip() for pin in options.pins if pin.strip())
    if len(pins) != len(options.pins):
        raise ConfigError("--pin needs a note, such as --pin 'never edit the migrations'")
    return CompactPolicy(
        auto=not (env_flag(env, "DISABLE_AUTO_COMPACT") or env_flag(env, "DISABLE_COMPACT")),
        reactive=not env_flag(env, "DISABLE_COMPACT"),
        window=_window(options, env),
        percent=_percent(options, env),
        pins=pins,
        # a prompt is saved with the session, so not at all when the session is not kept
        saved_prompts=(
            session_folder(env, cwd, session_id, options.sessions_dir) / "prompts"
            if options.persist_session
            else None
        ),
    )


def _window(options: QueryOptions, env: Mapping[str, str]) -> int | None:
    if options.autocompact_window == "auto":
        return None
    if options.autocompact_window is not None:
        return _checked_window(options.autocompact_window, "--autocompact")
    raw = env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    if not raw:
        return None
    try:
        return _checked_window(int(raw), "CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    except ValueError:
        raise ConfigError(
            f"CLAUDE_CODE_AUTO_COMPACT_WINDOW must be a number of tokens, not {raw!r}"
        ) from None


def _checked_window(tokens: int, name: str) -> int:
    if tokens < MIN_WINDOW:
        raise ConfigError(f"{name} must be at least {MIN_WINDOW:,} tokens, not {tokens:,}")
    return tokens


def _percent(options: QueryOptions, env: Mapping[str, str]) -> int | None:
    if options.autocompact_percent is not None:
        return _checked_percent(str(options.autocompact_percent), "autocompact_percent")
    raw = env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    return _checked_percent(raw, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE") if raw else None


def _checked_percent(raw: str, name: str) -> int:
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 1 <= value <= 100:
        raise ConfigError(f"{name} must be a percentage from 1 to 100, not {raw!r}")
    return int(value)
