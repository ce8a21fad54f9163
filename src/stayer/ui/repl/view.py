"""The REPL's view of a session's events: what to print into the scrollback for good, and the
live tail to redraw under it.

`View.feed` takes each event and returns the finished output it completes: lines printed once,
never redrawn. `View.live` is what is still happening (the markdown block being streamed,
thinking, running calls with a spinner and their latest output), redrawn by the app in place.
Nothing here writes to a terminal or knows prompt_toolkit; the only I/O is reading a file a call
is about to change, through the `read` function given (to show the diff it makes).

The view keeps only what is live plus the last finished call (for `expand_last`): nothing grows
with the conversation, so drawing the live tail costs the same after a thousand messages.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, assert_never

from msgspec import Struct
from rich.cells import cell_len
from rich.console import RenderableType
from rich.text import Text

from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Compacted,
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
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolInputDelta,
    ToolResultsAppended,
    ToolStatus,
    Withdrawn,
)
from stayer.messages import (
    JSON,
    AssistantMessage,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.ui.live_output import RunningOutput, safe
from stayer.ui.wording import agent_label, unwrapped

from .ansi import Painter, hang, markdown, plain
from .diffs import Change, Reader, change_of, diff_texts, file_argument, read_text
from .markdown_stream import MarkdownStream
from .notices import Notice, NoticeEvent, finished_line, notice_of
from .subagents import Subagents
from .tool_lines import (
    SHORT_RESULT_LINES,
    call_text,
    describe_input,
    result_texts,
    status_mark,
    todo_texts,
)

LIVE_ROWS = 16
"""How tall a streaming block may grow on screen before its first lines are printed for good
(two thirds of a 24-row terminal)."""
KEPT_LIVE_ROWS = 4
"""Source lines of such a block that stay live when its head is printed (the last ones may
still change as text arrives)."""
_WORD = re.compile(r"\S+")
SPINNER = "·✢✳✶✻✽✻✶✳✢"
PROMPT_LINES = 40
"""Rows of a prompt echoed into the scrollback (a long paste is cut, the count said)."""


class _Running(Struct):
    """A tool call now running."""

    name: str
    input: dict[str, JSON]
    started: float
    before: str | None
    output: RunningOutput
    waiting: bool = False


class _Done(Struct, frozen=True):
    """The last finished call, kept whole for `expand_last`."""

    name: str
    input: dict[str, JSON]
    status: ToolStatus
    text: str
    change: Change | None


class _Thinking(Struct):
    started: float
    tail: str = ""


class View:
    """Turns events into terminal text: finished lines to print once, and a live tail."""

    def __init__(
        self,
        *,
        width: Callable[[], int],
        color: bool,
        now: Callable[[], float] = time.monotonic,
        live_rows: int = LIVE_ROWS,
        truecolor: bool = True,
        cwd: str | None = None,
        read: Reader = read_text,
    ) -> None:
        self._width = width
        self._color = color
        self._now = now
        self._live_rows = max(live_rows, KEPT_LIVE_ROWS + 1)
        self._truecolor = truecolor
        self._cwd = cwd
        self._read = read
        self._painter: Painter | None = None
        self._text: MarkdownStream | None = None
        self._text_continues = False
        """The growing block's head is printed already (it goes on right under it)."""
        self._rendered: tuple[str, int, list[str]] = ("", 0, [])
        self._thinking: _Thinking | None = None
        self._calls: dict[str, _Running] = {}
        self._agents = Subagents(now=now, cwd=lambda: self._cwd)
        self._flushed: set[str] = set()
        self._last: _Done | None = None
        self._printed = False

    # --- rendering helpers ------------------------------------------------------------------

    def _paint(self) -> Painter:
        width = max(self._width(), 10)
        if self._painter is None or self._painter.width != width:
            self._painter = Painter(width, color=self._color, truecolor=self._truecolor)
        return self._painter

    def _rows(self, texts: Sequence[RenderableType]) -> list[str]:
        painter = self._paint()
        return [row for text in texts for row in painter.lines(text)]

    def _item(self, rows: Sequence[str]) -> list[str]:
        """`rows` as one finished item: a blank line before it unless it is the first."""
        if not rows:
            return []
        gap = "\n" if self._printed else ""
        self._printed = True
        return [gap + "".join(row + "\n" for row in rows)]

    # --- the contract ----------------------------------------------------------------------

    def feed(self, event: Event) -> list[str]:
        """The finished output `event` completes, in order (each item whole lines)."""
        match event:
            case SessionStarted(cwd=cwd):
                self._cwd = cwd
                return []
            case BlockStarted(block_type=kind):
                return self._block_started(kind)
            case TextDelta(text=text):
                return self._text_delta(text)
            case ThinkingDelta(thinking=thinking):
                return self._thinking_delta(thinking)
            case BlockCompleted():
                return self._block_completed(event)
            case MessageCompleted():
                return self._end_thinking() + self._end_text()
            case (
                Retrying()
                | Compacted()
                | ModelSwitched()
                | PartialKept()
                | Continuing()
                | Withdrawn()
                | HookRan()
                | McpServerStatus()
            ):
                return self._run_note(event)
            case ToolCallStarted() | ToolCallProgress() | ToolCallFinished() | SubagentEvent():
                return self._tool_event(event)
            case PermissionRequested() | PermissionResolved():
                return self._permission(event)
            case Finished():
                return self._finished(event)
            case (
                MessageStarted()
                | ToolInputDelta()
                | MessageDelta()
                | RequestStarted()
                | ToolResultsAppended()
            ):
                return []
            case _ as unreachable:
                assert_never(unreachable)

    def live(self) -> str:
        """The live tail now, each line fitting the width; "" when nothing is live."""
        groups: list[list[str]] = []
        if self._thinking is not None:
            groups.append(self._thinking_rows())
        if self._text is not None:
            rows = self._live_markdown()
            if rows:
                groups.append(rows)
        if self._calls:
            groups.append(
                [row for key, call in self._calls.items() for row in self._call_rows(key, call)]
            )
        if self._agents:
            rows = self._rows(self._agents.detached_rows(set(self._calls), self._paint().width))
            if rows:
                groups.append(rows)
        if not groups:
            return ""
        lines = [""] if self._printed and not self._text_continues else []
        for index, group in enumerate(groups):
            lines.extend(([""] if index else []) + group)
        return "\n".join(lines)

    def flush(self) -> list[str]:
        """Commit everything live: a run ended or was stopped."""
        out = self._end_thinking() + self._end_text()
        self._agents.drop_under(set(self._calls))
        for tool_use_id, call in self._calls.items():
            self._flushed.add(tool_use_id)
            line = call_text(call.name, call.input, self._cwd, Text("●", style="dim"))
            out += self._item(self._rows([line, Text("  ⎿  Interrupted", style="dim")]))
        self._calls.clear()
        return out

    def replay(self, messages: Sequence[Message]) -> list[str]:
        """A saved conversation's history, shown as it would have been live."""
        out = self.flush()
        asked: dict[str, ToolUseBlock] = {}
        for message in messages:
            if isinstance(message, AssistantMessage):
                out += self._replay_assistant(message, asked)
            else:
                out += self._replay_user(message, asked)
        return out

    def user_prompt(self, text: str) -> list[str]:
        """The person's prompt as it goes into the scrollback: "> " and the text, bold."""
        lines = safe_text(text.rstrip("\n")).split("\n") if text.strip() else [""]
        texts = [
            hang(Text("> " if index == 0 else "  ", style="bold"), Text(line, style="bold"))
            for index, line in enumerate(lines[: PROMPT_LINES + 1])
        ]
        rows = self._rows(texts)
        if len(rows) > PROMPT_LINES or len(lines) > PROMPT_LINES + 1:
            left = len(lines) - PROMPT_LINES
            more = f"  … +{left} lines" if left > 0 else "  … (cut here)"
            rows = [*rows[:PROMPT_LINES], *self._rows([Text(more, style="dim")])]
        return self._item(rows)

    def notice(
        self, text: str, *, level: Literal["info", "warning", "error"] = "info"
    ) -> list[str]:
        """A line (or a few, wrapped) from the REPL itself, coloured by `level`."""
        return self._say(Notice(safe(text), level))

    def expand_last(self) -> list[str]:
        """The whole result of the last finished call, every line of it."""
        done = self._last
        if done is None:
            return self._say(Notice("No tool call has finished yet."))
        head = call_text(done.name, done.input, self._cwd, status_mark(done.status))
        body = result_texts(done.text, done.status, change=done.change, limit=None, cwd=self._cwd)
        return self._item(self._rows([head, *body]))

    def describe_call(self, name: str, input: Mapping[str, JSON]) -> str:
        """What a call asking for permission will do, for the dialog: a command in full, or
        the diff a file change makes to the file as it is now; ANSI text fitting the width."""
        head = call_text(name, input, self._cwd, Text("●", style="cyan"))
        path = file_argument(name, input)
        if path is not None:
            change = change_of(name, input, self._read(self._resolve(path)))
            body: list[RenderableType] = [*diff_texts(change)] if change is not None else []
        else:
            body = [*describe_input(input)]
        return "\n".join(self._rows([head, *body]))

    # --- text and thinking -------------------------------------------------------------------

    def _block_started(self, kind: str) -> list[str]:
        if kind == "thinking" and self._thinking is None:
            self._thinking = _Thinking(self._now())
        elif kind == "text":
            out = self._end_text()
            self._text = MarkdownStream()
            return out
        return []

    def _block_completed(self, event: BlockCompleted) -> list[str]:
        if isinstance(event.block, ThinkingBlock | RedactedThinkingBlock):
            return self._end_thinking()
        return self._end_text() if isinstance(event.block, TextBlock) else []

    def _run_note(self, event: NoticeEvent) -> list[str]:
        """A note on how the run goes on, after the text before it (a hook's may come while
        text streams, and leaves it be; a withdrawn answer's live part is void)."""
        if isinstance(event, Withdrawn):
            self._text, self._thinking, self._text_continues = None, None, False
        if isinstance(event, HookRan | McpServerStatus):
            return self._notice_event(event)
        return self._end_thinking() + self._end_text() + self._notice_event(event)

    def _text_delta(self, text: str) -> list[str]:
        out = self._end_thinking()
        if self._text is None:
            self._text = MarkdownStream()
        for source in self._text.feed(safe_text(text)):
            out += self._commit_block(source)
        return out + self._commit_tall_head()

    def _markdown_rows(self, source: str) -> list[str]:
        if not source.strip():
            return []
        return self._rows([markdown(source)])

    def _live_markdown(self) -> list[str]:
        """The growing block, rendered once per change of text or width."""
        assert self._text is not None
        source, width = self._text.pending_shown(), self._paint().width
        if self._rendered[:2] != (source, width):
            self._rendered = (source, width, self._markdown_rows(source))
        return self._rendered[2]

    def _commit_block(self, source: str) -> list[str]:
        rows = self._markdown_rows(source)
        continues, self._text_continues = self._text_continues, False
        if continues:  # its head is printed already, and the gap before it
            return ["".join(row + "\n" for row in rows)] if rows else []
        return self._item(rows)

    def _commit_tall_head(self) -> list[str]:
        """Print the head of a block grown taller than the live budget, keeping its last
        lines live; measured from its source, so a long block is never rendered whole again
        and again as it grows."""
        if self._text is None or self._tall(self._text.pending_lines()) <= self._live_rows:
            return []
        head = self._text.split(KEPT_LIVE_ROWS)
        if head is None and self._text.in_paragraph:
            head = self._paragraph_head(self._text)
        if head is None:
            return []
        out = self._commit_block(head)
        self._text_continues = True
        return out

    def _paragraph_head(self, stream: MarkdownStream) -> str | None:
        """Cut a paragraph of few, long source lines where its rendering wraps, all but its
        last rows before the cut, so the head renders to exactly the rows it had and the
        rest starts a row of its own; None where no such cut is sure (the words of a row do
        not match the source's, as with a link, or the cut would split an emphasis)."""
        source = "\n".join(stream.pending_lines())
        rows = [plain(row) for row in self._markdown_rows(source)]
        kept = len(rows) - KEPT_LIVE_ROWS
        if kept <= 0:
            return None
        words = sum(len(row.split()) for row in rows[:kept])
        ends = [match.end() for match in _WORD.finditer(source)]
        if words == 0 or words >= len(ends):
            return None
        head = source[: ends[words - 1]]
        if head.count("**") % 2 or head.count("`") % 2:
            return None
        if [plain(row) for row in self._markdown_rows(head)] != rows[:kept]:
            return None
        return stream.split_at(ends[words - 1])

    def _tall(self, lines: list[str]) -> int:
        """About how many rows `lines` of markdown take (each wraps at the width)."""
        width = self._paint().width
        return sum(max(1, -(-cell_len(line) // width)) for line in lines)

    def _end_text(self) -> list[str]:
        if self._text is None:
            return []
        stream, self._text = self._text, None
        out: list[str] = []
        for source in stream.close():
            out += self._commit_block(source)
        self._text_continues = False
        return out

    def _thinking_delta(self, thinking: str) -> list[str]:
        if self._thinking is None:
            self._thinking = _Thinking(self._now())
        self._thinking.tail = (self._thinking.tail + safe_text(thinking))[-400:]
        return []

    def _thinking_rows(self) -> list[str]:
        assert self._thinking is not None
        lines = self._thinking.tail.strip().splitlines()
        texts = [Text("✻ Thinking…", style="dim italic")]
        if lines:
            texts.append(
                Text("  " + lines[-1], style="dim italic", no_wrap=True, overflow="ellipsis")
            )
        return self._rows(texts)

    def _end_thinking(self) -> list[str]:
        if self._thinking is None:
            return []
        seconds = max(self._now() - self._thinking.started, 0.0)
        self._thinking = None
        return self._item(self._rows([Text(f"✻ Thought for {seconds:.0f}s", style="dim italic")]))

    # --- tool calls ----------------------------------------------------------------------------

    def _tool_event(
        self, event: ToolCallStarted | ToolCallProgress | ToolCallFinished | SubagentEvent
    ) -> list[str]:
        match event:
            case ToolCallStarted(tool_use_id=tool_use_id, name=name, input=tool_input):
                path = file_argument(name, tool_input)
                before = self._read(self._resolve(path)) if path is not None else None
                self._calls[tool_use_id] = _Running(
                    name, dict(tool_input), self._now(), before, RunningOutput()
                )
                self._calls[tool_use_id].output.start(tool_use_id, name)
                return []
            case ToolCallProgress(tool_use_id=tool_use_id):
                call = self._calls.get(tool_use_id)
                if call is not None:
                    call.output.add(event)
                return []
            case ToolCallFinished():
                return self._call_finished(event)
            case SubagentEvent():
                return self._nested(event)
            case _ as unreachable:
                assert_never(unreachable)

    def _call_finished(self, event: ToolCallFinished) -> list[str]:
        call = self._calls.pop(event.tool_use_id, None)
        if call is None and event.tool_use_id in self._flushed:
            return []  # shown as interrupted already
        tool_input = call.input if call is not None else {}
        before = call.before if call is not None else None
        change = change_of(event.name, tool_input, before) if event.status == "completed" else None
        self._last = _Done(event.name, tool_input, event.status, event.result.text, change)
        head = call_text(event.name, tool_input, self._cwd, status_mark(event.status))
        agents: list[RenderableType] = [*self._agents.finished_under(event.tool_use_id)]
        todos = event.data.get("newTodos")
        if isinstance(todos, list) and todos != event.data.get("oldTodos"):
            body = todo_texts(todos)
        else:
            body = result_texts(
                event.result.text,
                event.status,
                change=change,
                limit=SHORT_RESULT_LINES,
                cwd=self._cwd,
            )
        return self._item(self._rows([head, *agents, *body]))

    def _nested(self, event: SubagentEvent) -> list[str]:
        """A subagent's event: live under the call that started it (`subagents`); the end of
        one in the background whose call has returned is an item of its own, and a call a
        policy refused it is said as the session's own would be."""
        ended = self._agents.take(event)
        level = unwrapped(event)[0]
        out: list[str] = []
        if isinstance(level.event, PermissionResolved):  # said as the session's own, named
            notice = notice_of(level.event)
            if notice is not None:
                label = safe(agent_label(level.agent_type, level.description))
                out = self._say(Notice(f"{label}: {notice.text}", notice.level))
        if ended is not None and ended.call not in self._calls:
            self._agents.forget(ended)
            out += self._item(self._rows([self._agents.ended_line(ended)]))
        return out

    def _call_rows(self, tool_use_id: str, call: _Running) -> list[str]:
        width = self._paint().width
        elapsed = max(self._now() - call.started, 0.0)
        if call.waiting:
            mark, suffix = Text("?", style="yellow"), " · waiting for approval"
        else:
            frame = SPINNER[int(self._now() * 8) % len(SPINNER)]
            mark, suffix = Text(frame, style="cyan"), f" · {elapsed:.0f}s"
        line = call_text(call.name, call.input, self._cwd, mark)
        line.truncate(max(width - len(suffix), 4), overflow="ellipsis")
        line.append(suffix, style="dim")
        texts = [line]
        texts += [Text(row, style="dim", no_wrap=True) for row in call.output.rows(width)]
        texts += self._agents.rows_under(tool_use_id, width)
        return self._rows(texts)

    def _permission(self, event: PermissionRequested | PermissionResolved) -> list[str]:
        call = self._calls.get(event.tool_use_id)
        if isinstance(event, PermissionRequested):
            if call is not None:
                call.waiting = True
            return []
        if call is not None:
            call.waiting = False
            if event.updated_input is not None:
                call.input = dict(event.updated_input)
        return self._notice_event(event)

    # --- notices and the end of a run ------------------------------------------------------

    def _notice_event(self, event: NoticeEvent) -> list[str]:
        notice = notice_of(event)
        return self._say(notice) if notice is not None else []

    def _say(self, notice: Notice) -> list[str]:
        style = {"info": "dim", "warning": "yellow", "error": "red"}[notice.level]
        return self._item(self._rows([Text(notice.text, style=style)]))

    def _finished(self, event: Finished) -> list[str]:
        out = self.flush()
        self._flushed.clear()
        out += self._item(self._rows(self._agents.unfinished()))
        return out + self._item(self._rows([Text(finished_line(event), style="dim")]))

    # --- replay ----------------------------------------------------------------------------

    def _replay_assistant(
        self, message: AssistantMessage, asked: dict[str, ToolUseBlock]
    ) -> list[str]:
        out: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                stream = MarkdownStream()
                for source in stream.feed(safe_text(block.text)) + stream.close():
                    out += self._item(self._markdown_rows(source))
            elif isinstance(block, ToolUseBlock):
                asked[block.id] = block
        return out

    def _replay_user(self, message: UserMessage, asked: dict[str, ToolUseBlock]) -> list[str]:
        out: list[str] = []
        words = [block.text for block in message.content if isinstance(block, TextBlock)]
        if any(word.strip() for word in words):
            out += self.user_prompt("\n".join(words))
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                out += self._replay_result(block, asked.pop(block.tool_use_id, None))
        return out

    def _replay_result(self, result: ToolResultBlock, call: ToolUseBlock | None) -> list[str]:
        name = call.name if call is not None else "tool"
        tool_input = dict(call.input) if call is not None else {}
        status: ToolStatus = "failed" if result.is_error else "completed"
        change = change_of(name, tool_input, None) if status == "completed" else None
        self._last = _Done(name, tool_input, status, result.text, change)
        head = call_text(name, tool_input, self._cwd, status_mark(status))
        body = result_texts(
            result.text, status, change=change, limit=SHORT_RESULT_LINES, cwd=self._cwd
        )
        return self._item(self._rows([head, *body]))

    def _resolve(self, path: str) -> Path:
        if os.path.isabs(path) or self._cwd is None:
            return Path(path)
        return Path(self._cwd) / path


def safe_text(text: str) -> str:
    """Streamed text without escape sequences or control characters; newlines kept."""
    return "\n".join(safe(line) for line in text.split("\n"))
