"""/context: what fills the model's context window, part by part.

The parts are estimated from what the session really sends, with the estimate compaction
itself judges by (`context.compact`): the system prompt less the memory files, the memory files
(each named), the tools' definitions as the request carries them (`Session.tool_tokens`, the
figure the init line gives), and the conversation; and what ToolSearch deferral keeps out of
each request when it defers MCP tools. What
is left is free space up to where auto-compaction starts, and the room kept past that point
for the answer and the compaction buffer, so the parts add up to the window. The count the API
gave for the last request, when there has been one, is shown beside them.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from stayer.context.compact import CHARS_PER_TOKEN, estimate_tokens
from stayer.context.prompt import memory_section
from stayer.loop.compaction import OUTPUT_RESERVE_CAP, threshold
from stayer.loop.state import LoopParams
from stayer.session.session import Session

from .commands_entry import Command
from .figures import tokens
from .surface import Repl

BAR_CELLS = 40
"""How many characters wide the bar of the whole window is."""


class Part(Struct, frozen=True):
    """One thing that takes room in the window."""

    label: str
    tokens: int
    mark: str
    """The character that stands for it in the bar."""


class Breakdown(Struct, frozen=True):
    """The window, part by part; the parts' tokens add up to `window` unless what is used
    already passes it (then `overflow` says by how much)."""

    model: str
    window: int
    parts: tuple[Part, ...]
    memory_files: tuple[tuple[str, int], ...]
    """Each memory file and its own estimate (its share of the memory part)."""
    tool_count: int
    compact_at: int | None
    """Where auto-compaction starts, in tokens used; None when it is off."""
    overflow: int = 0
    deferral_saves: int = 0
    """The tokens ToolSearch deferral keeps out of each request (0: nothing deferred)."""

    @property
    def used(self) -> int:
        """The tokens what is sent takes (everything but free and reserved room)."""
        return sum(part.tokens for part in self.parts if part.mark not in (FREE, RESERVED))


FREE = "·"
RESERVED = "-"


def text_tokens(text: str) -> int:
    """About how many tokens `text` takes (compaction's own rule of thumb)."""
    return len(text) // CHARS_PER_TOKEN


def breakdown(session: Session, window: int) -> Breakdown:
    """What fills `window` (the session's model's, when 0) for `session` as it is now."""
    params = session.setup.params
    window = window or params.context_window
    system = text_tokens(params.system_prompt)
    memory = session.setup.resolved.system.memory if session.setup.resolved else None
    memory_text = memory_section(memory) if memory is not None else ""
    memory_tokens = text_tokens(memory_text) if memory_text in params.system_prompt else 0
    files: tuple[tuple[str, int], ...] = ()
    if memory is not None and memory_tokens:
        cwd = Path(session.setup.started.cwd)
        files = tuple((shown_path(file.path, cwd), text_tokens(file.text)) for file in memory.files)
    used = (
        Part("System prompt", system - memory_tokens, "█"),
        Part("Memory files", memory_tokens, "▓"),
        Part("Tools", session.tool_tokens(), "▒"),
        Part("Messages", estimate_tokens(session.history), "░"),
    )
    taken = sum(part.tokens for part in used)
    limit = _compact_at(params, window)
    room = max(0, limit - taken)
    reserved = max(0, window - taken - room)
    parts = (*used, Part("Free space", room, FREE), Part("Reserved", reserved, RESERVED))
    tool_count = len(params.tools.specs)
    overflow = max(0, taken - window)
    compact_at = limit if params.compaction.auto else None
    model = session.setup.started.model
    saves = session.mcp_saved_tokens()
    return Breakdown(model, window, parts, files, tool_count, compact_at, overflow, saves)


def shown_path(path: Path, cwd: Path) -> str:
    """`path` as short as it reads plainly: from the working directory, or from home (`~`)."""
    for base, prefix in ((cwd, "."), (Path.home(), "~")):
        if path.is_relative_to(base):
            return f"{prefix}/{path.relative_to(base)}"
    return str(path)


def _compact_at(params: LoopParams, window: int) -> int:
    """The tokens used at which auto-compaction starts (never past `window`); when it is off,
    where the answer's room begins (only that room is reserved then)."""
    if not params.compaction.auto:
        return max(0, window - min(params.max_tokens, OUTPUT_RESERVE_CAP))
    return max(0, min(threshold(params), window))


def bar(parts: tuple[Part, ...], window: int, cells: int = BAR_CELLS) -> str:
    """The window as `cells` characters, each part's share in its own character (a part that
    is there gets at least one)."""
    whole = max(window, sum(part.tokens for part in parts))  # past the window: of what is used
    if whole <= 0:
        return ""
    counts = [max(round(part.tokens * cells / whole), 1) if part.tokens else 0 for part in parts]
    largest = max(range(len(parts)), key=lambda index: parts[index].tokens)
    counts[largest] += cells - sum(counts)  # what rounding took or gave, from the largest part
    return "".join(part.mark * count for part, count in zip(parts, counts, strict=True))


def render(found: Breakdown, measured: int) -> str:
    """The breakdown as the person reads it."""
    window = found.window
    share = found.used * 100 / window if window else 0.0
    lines = [
        f"Context: {found.model}, {tokens(found.used)} of {tokens(window)} tokens used "
        f"({share:.0f}%, estimated)",
        bar(found.parts, window),
    ]
    width = max(len(part.label) for part in found.parts) + 8
    for part in found.parts:
        label = part.label + (f" ({found.tool_count})" if part.label == "Tools" else "")
        percent = part.tokens * 100 / window if window else 0.0
        lines.append(f"{part.mark} {label:<{width}} {tokens(part.tokens):>7}  {percent:5.1f}%")
        if part.label == "Memory files":
            lines += [f"    {path}  {tokens(count)}" for path, count in found.memory_files]
    if found.deferral_saves:
        lines.append(
            f"MCP tool definitions deferred (ToolSearch loads them when asked): "
            f"{tokens(found.deferral_saves)} saved per request"
        )
    if found.compact_at is not None:
        lines.append(f"Auto-compaction starts at {tokens(found.compact_at)} used")
    if found.overflow:
        lines.append(f"Over the window by {tokens(found.overflow)}: /compact frees room")
    if measured:
        lines.append(f"The last request took {measured:,} tokens, as the model counted them")
    return "\n".join(lines)


async def _context(repl: Repl, argument: str) -> None:
    totals = repl.totals
    repl.say(render(breakdown(repl.session, totals.context_window), totals.context_tokens))


context_command = Command(
    "context", "what fills the context window, part by part", _context, while_running=True
)
