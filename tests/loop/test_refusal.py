"""A model that declines to answer (`stop_reason: refusal`): asked once of the fallback model
when one is named (`refusal_retry`), otherwise the run ends as `refusal` with what the model
wrote. Never asked again of the same model, never nudged as an empty reply, and the refused
answer never stays in the conversation (a conversation that holds it tends to be refused
again; run() checks the history the API will see)."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from stayer.events import (
    Continue,
    Continuing,
    Event,
    MessageCompleted,
    ModelSwitched,
    RequestStarted,
    Terminal,
    ToolCallFinished,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.loop.recovery import REFUSED_SILENTLY
from stayer.loop.state import FallbackModel, LoopParams
from stayer.messages import TextBlock, ToolUseBlock, UserMessage, history_problems
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo

WORDS = "I can't help with that request."


def refusal(words: str = WORDS) -> Reply:
    return text(words, stop_reason="refusal")


def with_fallback(tmp_path: Path, main: ScriptedProvider, backup: ScriptedProvider) -> LoopParams:
    params = make_params(main, [Echo()], tmp_path)
    backup_model = FallbackModel(
        provider=backup, model="backup-model", max_tokens=8_000, max_output_tokens=8_000
    )
    return replace(params, model="main-model", fallbacks=(backup_model,))


async def streamed(step: Reply, model: str) -> list[Event]:
    """The stream events a scripted model sends for `step` as its first call."""
    reference = ScriptedProvider([step], model=model)
    request = ModelRequest(model=model, system="", messages=(), tools=(), max_tokens=1)
    return [event async for event in reference.stream(request)]


def without_completion(events: list[Event]) -> list[Event]:
    """A refused answer streams, but never completes into the conversation."""
    return [event for event in events if not isinstance(event, MessageCompleted)]


async def test_a_refusal_without_a_fallback_ends_the_run_with_the_models_words(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([refusal()])
    events = await run(make_params(model, [Echo()], tmp_path), "do the bad thing")

    assert events[:-1] == [
        RequestStarted(1),
        *without_completion(await streamed(refusal(), "scripted")),
    ]
    end = finished(events)
    assert (end.terminal, end.message, end.result_text) == (Terminal.REFUSAL, WORDS, "")
    assert (end.stop_reason, end.is_error, end.num_turns) == ("refusal", True, 1)
    assert end.messages == (UserMessage.of_text("do the bad thing"),)
    assert history_problems(end.messages) == []
    assert len(model.requests) == 1  # never asked again, never nudged


async def test_a_refusal_with_no_words_ends_with_ours(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((), stop_reason="refusal")])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert (end.terminal, end.message) == (Terminal.REFUSAL, REFUSED_SILENTLY)
    assert not any(isinstance(event, Continuing) for event in events)  # no empty-reply nudge
    assert end.messages == (UserMessage.of_text("go"),)


async def test_a_refusal_is_asked_once_of_the_fallback_model_which_answers(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([refusal()], model="main-model")
    backup = ScriptedProvider([text("Here is a safe answer.")], model="backup-model")
    events = await run(with_fallback(tmp_path, main, backup), "a borderline question")

    assert events[:-1] == [
        RequestStarted(1),
        *without_completion(await streamed(refusal(), "main-model")),
        Withdrawn("msg_scripted_1", "recovering: refusal_retry"),
        ModelSwitched(
            "main-model", "backup-model", "main-model declined to answer (stop_reason refusal)"
        ),
        Continuing(Continue.REFUSAL_RETRY),
        RequestStarted(1),
        *await streamed(text("Here is a safe answer."), "backup-model"),
    ]
    end = finished(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "Here is a safe answer.")
    (asked,) = main.requests
    (again,) = backup.requests
    assert again.model == "backup-model"
    assert again.messages == asked.messages  # the refused answer is not in the conversation
    assert [usage.model for usage in end.model_usage] == ["main-model", "backup-model"]


async def test_when_the_fallback_refuses_too_the_run_ends_with_its_words(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([refusal()], model="main-model")
    backup = ScriptedProvider([refusal("No, not this either.")], model="backup-model")
    events = await run(with_fallback(tmp_path, main, backup))

    shown = [e for e in events if isinstance(e, RequestStarted | ModelSwitched | Continuing)]
    assert shown == [
        RequestStarted(1),
        ModelSwitched(
            "main-model", "backup-model", "main-model declined to answer (stop_reason refusal)"
        ),
        Continuing(Continue.REFUSAL_RETRY),
        RequestStarted(1),
    ]
    end = finished(events)
    assert (end.terminal, end.message) == (Terminal.REFUSAL, "No, not this either.")
    assert end.messages == (UserMessage.of_text("go"),)
    assert (len(main.requests), len(backup.requests)) == (1, 1)


async def test_a_refused_answers_calls_never_run(tmp_path: Path) -> None:
    """The call is held as invalid (its input breaks Echo's schema), so it cannot start while
    the answer streams; the refusal then drops it whole."""
    call = ToolUseBlock("toolu_1", "Echo", {"wrong": "input"})
    model = ScriptedProvider([Reply((TextBlock("Let me"), call), stop_reason="refusal")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert not any(isinstance(e, ToolCallFinished | ToolResultsAppended) for e in events)
    end = finished(events)
    assert (end.terminal, end.message) == (Terminal.REFUSAL, "Let me")
    assert end.messages == (UserMessage.of_text("go"),)


async def test_calls_that_started_before_the_refusal_are_answered_then_the_run_ends(
    tmp_path: Path,
) -> None:
    call = ToolUseBlock("toolu_1", "Echo", {"text": "ran"})
    model = ScriptedProvider([Reply((TextBlock("Running it."), call), stop_reason="refusal")])
    events = await run(make_params(model, [Echo()], tmp_path))  # checks every call answered

    ran = [(e.tool_use_id, e.status) for e in events if isinstance(e, ToolCallFinished)]
    assert ran == [("toolu_1", "completed")]
    end = finished(events)
    assert (end.terminal, end.message) == (Terminal.REFUSAL, "Running it.")
    assert len(model.requests) == 1
