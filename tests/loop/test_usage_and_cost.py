"""The run's usage and cost: every call priced on its own at the model that served it, so a
long prompt pays its tier for that call only, and `Finished` carries one entry per model."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from stayer.events import ModelUsage, Terminal
from stayer.messages import Usage
from stayer.providers.profiles import cost_usd
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.providers.select import LONG_CONTEXT_BETA
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo

SHORT = Usage(input_tokens=150_000, output_tokens=1_000, cache_read_input_tokens=20_000)
LONG = Usage(input_tokens=10_000, output_tokens=2_000, cache_read_input_tokens=240_000)


async def test_each_call_pays_its_own_tier_and_the_model_is_named_with_its_window(
    tmp_path: Path,
) -> None:
    call = tool_call("Echo", {"text": "one"}, id="t1")
    model = ScriptedProvider(
        [replace(call, usage=SHORT), Reply(text("done").content, usage=LONG)],
        model="claude-sonnet-4-5",
    )
    params = replace(
        make_params(model, [Echo()], tmp_path),
        model="claude-sonnet-4-5",
        betas=(LONG_CONTEXT_BETA,),
        context_window=1_000_000,
    )
    end = finished(await run(params))

    assert end.terminal is Terminal.COMPLETED
    short, long = cost_usd("claude-sonnet-4-5", SHORT), cost_usd("claude-sonnet-4-5", LONG)
    assert SHORT.total_input_tokens < 200_000 < LONG.total_input_tokens
    assert end.model_usage == (
        ModelUsage("claude-sonnet-4-5[1m]", SHORT + LONG, short + long, 1_000_000, 32_000),
    )
    assert end.usage == SHORT + LONG
    assert end.cost_usd == short + long
    # Priced as one sum, all of it would have paid the long-context rates.
    assert end.cost_usd < cost_usd("claude-sonnet-4-5", SHORT + LONG)


async def test_a_model_with_no_known_price_is_listed_at_no_cost(tmp_path: Path) -> None:
    model = ScriptedProvider([text("hi")])
    end = finished(await run(make_params(model, [], tmp_path)))
    assert end.model_usage == (
        ModelUsage("scripted", Usage(input_tokens=100, output_tokens=20), 0.0, 200_000, 32_000),
    )
    assert end.cost_usd == 0.0
