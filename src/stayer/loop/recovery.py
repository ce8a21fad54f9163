"""The exit side of the loop (SPEC §3): after each response, go on (and why) or finish (and why).

"The model called no tool" is a signal to recover from, not proof that the work is done. Each
branch below is a small pure function of the run's parameters, its state and the response;
`after_call` is the one decision after each model call, from a summary of what it produced. The
loop only streams, runs tools, does the I/O a branch needs (a summary, the stop checks) and acts
on the answer, which is one of:

* `RunTools`: the response asked for tools (some calls may be answered without running);
* `Retry`: go round again with a new state, for a named `Continue` reason (and, when the answer
  is dropped from the conversation, the id of the message to withdraw);
* `Finish`: end with a `Terminal` reason.

A refused answer (`stop_reason: refusal`) comes first, tool calls or not: it leaves the
conversation, and the request goes once to the next model of the fallback chain
(`refusal_retry`), or the run ends (`refusal`) with what the model wrote.

The tree for a response without tool calls, in order:

1. output cut (`max_tokens`): ask again with a larger output limit once, where the model allows
   more (`max_output_tokens_escalate`); then keep the partial answer and ask the model to go on
   from the cut, up to `MAX_OUTPUT_RECOVERIES` times (`max_output_tokens_recovery`); then end
   (`max_output_tokens`), keeping what was produced;
2. a response that says it calls a tool but holds no call: say so and ask again, twice
   (`malformed_tool_use_retry`), then end (`malformed_tool_use_exhausted`);
3. a reply with no visible text: nudge once (`empty_response_nudge`), send the same request
   once more (`empty_response_resend`), then end (`empty_response`), never a `completed` with
   nothing in it;
4. otherwise the model would be done; the stop checks (`--done-when`, open todos) decide:
   a check that fails sends its output back and the model goes on (`stop_hook_blocking`), at
   most `LoopParams.max_stop_blocks` times in a run, then the run ends (`done_check_failed`)
   with the check's last output, never a false `completed`. When they pass, the Stop hooks
   (settings `hooks`) have their say (`after_stop_hook`): a block sends their feedback back
   through the same branch, with a cap of its own on blocks in a row (`max_hook_blocks`,
   reset by a tool round); past the cap, and on `continue: false`, the run ends
   (`stop_hook_prevented`);
5. a token budget (SPEC §3.4) not yet 90% spent: the model is told to keep going
   (`token_budget_continuation`), until its continuations stop adding much (see `budget`);
6. input the user queued while the model answered: the run goes on with it (`queued_input`);
7. `completed`.

After a tool round: a tool hook that said `continue: false` ends the run (`hook_stopped`); when
every call of several rounds in a row failed the same way (same name,
input and result), the model is told to change course at `repeat_nudge_after` rounds
(`repeated_failure_nudge`), and the run ends at `repeat_stop_after` (`repeated_failure`).

A tool call cut inside its JSON input by the output limit never runs and is never reported as
invalid JSON: its result says the call was cut and how to split the work. Every counter is
bounded, and the counters reset after an ordinary tool turn. A stream that a server error cuts
after some text never gets here: the model call itself keeps the text and asks the model to go
on from the cut (`truncated_response_recovery`, see `stream_cut`).
"""

from __future__ import annotations

import re

from msgspec import Struct
from msgspec.structs import replace

from stayer.errors import InvalidRequest, ModelError, StayerError
from stayer.events import Continue, ModelSwitched, Terminal
from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
)

from .budget import BudgetProgress
from .state import LoopParams, LoopState, StopVerdict
from .stream_cut import is_resume_note

MAX_OUTPUT_RECOVERIES = 3
BLOCK_CAP_VARIABLE = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
MAX_MALFORMED_RETRIES = 2
MAX_EMPTY_RETRIES = 2

OUTPUT_RECOVERY_TEXT = (
    "[Your reply was cut off by the output limit. Continue exactly where it stopped, "
    "mid-sentence or mid-code if that is where the cut fell: no apology and no recap of what "
    "came before. If much remains, do it in smaller pieces.]"
)
CUT_CALL_TEXT = (
    "[This tool call was cut off by the output limit before its input was complete, so it did "
    "not run. Make it again with less in one call: split long content over several calls "
    "(for a long file, write the first part, then add the rest with further edits).]"
)
MALFORMED_TEXT = (
    "[Your last reply ended as if it were calling a tool, but no complete tool call came "
    "through. Make the call again, or answer in text if you meant to stop.]"
)
STOP_CHECK_TEXT = (
    "[You stopped, but the check that decides whether the work is done did not pass, so the "
    "task is not finished. Read its report below, fix the cause, and only stop when it would "
    "pass.]"
)
REPEAT_TEXT = (
    "[The same call has now failed the same way several times in a row. Doing it again will "
    "not help: reread the error, question the assumption behind the call, and try a different "
    "approach (or stop and say what is blocking you).]"
)
REFUSED_SILENTLY = (
    "The model declined to answer (stop_reason refusal) and said nothing more; rephrase the "
    "request, or name another model with --fallback-model."
)
EMPTY_TEXT = (
    "[Your last reply had no visible text and called no tool. Carry on with the task: call the "
    "tool you need, or give the user your answer.]"
)


class Finish(Struct, frozen=True):
    """How the run ends: the terminal reason and what to tell the caller, and the state to end
    from when the decision changed it."""

    terminal: Terminal
    message: str = ""
    error_status: int | None = None
    state: LoopState | None = None


PROMPT_TOO_LONG_WORDS = "Prompt is too long"
"""How a `prompt_too_long` end's message begins: Claude Code's words, which scripts look for."""


def prompt_too_long(detail: str, status: int | None = None) -> Finish:
    """The end of a run whose conversation no longer fits: Claude Code's words, then ours."""
    return Finish(Terminal.PROMPT_TOO_LONG, f"{PROMPT_TOO_LONG_WORDS}: {detail}", status)


class Retry(Struct, frozen=True):
    """Go round again from `state`, for `reason`; `withdraw` names a dropped answer, and
    `switched` the move to the next model when the request goes to it."""

    state: LoopState
    reason: Continue
    withdraw: str | None = None
    switched: ModelSwitched | None = None


class RunTools(Struct, frozen=True):
    """Run the response's tool calls; `cut` maps calls answered without running to their text.

    `broken` is set when the answer broke off after some of its calls had started (see
    `executor`): it is kept up to its last started call, only those run, and `broken` is the
    note the model reads after their results. The run then goes on, or ends as `then` says
    when the failure was final."""

    state: LoopState
    cut: tuple[tuple[str, str], ...] = ()
    broken: str | None = None
    then: Finish | None = None


Step = Finish | Retry | RunTools

INCOMPLETE = Finish(Terminal.MODEL_ERROR, "the model's response ended before it was complete")
WINDOW_EXCEEDED = (
    "the model ran into the end of its context window while answering, and the conversation "
    "could not be shrunk enough to go on; start a new session with the essentials."
)
IMAGE_ADVICE = (
    "an image in the conversation was refused: send one of at most 5 MB and 8000 pixels a "
    "side, as PNG, JPEG, GIF or WebP, or go on without it"
)
_IMAGE_REFUSED = re.compile(
    r"\bimage\b.*\b(invalid|exceeds?|too (large|big)|larger than|dimensions?|unsupported|"
    r"not supported|could not|does not (appear|match)|media.?type)\b"
    r"|\b(invalid|unsupported|could not process)\b.*\bimage\b|image_parse_error",
    re.IGNORECASE,
)


class CallSummary(Struct, frozen=True):
    """What one model call produced, as the decision after it reads it: the completed answer
    (already the last message of the state), how the call failed, whether some of its calls
    started while it streamed, whether it broke off after that, and whether the run was
    interrupted meanwhile."""

    message: AssistantMessage | None = None
    failure: Finish | None = None
    started: bool = False
    broke: bool = False
    aborted: bool = False


class Interrupted(Struct, frozen=True):
    """The run was interrupted during the call: close its calls and end (`aborted_streaming`)."""


class Shrink(Struct, frozen=True):
    """The API refused the prompt as too long: shrink the history and ask again, or end with
    `refused`."""

    refused: Finish


class Overflowed(Struct, frozen=True):
    """`message` ran into the end of the context window: it is dropped and the history shrunk
    as for a too-long prompt."""

    message: AssistantMessage


class Salvage(Struct, frozen=True):
    """The answer broke off after some of its calls started: go on from what ran."""


class Completing(Struct, frozen=True):
    """The model would be done, from `state`: the stop checks and Stop hooks have their say."""

    state: LoopState


AfterCall = Step | Interrupted | Shrink | Overflowed | Salvage | Completing
"""What a model call leads to: a step, or a branch whose step needs the loop's I/O first."""


def after_call(params: LoopParams, state: LoopState, summary: CallSummary) -> AfterCall:
    """The one decision after each model call (SPEC §3), in order: an interrupt ends it; a
    too-long prompt is shrunk; an answer that broke off after calls started goes on from what
    ran; a failed or unfinished call ends the run; an answer at the end of the window is
    dropped and the history shrunk; otherwise recovery's answer to the response (a recovery
    within the cost budget), with the stop checks still to come when the model would be done."""
    failure, message = summary.failure, summary.message
    if summary.aborted:
        return Interrupted()
    if failure is not None and failure.terminal is Terminal.PROMPT_TOO_LONG:
        return Shrink(failure)
    if summary.started and _broken(summary):
        return Salvage()
    if failure is not None or message is None:
        return failure or INCOMPLETE
    if message.stop_reason == "model_context_window_exceeded":
        return Overflowed(message)
    step = after_response(params, state, message, started=summary.started)
    if isinstance(step, Retry):  # a recovery costs another call: not past the budget
        return over_budget(params, state) or step
    if isinstance(step, Finish) and step.terminal is Terminal.COMPLETED:
        return Completing(step.state or state)
    return step


def _broken(summary: CallSummary) -> bool:
    """Whether the answer cannot be taken whole: it broke off, failed, hit the window, or was
    refused."""
    message = summary.message
    return (
        summary.broke
        or summary.failure is not None
        or message is None
        or message.stop_reason in ("model_context_window_exceeded", "refusal")
    )


def failed_call(error: StayerError) -> Finish:
    """The end of a model call that failed for good: `image_error` when the API refused an
    image (too large, of a kind it does not take, or unreadable), else `model_error`."""
    status = error.status if isinstance(error, ModelError) else None
    refused = isinstance(error, InvalidRequest) and status in (400, 413)
    if refused and _IMAGE_REFUSED.search(str(error)):
        said = str(error).split("; ", 1)[0]  # the refusal, without the general advice after it
        return Finish(Terminal.IMAGE_ERROR, f"{said}; {IMAGE_ADVICE}", status)
    return Finish(Terminal.MODEL_ERROR, str(error), status)


def queued(state: LoopState, blocks: tuple[ContentBlock, ...]) -> Retry | None:
    """Go on with what the user queued while the model answered, when it would otherwise be
    done: the input joins the conversation as the user's next message (`queued_input`)."""
    if not blocks:
        return None
    return Retry(with_queued(state, blocks), Continue.QUEUED_INPUT)


def with_queued(state: LoopState, blocks: tuple[ContentBlock, ...]) -> LoopState:
    """The state with queued input added to the user message the next request ends with (or
    as a new one), as Claude Code merges it with the tool results."""
    if not blocks:
        return state
    return replace(state, messages=append_user(state.messages, UserMessage(blocks)))


def after_response(
    params: LoopParams, state: LoopState, message: AssistantMessage, *, started: bool = False
) -> Step:
    """What to do with a completed response, already the last message of `state`; `started`
    says some of its calls already started while it streamed, so it cannot be asked again."""
    if message.stop_reason == "refusal" and not started:
        return _refused(params, state, message)
    if message.tool_uses:
        return _with_tools(params, state, message, started=started)
    if message.stop_reason == "max_tokens":
        return _output_cut(params, state, message)
    if message.stop_reason == "tool_use":
        return _malformed(state, message)
    if not message.text.strip():
        return _resumed_to_the_end(state) or _empty(state, message)
    return Finish(Terminal.COMPLETED)


def before_completing(params: LoopParams, state: LoopState, feedback: list[str]) -> Step:
    """The model would stop: send the stop checks' objections back to it, or the token
    budget's nudge, or complete."""
    if not feedback:
        return _token_budget(params, state)
    report = "\n\n".join(feedback)
    if state.stop_blocks >= params.max_stop_blocks:
        return Finish(
            Terminal.DONE_CHECK_FAILED,
            f"The work is not done: the check still fails after {state.stop_blocks} more "
            f"attempts. Its last report: {report}",
        )
    note = f"{STOP_CHECK_TEXT}\n\n{report}"
    state = replace(
        state,
        messages=_with_user_text(state.messages, note),
        stop_blocks=state.stop_blocks + 1,
    )
    return Retry(state, Continue.STOP_HOOK_BLOCKING)


def after_stop_hook(params: LoopParams, state: LoopState, verdict: StopVerdict) -> Step | None:
    """The Stop hook's word: end the run (`continue: false`), send the model back with its
    feedback (`stop_hook_blocking`), or nothing to add (None). Past `max_hook_blocks` blocks
    in a row the run ends too: a hook that ignores `stop_hook_active` must not keep a run
    going forever (Claude Code's cap, default 8). Claude Code then ends the turn as
    `completed`; stayer ends it as `stop_hook_prevented` with the hook's last words, since
    the hook never approved the answer and a caller must not take it for finished work."""
    if verdict.prevent is not None:
        return Finish(Terminal.STOP_HOOK_PREVENTED, verdict.prevent or "A Stop hook ended the run.")
    if verdict.block is None:
        return None
    cap = params.max_hook_blocks
    if cap and state.hook_blocks >= cap:
        return Finish(
            Terminal.STOP_HOOK_PREVENTED,
            f"A Stop hook kept the turn from ending {state.hook_blocks} times in a row with no "
            f"tool call in between, the most allowed ({BLOCK_CAP_VARIABLE}={cap}), so the run "
            "ends without its approval. A Stop hook should check stop_hook_active in its input "
            f"and let the turn end while it is true. The hook's last words:\n{verdict.block}",
        )
    state = replace(
        state,
        messages=_with_user_text(state.messages, f"Stop hook feedback:\n{verdict.block}"),
        hook_blocks=state.hook_blocks + 1,
        stop_hook_active=True,
    )
    return Retry(state, Continue.STOP_HOOK_BLOCKING)


def _token_budget(params: LoopParams, state: LoopState) -> Step:
    if params.token_budget is None:
        return Finish(Terminal.COMPLETED)
    used = state.usage.output_tokens
    deltas = (*state.budget_deltas, used - state.budget_mark) if state.budget_mark else ()
    progress = BudgetProgress(params.token_budget, used, len(deltas), deltas)
    if not progress.should_continue():
        return Finish(Terminal.COMPLETED)
    state = replace(
        state,
        messages=_with_user_text(state.messages, progress.nudge()),
        budget_mark=used,
        budget_deltas=deltas,
    )
    return Retry(state, Continue.TOKEN_BUDGET_CONTINUATION)


def after_tools(params: LoopParams, state: LoopState, *, aborted: bool) -> Finish | None:
    """Whether the run must end after a round of tools, and why."""
    if aborted:
        return Finish(Terminal.ABORTED_TOOLS, "Interrupted by the user while tools ran.")
    halted = params.halted() if params.halted is not None else None
    if halted is not None:
        return Finish(Terminal.HOOK_STOPPED, halted or "A hook stopped the run.")
    if state.output_recoveries > MAX_OUTPUT_RECOVERIES:
        return _output_exhausted(state)
    if state.repeats >= params.repeat_stop_after:
        return Finish(
            Terminal.REPEATED_FAILURE,
            f"The same tool call failed the same way {state.repeats} times in a row, even "
            "after the model was told to change course.",
        )
    if params.max_turns is not None and state.turn_count + 1 > params.max_turns:
        return Finish(Terminal.MAX_TURNS, f"Reached maximum number of turns ({params.max_turns})")
    return over_budget(params, state)


def over_budget(params: LoopParams, state: LoopState) -> Finish | None:
    """The end of a run whose cost, with what else draws on the same budget (its subagents',
    or its parent's), passed `--max-budget-usd` (at the models' list prices)."""
    from .fallback import run_cost

    budget = params.max_budget_usd
    if budget is None:
        return None
    elsewhere = params.cost_elsewhere() if params.cost_elsewhere is not None else 0.0
    if run_cost(state) + elsewhere < budget:
        return None
    return Finish(Terminal.BUDGET_EXHAUSTED, f"Reached maximum budget (${budget:g})")


def repeats(
    params: LoopParams, state: LoopState, signature: tuple[str, ...] | None
) -> tuple[LoopState, str | None]:
    """Count rounds in a row in which the same calls failed the same way; at
    `LoopParams.repeat_nudge_after` the model is told to change course (the note returned)."""
    count = state.repeats + 1 if signature and signature == state.repeat_signature else 1
    state = replace(state, repeat_signature=signature, repeats=count if signature else 0)
    return state, REPEAT_TEXT if state.repeats == params.repeat_nudge_after else None


def next_turn(
    state: LoopState, *, cut: bool, nudged: bool = False, broken: bool = False
) -> LoopState:
    """The state for the turn after a tool round; a round with a cut call, after which the
    model was told it keeps failing the same way, or of an answer that broke off after some
    calls started, was a recovery.

    An ordinary round is progress, so every recovery may be tried again after it: the
    too-long-prompt guards too, as Claude Code resets them at each turn (a run that once had
    to summarise its history must not end at the next refusal, many rounds later, without
    trying). They still stop a refusal straight after a recovery from looping. Any tool
    round ends a run of Stop hook blocks."""
    state = replace(state, hook_blocks=0)
    if nudged:
        reason = Continue.REPEATED_FAILURE_NUDGE
        return replace(state, turn_count=state.turn_count + 1, transition=reason)
    if cut or broken:
        reason = (
            Continue.TRUNCATED_RESPONSE_RECOVERY if broken else Continue.MAX_OUTPUT_TOKENS_RECOVERY
        )
        return replace(state, turn_count=state.turn_count + 1, transition=reason)
    return replace(
        state,
        turn_count=state.turn_count + 1,
        transition=Continue.NEXT_TURN,
        output_recoveries=0,
        malformed_retries=0,
        empty_retries=0,
        drained=False,
        reactive_compacted=False,
    )


def _with_tools(
    params: LoopParams, state: LoopState, message: AssistantMessage, *, started: bool
) -> Step:
    cut = [block for block in message.tool_uses if _cut(message, block)]
    if not cut:
        return RunTools(state)
    escalated = None if started else _escalate(params, state, message)  # what ran stays
    if escalated is not None:
        return escalated
    answers = tuple((block.id, CUT_CALL_TEXT) for block in cut)
    return RunTools(replace(state, output_recoveries=state.output_recoveries + 1), answers)


def _cut(message: AssistantMessage, block: ToolUseBlock) -> bool:
    """Whether the output limit cut `block` inside its input (then its JSON does not parse)."""
    return message.stop_reason == "max_tokens" and block.unparsed is not None


def _output_cut(params: LoopParams, state: LoopState, message: AssistantMessage) -> Step:
    escalated = _escalate(params, state, message)
    if escalated is not None:
        return escalated
    if state.output_recoveries >= MAX_OUTPUT_RECOVERIES:
        return _output_exhausted(state)
    nudged = _with_user_text(state.messages, OUTPUT_RECOVERY_TEXT)
    state = replace(state, messages=nudged, output_recoveries=state.output_recoveries + 1)
    return Retry(state, Continue.MAX_OUTPUT_TOKENS_RECOVERY)


def _escalate(params: LoopParams, state: LoopState, message: AssistantMessage) -> Retry | None:
    """Ask the same question again with the larger limit, once; the cut answer is dropped."""
    larger = params.escalated_max_tokens
    if state.max_tokens_override is not None or larger is None or larger <= params.max_tokens:
        return None
    state = replace(state, messages=state.messages[:-1], max_tokens_override=larger)
    return Retry(state, Continue.MAX_OUTPUT_TOKENS_ESCALATE, withdraw=message.id)


def _output_exhausted(state: LoopState) -> Finish:
    return Finish(
        Terminal.MAX_OUTPUT_TOKENS,
        f"The model's reply was cut off by the output limit {MAX_OUTPUT_RECOVERIES + 1} times "
        "in a row; what it wrote is kept in the conversation. Ask for less at once, or raise "
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS.",
    )


def _malformed(state: LoopState, message: AssistantMessage) -> Step:
    if state.malformed_retries >= MAX_MALFORMED_RETRIES:
        return Finish(
            Terminal.MALFORMED_TOOL_USE_EXHAUSTED,
            f"The model said it was calling a tool but sent no usable call "
            f"{MAX_MALFORMED_RETRIES + 1} times in a row.",
        )
    messages = _without_empty(state.messages, message)
    state = replace(
        state,
        messages=_with_user_text(messages, MALFORMED_TEXT),
        malformed_retries=state.malformed_retries + 1,
    )
    return Retry(state, Continue.MALFORMED_TOOL_USE_RETRY, withdraw=_withdrawn(message, messages))


def _empty(state: LoopState, message: AssistantMessage) -> Step:
    messages = _without_empty(state.messages, message)
    withdraw = _withdrawn(message, messages)
    if state.empty_retries == 0:
        state = replace(state, messages=_with_user_text(messages, EMPTY_TEXT), empty_retries=1)
        return Retry(state, Continue.EMPTY_RESPONSE_NUDGE, withdraw=withdraw)
    if state.empty_retries < MAX_EMPTY_RETRIES:
        state = replace(state, messages=state.messages[:-1], empty_retries=state.empty_retries + 1)
        return Retry(state, Continue.EMPTY_RESPONSE_RESEND, withdraw=message.id)
    return Finish(
        Terminal.EMPTY_RESPONSE,
        f"The model gave no visible answer {MAX_EMPTY_RETRIES + 1} times in a row, even when "
        "asked again.",
    )


def _refused(params: LoopParams, state: LoopState, message: AssistantMessage) -> Step:
    """The model declined to answer (`stop_reason: refusal`). The answer leaves the
    conversation either way: Anthropic advises against going on from it (a conversation that
    holds it tends to be refused again), and none of its calls may run. The request goes once
    to the next model of the fallback chain (`refusal_retry`), which then serves the run;
    without one, or when that model declines too, the run ends (`refusal`) with what the model
    wrote. Asking the same model again, or nudging it as an empty reply, would not help."""
    from .fallback import refused

    state = replace(state, messages=state.messages[:-1])
    if not state.refusal_retried and state.serving < len(params.fallbacks):
        switched = refused(params, state.serving)
        state = replace(state, serving=state.serving + 1, refusal_retried=True)
        return Retry(state, Continue.REFUSAL_RETRY, withdraw=message.id, switched=switched)
    return replace(refusal_end(message), state=state)


def refusal_end(message: AssistantMessage) -> Finish:
    """The end of a run the model declined to go on with: its words, or ours if it had none."""
    return Finish(Terminal.REFUSAL, message.text.strip() or REFUSED_SILENTLY)


def _resumed_to_the_end(state: LoopState) -> Finish | None:
    """A stream cut right at the end of an answer leaves nothing to add: the model answers the
    resume note with nothing, and the answer kept before it is the whole answer. The empty
    reply and the note go; it completes (rather than being nudged as an empty reply)."""
    messages = state.messages
    if len(messages) < 3 or not is_resume_note(messages[-2]):
        return None
    return Finish(Terminal.COMPLETED, state=replace(state, messages=messages[:-2]))


def _without_empty(messages: tuple[Message, ...], message: AssistantMessage) -> tuple[Message, ...]:
    """The conversation without `message` if it holds nothing worth keeping (the API refuses an
    assistant turn with no content; one with only thinking stays)."""
    keep = any(_worth_keeping(block) for block in message.content)
    return messages if keep else messages[:-1]


def _worth_keeping(block: ContentBlock) -> bool:
    if isinstance(block, TextBlock):
        return bool(block.text.strip())
    return isinstance(block, ThinkingBlock)


def _withdrawn(message: AssistantMessage, messages: tuple[Message, ...]) -> str | None:
    """The id of `message` when it is no longer in `messages`."""
    return message.id if not messages or messages[-1] is not message else None


def _with_user_text(messages: tuple[Message, ...], text: str) -> tuple[Message, ...]:
    """Add a user note (see `append_user`)."""
    return append_user(messages, UserMessage((TextBlock(text),)))


def append_user(messages: tuple[Message, ...], message: UserMessage) -> tuple[Message, ...]:
    """Add a user message, merging it into a user message already last (roles alternate)."""
    last = messages[-1] if messages else None
    if isinstance(last, UserMessage):
        return (*messages[:-1], UserMessage((*last.content, *message.content)))
    return (*messages, message)
