"""Running one tool call: validate (the tool's own `parse_input`) → permission (asking if the
policy says so) → run, within the tool's own `timeout_s` → after-tool → result.

The permission callback is the session's (PreToolUse hooks run inside it, and may hand back a
rewritten input, which the call then runs with); `LoopParams.after_tool` (PostToolUse hooks)
sees each call that ran and may add to its result before it is final.

When each call runs, and beside which others, is the executor's business (`executor`). Every
failure becomes an `is_error` result the model can act on (SPEC §6.3): an unknown tool, input
that fails the schema, a denial, an exception, a timeout.

Every text result is held to its tool's size limit here (SPEC §5.5). When the session has a
folder, a longer text is saved there whole and the model gets a preview and the path (`saved`);
with none, it loses its middle, with a note. A tool that bounds its own results is trusted to;
one that still overflows is saved, or with no folder keeps its start, never loses its middle.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, assert_never

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from stayer.events import (
    PermissionRequested,
    PermissionResolved,
    SubagentEvent,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolReport,
    ToolStatus,
)
from stayer.exec import Captured, truncate_middle
from stayer.messages import JSON, TextBlock, ToolResultBlock, ToolResultContent, ToolUseBlock
from stayer.permissions import Decision
from stayer.providers.base import json_problem
from stayer.tools.base import MAX_RESULT_CHARS, Tool, ToolFailure, ToolInputError, ToolOutput
from stayer.tools.saved import count_lines, preview, result_path, save_text

from .asking import ask
from .state import LoopParams, ToolCall

ToolEvent = (
    ToolCallStarted
    | ToolCallProgress
    | SubagentEvent
    | ToolCallFinished
    | PermissionRequested
    | PermissionResolved
)

INTERRUPTED_TEXT = (
    "[Tool call interrupted by the user before it finished; it may have partly taken effect. "
    "Check before relying on it or running it again.]"
)
NOT_RUN_TEXT = "[Tool call not run: the user interrupted the turn before it started.]"
ASKING_TEXT = (
    "[Tool call not run: the turn was interrupted while its permission was being asked; "
    "nothing of it took effect.]"
)


MAX_ECHOED_INPUT_CHARS = 2_000
"""The most of an unparseable tool input its error result repeats (the middle goes first)."""

_JSON_KINDS: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def empty_placeholder(name: str) -> str:
    """What the model sees instead of an empty result (SPEC §4.1)."""
    return f"({name} completed with no output)"


class Prepared(Struct, frozen=True):
    block: ToolUseBlock
    call: ToolCall | None
    error: str | None = None

    @property
    def concurrency_safe(self) -> bool:
        if self.call is None:
            return True
        try:
            return self.call.tool.is_concurrency_safe(self.call.input)
        except Exception:
            return False


def prepare(tools: dict[str, Tool[Any]], block: ToolUseBlock) -> Prepared:
    """Find the tool (by its name, else by one of its old names: a call of `Task` runs Agent)
    and validate the input; a problem becomes the result text."""
    tool = tools.get(block.name)
    if tool is None:
        tool = next((found for found in tools.values() if block.name in found.aliases), None)
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        return Prepared(block, None, f"Error: no tool named {block.name!r}. Available: {names}.")
    if block.unparsed is not None:
        return Prepared(block, None, _unparsed(block.name, block.unparsed))
    try:
        parsed = tool.parse_input(block.input)
    except ToolInputError as exc:
        return Prepared(block, None, f"InputValidationError: {exc}")
    return Prepared(block, ToolCall(tool, block.id, parsed))


def _unparsed(name: str, raw: str) -> str:
    """Why the input the model wrote was refused, and the input itself, so it can be fixed."""
    problem = json_problem(raw)
    if problem is None:
        kind = _JSON_KINDS.get(type(json.loads(raw)), "something else")
        problem = f"it is {kind}"
    shown, _ = truncate_middle(raw, MAX_ECHOED_INPUT_CHARS)
    return (
        f"InputValidationError: the input was not a JSON object ({problem}), so {name} did not "
        f"run. Call it again with the whole input as one JSON object. The input as received:\n"
        f"{shown}"
    )


def started_event(item: Prepared) -> ToolCallStarted:
    """What says a call has started (the executor says it the moment it takes the call up,
    before its permission check, which may ask)."""
    return ToolCallStarted(item.block.id, item.block.name, dict(item.block.input))


async def run_one(params: LoopParams, item: Prepared, emit: Callable[[ToolEvent], None]) -> None:
    """One call, once started, to its result: its permission asked (and answered) if need be,
    any progress, and a `ToolCallFinished`; nothing that goes wrong here escapes as an
    exception."""
    block = item.block
    started = time.monotonic()
    tool = item.call.tool if item.call else None
    try:
        status, output = await _outcome(params, item, emit)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the call was stopped: the round says it was interrupted
        status, output = "failed", ToolOutput(f"Error: {block.name} was cancelled", True)
    except Exception as exc:  # a permission callback or tool helper that broke
        status = "failed"
        output = ToolOutput(f"Error running {block.name}: {type(exc).__name__}: {exc}", True)
    try:
        finished = _finished(params, block, started, status, output, tool)
    except Exception as exc:  # a result that cannot be shown, such as content of no known kind
        broken = ToolOutput(f"Error: {block.name} returned a result that cannot be shown ({exc})")
        finished = _finished(params, block, started, "failed", replace(broken, is_error=True), None)
    emit(finished)


async def _outcome(
    params: LoopParams, item: Prepared, emit: Callable[[ToolEvent], None]
) -> tuple[ToolStatus, ToolOutput]:
    if item.call is None:
        return "failed", ToolOutput(item.error or "", is_error=True)
    call = item.call
    decision = await params.can_use_tool(call)
    if decision.behavior == "ask":
        decision = await _asked(params, item.block, call, decision, emit)
    if decision.behavior != "allow":
        return "denied", ToolOutput(decision.reason or _denied(call), is_error=True)
    if decision.updated_input is not None:
        updated = _updated(call, decision.updated_input)
        if isinstance(updated, str):
            return "failed", ToolOutput(updated, is_error=True)
        call = updated
    output = await _call(params, call, emit)
    status: ToolStatus = "failed" if output.is_error else "completed"
    if params.after_tool is not None:
        output = await params.after_tool(call, output)
    return status, output


async def _asked(
    params: LoopParams,
    block: ToolUseBlock,
    call: ToolCall,
    asked: Decision,
    emit: Callable[[ToolEvent], None],
) -> Decision:
    """The answer to the question `asked` about `call`; when it changes the input, the new
    input is checked again (`_rechecked`). A PreToolUse hook's rewrite (the input the question
    shows) holds when the answer gives none."""
    rewritten = asked.updated_input
    answer = await ask(params, block, asked, emit)
    if answer.updated_input is None:
        return answer if rewritten is None else replace(answer, updated_input=rewritten)
    shown = block.input if rewritten is None else rewritten
    if answer.behavior == "allow" and dict(answer.updated_input) != dict(shown):
        return await _rechecked(params, call, answer)
    return answer


async def _rechecked(params: LoopParams, call: ToolCall, answer: Decision) -> Decision:
    """An allow that changed the call's input: the new input goes past the rules again (deny
    rules, protected paths, the sandbox's and the working directories' bounds, the mode of the
    session that makes the call), so an approval cannot bring in what they deny; what they
    would only ask about, the answer approved. PreToolUse hooks judged the call already and do
    not run twice for it (`LoopParams.recheck`). One that does not fit the schema is refused
    as the call is run."""
    assert answer.updated_input is not None
    updated = _updated(call, answer.updated_input)
    if isinstance(updated, str):
        return answer
    check = params.recheck if params.recheck is not None else params.can_use_tool
    again = await check(updated)
    if again.behavior == "deny":
        reason = (
            f"{call.tool.name} did not run: the input it was approved with was checked again "
            f"and refused. {again.reason or _denied(call)}"
        )
        return Decision("deny", reason, rule=again.rule, by=again.by or "policy")
    if again.updated_input is not None:
        return replace(answer, updated_input=again.updated_input)
    return answer


def _denied(call: ToolCall) -> str:
    return f"Permission to use {call.tool.name} has been denied."


def _updated(call: ToolCall, given: Mapping[str, JSON]) -> ToolCall | str:
    """The call with the input its approval gave, checked against the tool's schema again;
    the error text when that input does not fit."""
    try:
        parsed = call.tool.parse_input(given)
    except ToolInputError as exc:
        return (
            f"InputValidationError: the input {call.tool.name} was approved with does not fit "
            f"its schema ({exc}), so it did not run."
        )
    return msgspec.structs.replace(call, input=parsed)


async def _call(
    params: LoopParams, call: ToolCall, report: Callable[[ToolReport], None]
) -> ToolOutput:
    def emit(event: ToolReport) -> None:  # a call reports only as itself
        match event:
            case ToolCallProgress():
                report(msgspec.structs.replace(event, tool_use_id=call.tool_use_id))
            case SubagentEvent():
                report(msgspec.structs.replace(event, parent_tool_use_id=call.tool_use_id))
            case _ as unreachable:
                assert_never(unreachable)

    # A copy per call: its own id and emit; the session's state is shared by every copy.
    ctx = msgspec.structs.replace(params.tool_context, emit=emit, tool_use_id=call.tool_use_id)
    timeout_s = call.tool.timeout_s
    try:
        return await asyncio.wait_for(call.tool.call(call.input, ctx), timeout_s)
    except ToolFailure as exc:
        return ToolOutput(str(exc), is_error=True)
    except TimeoutError:
        return ToolOutput(
            f"Error: {call.tool.name} did not finish within {timeout_s:g} s and was stopped.",
            is_error=True,
        )
    except Exception as exc:
        return ToolOutput(
            f"Error calling tool {call.tool.name}: {type(exc).__name__}: {exc}", is_error=True
        )


def _finished(
    params: LoopParams,
    block: ToolUseBlock,
    started: float,
    status: ToolStatus,
    output: ToolOutput,
    tool: Tool[Any] | None,
) -> ToolCallFinished:
    content = output.content
    if isinstance(content, str):
        content = (TextBlock(content),) if content.strip() else ()
    limit = min(tool.max_result_chars, MAX_RESULT_CHARS) if tool else MAX_RESULT_CHARS
    cap = _Cap(block, limit, tool is not None and tool.bounds_own_results, params)
    content = tuple(cap.apply(index, part) for index, part in enumerate(content))
    if not content:
        content = (TextBlock(empty_placeholder(block.name)),)
    result = ToolResultBlock(block.id, content, is_error=output.is_error)
    duration_ms = (time.monotonic() - started) * 1000
    data = dict(output.data)
    return ToolCallFinished(
        block.id, block.name, status, result, duration_ms, data, output.spent, output.followup
    )


class _Cap(Struct, frozen=True):
    """How the texts of one result are held to its tool's limit."""

    block: ToolUseBlock
    limit: int
    self_bounded: bool
    params: LoopParams

    def apply(self, index: int, part: ToolResultContent) -> ToolResultContent:
        """Keep one text within the limit: saved with a preview, else cut, saying so."""
        if not isinstance(part, TextBlock) or len(part.text) <= self.limit:
            return part
        saved = self._saved(index, part.text)
        if saved is not None:
            return TextBlock(saved)
        if self.self_bounded:
            return TextBlock(_head_only(part.text, self.block.name, self.limit))
        # The note's count has at most as many digits as the whole length: reserve that much.
        note_room = len(_cut_note(len(part.text)))
        text, omitted = truncate_middle(part.text, self.limit - note_room)
        return TextBlock(text + _cut_note(omitted))

    def _saved(self, index: int, text: str) -> str | None:
        """The preview of `text` saved to the session's folder; None with no folder (or when
        it cannot be written, so the model still gets the cut rather than nothing)."""
        folder = self.params.tool_context.session_dir
        if folder is None:
            return None
        path = result_path(folder, self.block.id, index)
        try:
            save_text(path, text)
        except OSError:
            return None
        shown = [("", Captured(text))]
        return preview(shown, path=path, chars=len(text), lines=count_lines(text), limit=self.limit)


def _cut_note(omitted: int) -> str:
    return f"\n[{omitted} characters of this result were cut; narrow the request to see them]"


def _head_only(text: str, name: str, limit: int) -> str:
    """A self-bounded result that broke its bound: its whole-line start and a plain note.

    Its middle is never cut, since a page's own closing note (where to continue) would then
    sit after a gap the model cannot see; keeping only the start leaves nothing unsaid inside.
    """

    def note(dropped: int) -> str:
        return (
            f"\n\n[{name} returned {len(text)} characters, more than the {limit} one result may "
            f"hold, so its last {dropped} characters were dropped here; nothing above was left "
            "out. Any note about where to continue was among them: go on from the last line "
            "shown.]"
        )

    room = max(0, limit - len(note(len(text))))
    end = text.rfind("\n", 0, room + 1)
    kept = text[: end if end > 0 else room]
    return kept + note(len(text) - len(kept))


def synthetic_result(block: ToolUseBlock, text: str) -> ToolResultBlock:
    """An error result for a call that never produced one, so the history stays valid."""
    return ToolResultBlock(block.id, (TextBlock(text),), is_error=True)
