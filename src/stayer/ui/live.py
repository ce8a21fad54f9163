"""A live, human-readable view of a run for a terminal: text as it streams, tools as they run.

On a real terminal the latest lines a running call printed are drawn under it and erased when
anything else is written, then drawn again below it, until the call's result takes their place
(`live_output`), as Claude Code shows a running command. Elsewhere (a file, a pipe) what is
written cannot be taken back, so only the results are shown.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TextIO, assert_never

from msgspec import Struct, field

from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Compacted,
    Continue,
    Continuing,
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    ModelSwitched,
    PartialKept,
    PermissionRequested,
    PermissionResolved,
    RequestStarted,
    Retrying,
    SessionStarted,
    SubagentEvent,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolInputDelta,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.messages import JSON

from .live_output import RunningOutput
from .wording import (
    RECOVERIES,
    UNFINISHED,
    agent_label,
    compacted_note,
    hook_line,
    mcp_line,
    subagent_outcome,
    unwrapped,
)

_SUBJECT_FIELDS = ("command", "file_path", "pattern", "path", "url")
MAX_RESULT_LINES = 6


_TODO_MARKS = {"completed": "☒", "in_progress": "▶", "pending": "☐"}


def _summary(tool_input: dict[str, JSON]) -> str:
    todos = tool_input.get("todos")
    if isinstance(todos, list):  # TodoWrite: the list itself is shown when it is saved
        return f"{len(todos)} task" + ("" if len(todos) == 1 else "s")
    for name in _SUBJECT_FIELDS:
        value = tool_input.get(name)
        if isinstance(value, str) and value:
            return value if len(value) <= 80 else value[:77] + "..."
    text = json.dumps(tool_input, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _terminal_width(out: TextIO) -> Callable[[], int]:
    """The width of the terminal `out` writes to, asked afresh each time (it may be resized)."""

    def width() -> int:
        try:
            return os.get_terminal_size(out.fileno()).columns
        except (OSError, ValueError):
            return 80

    return width


_Note = Retrying | ModelSwitched | Withdrawn | Compacted | Continuing | HookRan | McpServerStatus
"""The events `_note` says a line about."""


class LiveView(Struct):
    """Writes events to a terminal as they arrive.

    With `live`, running calls' latest output is drawn below everything else and redrawn with
    cursor movements, so it needs a terminal; `width` says how wide it is now.
    """

    out: TextIO
    color: bool = False
    live: bool = False
    width: Callable[[], int] = lambda: 80
    _at_line_start: bool = True
    _running: RunningOutput = field(default_factory=RunningOutput)
    _drawn: int = 0
    """How many rows of running output are on screen, just above the cursor."""
    _agents: dict[str, tuple[str, int]] = field(default_factory=dict[str, tuple[str, int]])
    """The subagents running: what each is (its label, indented) and its tool calls so far."""

    @classmethod
    def for_stream(cls, out: TextIO) -> LiveView:
        """A view that colours only a real terminal, and never when NO_COLOR is set; running
        output is drawn on a terminal that can move its cursor."""
        terminal = out.isatty()
        return cls(
            out,
            color=terminal and "NO_COLOR" not in os.environ,
            live=terminal and os.environ.get("TERM") != "dumb",
            width=_terminal_width(out),
        )

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self._at_line_start = text.endswith("\n")
            self.out.flush()

    def _newline(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def show(self, event: Event) -> None:
        """Render one event."""
        if isinstance(event, ToolCallProgress):
            if self.live and self._running.add(event):
                self._erase_running()
                self._draw_running()
            return
        if isinstance(event, SubagentEvent) and not _shown(event):
            return  # nothing to show: the running output stays drawn as it is
        self._erase_running()
        self._render(event)
        self._draw_running()

    def _erase_running(self) -> None:
        if self._drawn:
            # To the start of the first row drawn, then clear from there to the end.
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")
            self.out.flush()
            self._drawn = 0

    def _draw_running(self) -> None:
        if not (self.live and self._at_line_start):
            return  # drawn again after the next full line
        rows = self._running.rows(self.width())
        if rows:
            self.out.write("".join(self._style(row, "2") + "\n" for row in rows))
            self.out.flush()
            self._drawn = len(rows)

    def _render(self, event: Event) -> None:
        match event:
            case SessionStarted(model=model, cwd=cwd):
                self._write(self._style(f"stayer · {model} · {cwd}\n", "2"))
            case BlockStarted(block_type=kind):
                if kind == "text":
                    self._newline()
            case TextDelta(text=text):
                self._write(text)
            case ToolCallStarted() | ToolCallFinished() | ToolResultsAppended():
                self._tool_event(event)
            case (
                Retrying()
                | ModelSwitched()
                | Withdrawn()
                | Compacted()
                | Continuing()
                | HookRan()
                | McpServerStatus()
            ):
                self._note(event)
            case SubagentEvent():
                self._subagent(event)
            case Finished():
                self._running.clear()
                self._unfinished()
                self._finished(event)
            case (
                MessageStarted()
                | ThinkingDelta()
                | ToolInputDelta()
                | BlockCompleted()
                | MessageDelta()
                | MessageCompleted()
                | RequestStarted()
                | PartialKept()
                | ToolCallProgress()  # drawn by `show` as it comes
                | PermissionRequested()
                | PermissionResolved()
            ):
                pass  # the text streams as deltas; the rest is not for the eye
            case _ as unreachable:
                assert_never(unreachable)

    def _note(self, event: _Note) -> None:
        """A line in yellow (dim for a discarded answer) about how the run goes on."""
        match event:
            case Retrying(attempt=attempt, max_retries=limit, delay_s=delay, error=error):
                self._newline()
                note = f"  retrying in {delay:.1f}s (attempt {attempt}/{limit}): {error}\n"
                self._write(self._style(note, "33"))
            case ModelSwitched(to_model=model, reason=reason):
                self._newline()
                note = f"  ⇄ switching to {model} for the rest of this run: {reason}\n"
                self._write(self._style(note, "33"))
            case Withdrawn():
                self._newline()
                self._write(self._style("  (the partial answer above was discarded)\n", "2"))
            case Compacted():
                self._newline()
                self._write(self._style(_compacted(event), "33"))
            case Continuing(reason=reason) if reason is not Continue.NEXT_TURN:
                self._newline()
                self._write(self._style(f"  ↻ {RECOVERIES[reason]}\n", "33"))
            case HookRan(outcome=outcome) if outcome != "success":
                self._newline()
                note = hook_line(event).removeprefix("stayer: ")
                self._write(self._style(f"  ⚑ {note}\n", "33"))
            case McpServerStatus():
                line = mcp_line(event)
                if line is not None:
                    self._newline()
                    self._write(self._style(f"  ⚠ {line}\n", "33"))
            case Continuing() | HookRan():
                pass  # the next turn after tools, and a hook that did its job, say nothing
            case _ as unreachable:
                assert_never(unreachable)

    def _subagent(self, wrapped: SubagentEvent) -> None:
        """A subagent, compactly: a line as it starts, one per tool call it makes, and one
        as it ends (how, its tool calls, its time); indented under the call that runs it,
        deeper for a subagent of a subagent."""
        level, depth = unwrapped(wrapped)
        indent, key = "    " * depth, level.agent_id or level.parent_tool_use_id
        label = agent_label(level.agent_type, level.description)
        match level.event:
            case SessionStarted():
                self._agents[key] = (f"{indent}{label}", 0)
                where = " (in the background)" if level.background else ""
                line, code = f"{indent}⧉ {label}{where}\n", "2"
            case ToolCallStarted(name=name, input=tool_input):
                shown, calls = self._agents.get(key, (f"{indent}{label}", 0))
                self._agents[key] = (shown, calls + 1)
                line, code = f"{indent}↳ {name}({_summary(tool_input)})\n", "2"
            case Finished() as ended:
                outcome = subagent_outcome(ended, self._agents.pop(key, ("", 0))[1])
                done = ended.terminal is Terminal.COMPLETED
                line = f"{indent}{'✓' if done else '✗'} {label} · {outcome}\n"
                code = "2" if done else "31"
            case _:
                return
        self._newline()
        self._write(self._style(line, code))

    def _unfinished(self) -> None:
        """The run ended: a line for each subagent whose end never came."""
        for shown, _ in self._agents.values():
            self._newline()
            indent = shown[: len(shown) - len(shown.lstrip())]
            self._write(self._style(f"{indent}✗ {shown.lstrip()} · {UNFINISHED}\n", "31"))
        self._agents.clear()

    def _tool_event(self, event: ToolCallStarted | ToolCallFinished | ToolResultsAppended) -> None:
        match event:
            case ToolCallStarted(tool_use_id=tool_use_id, name=name, input=tool_input):
                self._newline()
                label = f"{name}({_summary(tool_input)})"
                self._write(self._style("● ", "36") + label + "\n")
                self._running.start(tool_use_id, label)
            case ToolCallFinished():
                self._running.finish(event.tool_use_id)
                self._tool_finished(event)
            case ToolResultsAppended():
                self._running.clear()  # every call of the round has its result
            case _:
                assert_never(event)

    def _tool_finished(self, event: ToolCallFinished) -> None:
        todos = event.data.get("newTodos")
        if isinstance(todos, list) and todos and todos != event.data.get("oldTodos"):
            self._write(_todo_list(todos))
            return
        lines = event.result.text.splitlines() or [""]
        shown = lines[:MAX_RESULT_LINES]
        if len(lines) > MAX_RESULT_LINES:
            shown.append(f"… {len(lines) - MAX_RESULT_LINES} more lines")
        code = {"completed": "2", "failed": "31", "denied": "33"}[event.status]
        prefix = "  ⎿  "
        body = ("\n" + " " * len(prefix)).join(shown)
        self._write(self._style(prefix + body + "\n", code))

    def _finished(self, event: Finished) -> None:
        self._newline()
        tokens = event.usage.total_input_tokens + event.usage.output_tokens
        turns = f"{event.num_turns} turn" + ("" if event.num_turns == 1 else "s")
        facts = f"{turns} · {tokens:,} tokens · ${event.cost_usd:.4f}"
        if event.terminal is Terminal.COMPLETED:
            self._write(self._style(f"\n✓ done · {facts}\n", "32"))
        else:
            line = f"\n✗ {event.terminal.value}: {event.message} · {facts}\n"
            self._write(self._style(line, "31"))


def _shown(wrapped: SubagentEvent) -> bool:
    """Whether a person sees a line of a nested run's event: its start, its tool calls and its
    end do; the rest shows in its call's result."""
    inner = unwrapped(wrapped)[0].event
    return isinstance(inner, SessionStarted | ToolCallStarted | Finished)


def _todo_list(todos: list[JSON]) -> str:
    """A changed todo list, one task a line under the call, each marked with its status."""
    lines: list[str] = []
    for todo in todos:
        if isinstance(todo, dict):
            status, content = todo.get("status"), todo.get("content")
            lines.append(f"{_TODO_MARKS.get(str(status), '?')} {content}")
    prefix = "  ⎿  "
    return prefix + ("\n" + " " * len(prefix)).join(lines) + "\n"


def _compacted(event: Compacted) -> str:
    """The line saying how the history was shrunk."""
    return f"  ⟲ {compacted_note(event)}\n"
