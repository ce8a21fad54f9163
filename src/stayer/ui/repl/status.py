"""The footer under the input: what the session is using and how it runs; or, when settings
name one, the person's own `statusLine` command in its place.

`footer` builds the line from what the REPL knows (model, context used, cost, tokens,
permission mode, whether a run is going, messages queued) and fits it to the width by leaving
out the least important parts first: the Shift+Tab hint, then the token counts, the model, the
cost and the context used, the queue, the mode; "esc to interrupt" stays longest (how to
stop is what a person must always see).

`StatusLine` runs a `statusLine` setting as Claude Code does: its command gets the session as
JSON on stdin (`StatusInput`, the fields of Claude Code's that stayer knows) and `COLUMNS` in its
environment, and the first line it prints is shown, colours kept but every other escape
sequence (cursor movement, screen clearing, titles, links) taken out. Runs are debounced (300
ms) and a new one cancels the one in flight; with `refreshInterval` the command also runs that
many seconds after the last run; a command that fails, prints nothing, or takes
longer than 5 s shows nothing, and never holds up or breaks the REPL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec
from msgspec import Struct
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import get_cwidth

from stayer.config.model import StatusLineSetting
from stayer.exec import run_command
from stayer.exec.child_env import child_env
from stayer.ui.repl.figures import money, tokens
from stayer.ui.repl.surface import Totals

MODE_LABELS = {
    "acceptEdits": "⏵⏵ accept edits on",
    "plan": "⏸ plan mode on",
    "bypassPermissions": "⏵⏵ bypass permissions on",
    "dontAsk": "⏵⏵ don't ask on",
}
"""How a permission mode shows in the footer; the default mode shows nothing."""
CYCLE_HINT = "(shift+tab to cycle)"
SEPARATOR = " · "


class _Part(Struct, frozen=True):
    text: str
    style: str
    rank: int
    """Lower ranks are left out first when the line is too wide."""
    side: int = 0
    """0: left of the line, 1: right."""
    joiner: str = SEPARATOR
    """What goes between it and the part before it."""


def footer(
    *,
    model: str,
    totals: Totals,
    mode: str,
    running: bool,
    queued: int,
    width: int,
) -> StyleAndTextTuples:
    """The footer line for `width` columns, as prompt_toolkit formatted text."""
    parts = _parts(model, totals, mode, running, queued)
    while parts and _width(parts) > width:
        parts.remove(min(parts, key=lambda part: part.rank))
    return _line(parts, width)


def _parts(model: str, totals: Totals, mode: str, running: bool, queued: int) -> list[_Part]:
    parts: list[_Part] = []
    label = MODE_LABELS.get(mode)
    if label is not None:
        parts.append(_Part(label, f"class:footer.mode.{mode.lower()}", 8))
        parts.append(_Part(CYCLE_HINT, "class:footer.hint", 1, joiner=" "))
    if running:
        parts.append(_Part("esc to interrupt", "class:footer.hint", 9))  # kept last: how to stop
    if queued:
        parts.append(_Part(f"{queued} queued", "class:footer.queued", 6))
    if model:
        parts.append(_Part(model, "class:footer.model", 3, side=1))
    if totals.context_window > 0:
        used = min(100, round(100 * totals.context_tokens / totals.context_window))
        style = "class:footer.context.full" if used >= 80 else "class:footer.context"
        parts.append(_Part(f"{used}% context", style, 5, side=1))
    if totals.cost_usd > 0:
        parts.append(_Part(money(totals.cost_usd), "class:footer.cost", 4, side=1))
    tokens_in = totals.input_tokens + totals.cache_read_tokens + totals.cache_write_tokens
    if tokens_in or totals.output_tokens:
        text = f"↑{tokens(tokens_in)} ↓{tokens(totals.output_tokens)}"
        parts.append(_Part(text, "class:footer.tokens", 2, side=1))
    return parts


def _width(parts: list[_Part]) -> int:
    sides = [[part for part in parts if part.side == side] for side in (0, 1)]
    used = sum(get_cwidth(part.text) for part in parts)
    used += sum(len(part.joiner) for side in sides for part in side[1:])
    # two spaces between the sides, and one at the start of the line
    return used + 1 + (2 if all(sides) else 0)


def _line(parts: list[_Part], width: int) -> StyleAndTextTuples:
    """The parts laid out: the left side, a gap, the right side against the edge."""
    out: StyleAndTextTuples = [("class:footer", " ")]
    left = [part for part in parts if part.side == 0]
    right = [part for part in parts if part.side == 1]
    _join(out, left)
    gap = width - _width(parts) + (2 if left and right else 0)
    if right:
        out.append(("class:footer", " " * max(gap, 1 if left else 0)))
        _join(out, right)
    return out


def _join(out: StyleAndTextTuples, parts: list[_Part]) -> None:
    for index, part in enumerate(parts):
        if index:
            out.append(("class:footer.separator", part.joiner))
        out.append((part.style, part.text))


# --- the statusLine command -------------------------------------------------------------

DEBOUNCE_S = 0.3
TIMEOUT_S = 5.0
MAX_OUTPUT_CHARS = 4_000


class ModelInfo(Struct, frozen=True):
    id: str
    display_name: str


class Workspace(Struct, frozen=True):
    current_dir: str
    project_dir: str


class CostInfo(Struct, frozen=True):
    total_cost_usd: float
    total_duration_ms: float
    total_api_duration_ms: float


class ContextWindow(Struct, frozen=True):
    total_input_tokens: int
    total_output_tokens: int
    context_window_size: int
    used_percentage: float | None
    remaining_percentage: float | None


class StatusInput(Struct, frozen=True):
    """What a statusLine command reads on stdin: Claude Code's fields that stayer knows."""

    cwd: str
    session_id: str
    transcript_path: str
    version: str
    model: ModelInfo
    workspace: Workspace
    cost: CostInfo
    context_window: ContextWindow


def status_input(
    *,
    session_id: str,
    cwd: Path,
    project_dir: Path,
    transcript_path: Path | None,
    model_id: str,
    model_name: str,
    totals: Totals,
    version: str,
) -> StatusInput:
    """The session as a statusLine command gets it."""
    window = totals.context_window
    used = round(100 * totals.context_tokens / window, 1) if window > 0 else None
    return StatusInput(
        cwd=str(cwd),
        session_id=session_id,
        transcript_path=str(transcript_path) if transcript_path else "",
        version=version,
        model=ModelInfo(id=model_id, display_name=model_name),
        workspace=Workspace(current_dir=str(cwd), project_dir=str(project_dir)),
        cost=CostInfo(
            total_cost_usd=totals.cost_usd,
            total_duration_ms=totals.wall_duration_ms,
            total_api_duration_ms=totals.api_duration_ms,
        ),
        context_window=ContextWindow(
            total_input_tokens=totals.input_tokens
            + totals.cache_read_tokens
            + totals.cache_write_tokens,
            total_output_tokens=totals.output_tokens,
            context_window_size=window,
            used_percentage=used,
            remaining_percentage=None if used is None else round(100 - used, 1),
        ),
    )


_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (titles, links): dropped, the text kept
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: cursor movement, erasing, scrolling...
    r"|\x1b[ -/]*[0-~]"  # two-character escapes (ESC c resets the terminal)
    r"|\x1b"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def safe_line(output: str) -> str:
    """The first line of `output` with its colours (SGR) kept and every other escape sequence
    and control character taken out, so it cannot move the cursor or change the terminal."""
    first = output.replace("\r\n", "\n").split("\n", 1)[0]
    kept: list[str] = []
    position = 0
    for colour in _SGR.finditer(first):
        kept.append(_plain(first[position : colour.start()]))
        kept.append(colour.group(0))
        position = colour.end()
    kept.append(_plain(first[position:]))
    return "".join(kept)


def _plain(text: str) -> str:
    return _CONTROLS.sub("", _ESCAPES.sub("", text).replace("\t", " "))


class StatusLine:
    """Runs the `statusLine` command when asked (debounced) and keeps its last line."""

    def __init__(
        self,
        setting: StatusLineSetting,
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        on_change: Callable[[], None] | None = None,
        debounce_s: float = DEBOUNCE_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.setting = setting
        self._cwd = cwd
        self._env = child_env(env if env is not None else os.environ)
        self._on_change = on_change
        self._debounce_s = debounce_s
        self._timeout_s = timeout_s
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.text = ""
        """The line to show (ANSI colours kept, padding applied); empty shows nothing."""
        self.runs = 0
        """How many runs have finished (shown or not): something for a watcher to wait on."""
        self.finished = asyncio.Event()
        """Set when a run ends, cleared when a new one is asked for."""

    def trigger(self, status: StatusInput, columns: int) -> None:
        """Run the command for `status` after the debounce, cancelling a run pending or in
        flight; safe to call on every event."""
        if self._task is not None:
            self._task.cancel()
        if self._timer is not None:
            self._timer.cancel()
        self.finished.clear()
        self._task = asyncio.get_running_loop().create_task(self._run(status, columns))

    async def close(self) -> None:
        """Stop a pending or running command (the REPL is ending)."""
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self, status: StatusInput, columns: int) -> None:
        await asyncio.sleep(self._debounce_s)
        try:
            line = await self._line(status, columns)
        except asyncio.CancelledError:
            raise
        except Exception:  # a broken status line must never break the REPL
            line = ""
        self.runs += 1
        self.finished.set()
        interval = self.setting.refresh_interval
        if interval is not None:
            self._timer = asyncio.get_running_loop().call_later(
                interval, self.trigger, status, columns
            )
        if line != self.text:
            self.text = line
            if self._on_change is not None:
                self._on_change()

    async def _line(self, status: StatusInput, columns: int) -> str:
        try:
            result = await run_command(
                self.setting.command,
                cwd=self._cwd,
                env={**self._env, "COLUMNS": str(columns)},
                timeout_s=self._timeout_s,
                max_output_chars=MAX_OUTPUT_CHARS,
                input=msgspec.json.encode(status),
            )
        except OSError:
            return ""
        if result.exit_code != 0 or result.timed_out:
            return ""
        line = safe_line(result.stdout)
        if not _SGR.sub("", line).strip():
            return ""
        return " " * self.setting.padding + line
