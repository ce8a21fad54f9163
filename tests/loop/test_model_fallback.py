"""Overloaded three times in a row, the run goes on with the next model of the fallback chain
for the rest of the run; nothing else switches, and each run starts from the main model."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from stayer.errors import ConnectionLost, ModelError, Overloaded, RateLimited, ServerError
from stayer.events import (
    Event,
    ModelSwitched,
    ModelUsage,
    RequestStarted,
    Retrying,
    Terminal,
    ToolCallFinished,
    Withdrawn,
)
from stayer.loop.fallback import request_for
from stayer.loop.run import query
from stayer.loop.state import FallbackModel, LoopParams, RetryPolicy
from stayer.messages import Usage, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.profiles import cost_usd
from stayer.providers.scripted import Fault, Reply, ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo

NO_WAIT = RetryPolicy(base_delay_s=0.0)


def overloaded() -> Fault:
    return Fault(Overloaded("overloaded (529)", status=529))


def fallback(provider: ScriptedProvider, model: str, **limits: int) -> FallbackModel:
    return FallbackModel(
        provider=provider,
        model=model,
        max_tokens=limits.get("max_tokens", 8_000),
        max_output_tokens=limits.get("max_output_tokens", 8_000),
        betas=("fallback-beta",),
    )


def params_with(
    tmp_path: Path,
    main: ScriptedProvider,
    *fallbacks: FallbackModel,
    retry: RetryPolicy = NO_WAIT,
    model: str = "main-model",
) -> LoopParams:
    params = make_params(main, [Echo()], tmp_path, retry=retry)
    return replace(params, model=model, fallbacks=fallbacks)


async def replayed(step: Reply, model: str) -> list[Event]:
    """The stream events a scripted model sends for `step` as its first call."""
    reference = ScriptedProvider([step], model=model)
    request = ModelRequest(model=model, system="", messages=(), tools=(), max_tokens=1)
    return [event async for event in reference.stream(request)]


def retry(attempt: int, error: str = "overloaded (529)", status: int | None = 529) -> Retrying:
    return Retrying(attempt, NO_WAIT.max_retries, 0.0, error, status)


async def test_three_overloads_in_a_row_switch_to_the_fallback_which_answers(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([overloaded()] * 3)
    backup = ScriptedProvider([text("answered by the fallback")], model="backup-model")
    params = params_with(tmp_path, main, fallback(backup, "backup-model"))
    events = await run(params)

    answer = await replayed(text("answered by the fallback"), "backup-model")
    assert events[:-1] == [
        RequestStarted(1),
        retry(1),
        retry(2),
        ModelSwitched("main-model", "backup-model", "main-model was overloaded 3 times in a row"),
        *answer,
    ]
    end = finished(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "answered by the fallback")
    assert [r.model for r in main.requests] == ["main-model"] * 3
    (sent,) = backup.requests
    assert (sent.model, sent.max_tokens, sent.betas) == ("backup-model", 8_000, ("fallback-beta",))
    assert sent.messages == main.requests[0].messages


async def test_the_fallback_serves_the_rest_of_the_run_and_each_call_is_priced_at_its_model(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([tool_call("Echo", {"text": "one"}, id="t1"), *[overloaded()] * 3])
    backup = ScriptedProvider(
        [tool_call("Echo", {"text": "two"}, id="t2"), text("done")], model="claude-haiku-4-5"
    )
    params = params_with(
        tmp_path, main, fallback(backup, "claude-haiku-4-5"), model="claude-opus-4-5"
    )
    events = await run(params)

    switches = [e for e in events if isinstance(e, ModelSwitched)]
    assert switches == [
        ModelSwitched(
            "claude-opus-4-5", "claude-haiku-4-5", "claude-opus-4-5 was overloaded 3 times in a row"
        )
    ]
    ran = [(e.tool_use_id, e.status) for e in events if isinstance(e, ToolCallFinished)]
    assert ran == [("t1", "completed"), ("t2", "completed")]
    # Turn 3 goes straight to the fallback: no overload to wait out again.
    assert [type(e).__name__ for e in events if isinstance(e, RequestStarted | Retrying)] == [
        "RequestStarted",
        "RequestStarted",
        "Retrying",
        "Retrying",
        "RequestStarted",
    ]
    assert [r.model for r in backup.requests] == ["claude-haiku-4-5"] * 2
    end = finished(events)
    one_call = Usage(input_tokens=100, output_tokens=20)
    assert end.usage == Usage(input_tokens=300, output_tokens=60)
    opus, haiku = cost_usd("claude-opus-4-5", one_call), cost_usd("claude-haiku-4-5", one_call)
    # One entry per model that served, each with its own limits; the costs add up.
    assert end.model_usage == (
        ModelUsage("claude-opus-4-5", one_call, opus, 200_000, 32_000),
        ModelUsage("claude-haiku-4-5", one_call + one_call, haiku + haiku, 200_000, 8_000),
    )
    assert end.cost_usd == opus + (haiku + haiku)
    assert end.cost_usd < cost_usd("claude-opus-4-5", end.usage)


async def test_a_chain_of_two_goes_on_down_the_chain(tmp_path: Path) -> None:
    main = ScriptedProvider([overloaded()] * 3)
    first = ScriptedProvider([overloaded()] * 3, model="first")
    second = ScriptedProvider([text("the second answers")], model="second")
    params = params_with(tmp_path, main, fallback(first, "first"), fallback(second, "second"))
    events = await run(params)

    answer = await replayed(text("the second answers"), "second")
    assert events[:-1] == [
        RequestStarted(1),
        retry(1),
        retry(2),
        ModelSwitched("main-model", "first", "main-model was overloaded 3 times in a row"),
        retry(1),  # a fresh count on each model
        retry(2),
        ModelSwitched("first", "second", "first was overloaded 3 times in a row"),
        *answer,
    ]
    assert finished(events).result_text == "the second answers"


async def test_when_the_last_model_stays_overloaded_the_run_ends_with_model_error(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([overloaded()] * 3)
    backup = ScriptedProvider([overloaded()] * 3, model="backup")
    policy = RetryPolicy(max_retries=2, base_delay_s=0.0)
    events = await run(params_with(tmp_path, main, fallback(backup, "backup"), retry=policy))

    assert [type(e).__name__ for e in events] == [
        "RequestStarted",
        "Retrying",
        "Retrying",
        "ModelSwitched",
        "Retrying",
        "Retrying",
        "Finished",
    ]
    end = finished(events)
    assert (end.terminal, end.message, end.error_status) == (
        Terminal.MODEL_ERROR,
        "overloaded (529)",
        529,
    )


async def test_with_fewer_retries_than_three_overloads_the_last_retry_switches(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([overloaded()] * 2)
    backup = ScriptedProvider([text("fine")], model="backup")
    policy = RetryPolicy(max_retries=1, base_delay_s=0.0)
    events = await run(params_with(tmp_path, main, fallback(backup, "backup"), retry=policy))

    assert events[1:3] == [
        Retrying(1, 1, 0.0, "overloaded (529)", 529),
        ModelSwitched("main-model", "backup", "main-model was overloaded 2 times in a row"),
    ]
    assert finished(events).result_text == "fine"


@pytest.mark.parametrize(
    "error",
    [
        RateLimited("rate limited (429)", retry_after=0.0),
        ServerError("server error (500)", status=500),
        ConnectionLost("the connection was cut"),
    ],
    ids=["rate-limited", "server-error", "connection-lost"],
)
async def test_other_retryable_failures_never_switch(tmp_path: Path, error: ModelError) -> None:
    main = ScriptedProvider([Fault(error)] * 3 + [text("the main model answers")])
    backup = ScriptedProvider([], model="backup")
    events = await run(params_with(tmp_path, main, fallback(backup, "backup")))

    assert [type(e).__name__ for e in events][:5] == [
        "RequestStarted",
        "Retrying",
        "Retrying",
        "Retrying",
        "MessageStarted",
    ]
    assert not [e for e in events if isinstance(e, ModelSwitched)]
    assert finished(events).result_text == "the main model answers"
    assert backup.requests == []


async def test_a_failure_between_overloads_starts_the_count_again(tmp_path: Path) -> None:
    busy, broken = overloaded(), Fault(ServerError("server error (500)", status=500))
    main = ScriptedProvider([busy, busy, broken, busy, busy, text("still the main model")])
    backup = ScriptedProvider([], model="backup")
    events = await run(params_with(tmp_path, main, fallback(backup, "backup")))

    assert not [e for e in events if isinstance(e, ModelSwitched)]
    assert [e.status for e in events if isinstance(e, Retrying)] == [529, 529, 500, 529, 529]
    assert finished(events).result_text == "still the main model"


async def test_a_refused_request_ends_the_run_without_switching(tmp_path: Path) -> None:
    from stayer.errors import AuthenticationFailed

    main = ScriptedProvider([Fault(AuthenticationFailed("key refused (401)", status=401))])
    backup = ScriptedProvider([], model="backup")
    events = await run(params_with(tmp_path, main, fallback(backup, "backup")))

    assert [type(e).__name__ for e in events] == ["RequestStarted", "Finished"]
    assert finished(events).terminal is Terminal.MODEL_ERROR


async def test_a_partial_answer_is_withdrawn_before_the_switch(tmp_path: Path) -> None:
    cut = Fault(Overloaded("overloaded_error during the stream", status=529), after_blocks=1)
    main = ScriptedProvider([overloaded(), overloaded(), cut])
    backup = ScriptedProvider([text("whole")], model="backup")
    events = await run(params_with(tmp_path, main, fallback(backup, "backup")))

    at = next(i for i, e in enumerate(events) if isinstance(e, ModelSwitched))
    assert events[at - 1] == Withdrawn("msg_scripted_3", "overloaded_error during the stream")
    assert finished(events).result_text == "whole"


async def test_an_escalated_output_limit_is_capped_to_what_the_fallback_gives(
    tmp_path: Path,
) -> None:
    main = ScriptedProvider([overloaded()] * 3)
    backup = ScriptedProvider(
        [text("cut", stop_reason="max_tokens"), text("whole")], model="backup"
    )
    small = fallback(backup, "backup", max_tokens=8_000, max_output_tokens=16_000)
    params = replace(params_with(tmp_path, main, small), escalated_max_tokens=64_000)
    events = await run(params)

    assert finished(events).result_text == "whole"
    assert [r.max_tokens for r in backup.requests] == [8_000, 16_000]


async def test_the_next_run_starts_from_the_main_model_again(tmp_path: Path) -> None:
    main = ScriptedProvider([*[overloaded()] * 3, text("the main model is back")])
    backup = ScriptedProvider([text("the fallback answers")], model="backup")
    params = params_with(tmp_path, main, fallback(backup, "backup"))

    first = await run(params, strict=False)
    history = (*finished(first).messages, UserMessage.of_text("and again"))
    second = [event async for event in query(params, history)]

    assert finished(first).result_text == "the fallback answers"
    assert finished(second).result_text == "the main model is back"
    assert not [e for e in second if isinstance(e, ModelSwitched)]
    main.assert_done()
    backup.assert_done()


@pytest.mark.parametrize("disabled", [False, True], ids=["fallback", "no-model-fallback"])
async def test_claude_code_no_model_fallback_keeps_the_main_model(
    tmp_path: Path, disabled: bool
) -> None:
    from stayer.session.query import query as session_query

    model = ScriptedProvider([*[overloaded()] * 3, text("answered")])
    env = {"CLAUDE_CODE_NO_MODEL_FALLBACK": "1"} if disabled else {}
    options = QueryOptions(
        cwd=tmp_path,
        provider=model,
        model="main-model",
        fallback_models="backup-model",
        env=env,
        retry=NO_WAIT,
    )
    events = [event async for event in session_query("go", options=options)]

    switches = [e for e in events if isinstance(e, ModelSwitched)]
    retries = [e.attempt for e in events if isinstance(e, Retrying)]
    models = [request.model for request in model.requests]
    if disabled:
        assert (switches, retries) == ([], [1, 2, 3])
        assert models == ["main-model"] * 4
    else:
        reason = "main-model was overloaded 3 times in a row"
        assert switches == [ModelSwitched("main-model", "backup-model", reason)]
        assert retries == [1, 2]
        assert models == ["main-model"] * 3 + ["backup-model"]
    assert finished(events).result_text == "answered"


async def test_the_budget_counts_each_call_at_the_model_that_served_it(tmp_path: Path) -> None:
    """At the main model's prices the second call would pass the budget; at the (free, local)
    fallback's it does not, so the run completes."""
    main = ScriptedProvider([tool_call("Echo", {"text": "one"}, id="t1"), *[overloaded()] * 3])
    local = ScriptedProvider([tool_call("Echo", {"text": "two"}, id="t2"), text("done")])
    one_call = cost_usd("claude-opus-4-5", Usage(input_tokens=100, output_tokens=20))
    params = replace(
        params_with(tmp_path, main, fallback(local, "local-model"), model="claude-opus-4-5"),
        max_budget_usd=one_call * 1.5,
    )
    events = await run(params)

    end = finished(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "done")
    assert end.cost_usd == pytest.approx(one_call)


@pytest.mark.parametrize(
    ("purpose", "expected"), [("main", "run prompt for fb"), ("compact", "own")]
)
def test_a_fallback_gets_the_runs_prompt_naming_it_and_other_calls_keep_their_own(
    tmp_path: Path, purpose: str, expected: str
) -> None:
    params = replace(
        params_with(tmp_path, ScriptedProvider([]), fallback(ScriptedProvider([]), "fb")),
        system_prompt="own",
        model_prompt=lambda model: f"run prompt for {model}",
        purpose=purpose,
    )
    assert request_for(params, 0, (), (), None)[1].system == "own"
    assert request_for(params, 1, (), (), None)[1].system == expected
