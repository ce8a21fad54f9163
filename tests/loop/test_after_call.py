"""The decision after each model call (`recovery.after_call`), one test per branch, as a pure
function of the run's parameters, its state and a summary of what the call produced; and the
two pure pieces around it: how a failed call ends (`failed_call`: an image the API refused is
`image_error`), and what queued input does to the state (`queued`, `with_queued`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from stayer.errors import InvalidRequest, ModelError, Overloaded, PromptTooLong, ServerError
from stayer.events import Continue, ModelUsage, Terminal
from stayer.loop.recovery import (
    EMPTY_TEXT,
    IMAGE_ADVICE,
    INCOMPLETE,
    CallSummary,
    Completing,
    Finish,
    Interrupted,
    Overflowed,
    Retry,
    RunTools,
    Salvage,
    Shrink,
    after_call,
    failed_call,
    prompt_too_long,
    queued,
    with_queued,
)
from stayer.loop.state import LoopParams, LoopState
from stayer.messages import (
    AssistantMessage,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.scripted import ScriptedProvider
from tests.fakes.loop_harness import make_params
from tests.fakes.tools import Echo

PROMPT = UserMessage.of_text("go")
TOO_LONG = prompt_too_long("the conversation is too long for the model", 400)
PAID = ModelUsage("scripted", Usage(10, 5), 0.002, 200_000, 32_000)
FAILED = Finish(Terminal.MODEL_ERROR, "server error (500): boom; try again shortly", 500)


def params(tmp_path: Path, **changes: object) -> LoopParams:
    return replace(make_params(ScriptedProvider([]), [Echo()], tmp_path), **changes)


def answer(*blocks: TextBlock | ToolUseBlock, stop: StopReason = "end_turn") -> AssistantMessage:
    return AssistantMessage(blocks, id="msg_1", stop_reason=stop, usage=Usage(10, 5))


def answered(message: AssistantMessage) -> LoopState:
    """The state after the call: the answer is already the last message."""
    return LoopState(messages=(PROMPT, message))


def test_an_interrupt_comes_before_anything_the_call_left(tmp_path: Path) -> None:
    summary = CallSummary(failure=TOO_LONG, started=True, broke=True, aborted=True)
    assert after_call(params(tmp_path), LoopState((PROMPT,)), summary) == Interrupted()


def test_a_too_long_prompt_is_shrunk_even_after_calls_started(tmp_path: Path) -> None:
    summary = CallSummary(failure=TOO_LONG, started=True)
    assert after_call(params(tmp_path), LoopState((PROMPT,)), summary) == Shrink(TOO_LONG)


@pytest.mark.parametrize(
    "summary",
    [
        CallSummary(message=answer(TextBlock("so")), started=True, broke=True),
        CallSummary(failure=FAILED, started=True),
        CallSummary(started=True),
        CallSummary(message=answer(TextBlock("so"), stop="refusal"), started=True),
        CallSummary(
            message=answer(TextBlock("so"), stop="model_context_window_exceeded"), started=True
        ),
    ],
    ids=["broke-off", "failed", "unfinished", "refused", "window-end"],
)
def test_an_answer_that_cannot_be_taken_whole_goes_on_from_what_ran(
    tmp_path: Path, summary: CallSummary
) -> None:
    assert after_call(params(tmp_path), LoopState((PROMPT,)), summary) == Salvage()


def test_a_failed_call_with_nothing_started_ends_with_its_failure(tmp_path: Path) -> None:
    summary = CallSummary(failure=FAILED)
    assert after_call(params(tmp_path), LoopState((PROMPT,)), summary) is FAILED


def test_a_call_that_ended_without_an_answer_is_incomplete(tmp_path: Path) -> None:
    assert after_call(params(tmp_path), LoopState((PROMPT,)), CallSummary()) is INCOMPLETE


def test_an_answer_at_the_end_of_the_window_is_dropped_to_shrink(tmp_path: Path) -> None:
    message = answer(TextBlock("half"), stop="model_context_window_exceeded")
    summary = CallSummary(message=message)
    assert after_call(params(tmp_path), answered(message), summary) == Overflowed(message)


def test_a_recovery_within_the_budget_goes_round(tmp_path: Path) -> None:
    empty = answer(TextBlock(" "))
    spent = replace(answered(empty), model_usage=(PAID,))
    step = after_call(params(tmp_path, max_budget_usd=1.0), spent, CallSummary(message=empty))
    assert isinstance(step, Retry)
    assert (step.reason, step.withdraw) == (Continue.EMPTY_RESPONSE_NUDGE, "msg_1")
    assert step.state.messages == (UserMessage((*PROMPT.content, TextBlock(EMPTY_TEXT))),)


def test_a_recovery_past_the_budget_ends_the_run(tmp_path: Path) -> None:
    empty = answer(TextBlock(" "))
    spent = replace(answered(empty), model_usage=(PAID,))
    over = params(tmp_path, max_budget_usd=0.001)
    step = after_call(over, spent, CallSummary(message=empty))
    assert step == Finish(Terminal.BUDGET_EXHAUSTED, "Reached maximum budget ($0.001)")


def test_an_answer_the_model_would_stop_at_goes_to_the_stop_checks(tmp_path: Path) -> None:
    done = answer(TextBlock("All done."))
    state = answered(done)
    assert after_call(params(tmp_path), state, CallSummary(message=done)) == Completing(state)


def test_an_answer_with_calls_runs_them(tmp_path: Path) -> None:
    calling = answer(ToolUseBlock("toolu_1", "Echo", {"text": "hi"}), stop="tool_use")
    state = answered(calling)
    step = after_call(params(tmp_path), state, CallSummary(message=calling))
    assert step == RunTools(state)


REFUSED_IMAGES = [
    "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 5316488 bytes > "
    "5242880 bytes",
    "messages.0.content.0.image.source.base64.data: At least one of the image dimensions "
    "exceed max allowed size: 8000 pixels",
    "Could not process image",
    "messages.0.content.0.image.source.base64.data: The image was specified using the "
    "image/jpeg media type, but does not appear to be a valid jpeg image",
    "You uploaded an unsupported image. Please make sure your image is a png, jpeg, gif or webp.",
    "Invalid image. (image_parse_error)",
]


@pytest.mark.parametrize("detail", REFUSED_IMAGES)
def test_an_image_the_api_refuses_ends_as_an_image_error(detail: str) -> None:
    error = InvalidRequest(
        f"request rejected (400 invalid_request_error): {detail}; the request was not "
        "accepted as sent; check the model name and options",
        status=400,
    )
    said = f"request rejected (400 invalid_request_error): {detail}"
    assert failed_call(error) == Finish(Terminal.IMAGE_ERROR, f"{said}; {IMAGE_ADVICE}", 400)


@pytest.mark.parametrize(
    "error",
    [
        InvalidRequest(
            "request rejected (413 request_too_large): body too big; the request is over the "
            "size limit; remove large attachments or images",
            status=413,
        ),
        InvalidRequest("request rejected (400): max_tokens: must be at most 8192", status=400),
        ServerError("server error (500): could not process image; try again", status=500),
        Overloaded("overloaded (529): invalid image pipeline busy", status=529),
        PromptTooLong("the conversation is too long for the model (image blocks count)"),
    ],
    ids=["size-limit", "other-400", "server", "overloaded", "too-long"],
)
def test_other_failures_stay_model_errors(error: ModelError) -> None:
    assert failed_call(error) == Finish(Terminal.MODEL_ERROR, str(error), error.status)


def test_queued_input_goes_on_with_a_run_that_would_complete() -> None:
    state = answered(answer(TextBlock("All done.")))
    step = queued(state, (TextBlock("and the tests too"),))
    assert step == Retry(
        replace(state, messages=(*state.messages, UserMessage.of_text("and the tests too"))),
        Continue.QUEUED_INPUT,
    )


def test_nothing_queued_changes_nothing() -> None:
    state = answered(answer(TextBlock("All done.")))
    assert queued(state, ()) is None
    assert with_queued(state, ()) is state


def test_queued_input_joins_the_user_message_a_request_ends_with() -> None:
    results = UserMessage((ToolResultBlock("toolu_1", (TextBlock("hi"),)),))
    calling = answer(ToolUseBlock("toolu_1", "Echo", {"text": "hi"}), stop="tool_use")
    state = LoopState((PROMPT, calling, results))
    joined = with_queued(state, (TextBlock("also this"),))
    assert joined.messages == (
        PROMPT,
        calling,
        UserMessage((*results.content, TextBlock("also this"))),
    )
