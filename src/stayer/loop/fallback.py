"""Which model serves a model call: the main model, then the `--fallback-model` chain in order.

A model that declines to answer (`stop_reason: refusal`) has its request asked once of the next
model (`refused`; the decision is `recovery`'s), which then serves the rest of the run too.

When the model serving a call answers overloaded (HTTP 529, `overloaded_error`) three times in
a row, counted across the retries of that call, the call goes at once to the next model of the
chain, which then serves the rest of the run, as in Claude Code 2.1.332. A run always starts
from the main model, so it is tried again on the next prompt. Unlike Claude Code, a fallback is
also taken when fewer retries are allowed than it takes to see three overloads
(`CLAUDE_CODE_MAX_RETRIES=1`): the user named a model to go on with, and ending the run with
it unused would help nobody. Rate limits and other failures never switch: another model would
not help with a rate-limited key, and a switch there would hide a fault the user must fix.
A fallback's calls carry the system prompt that names it (`LoopParams.model_prompt`), so the
model is not told it is another.

Each call is priced on its own at the model that served it (`billed`), and the run keeps a
tally per model (`LoopState.model_usage`, the result's `modelUsage`); `run_cost` is their sum.
Priced one call at a time because a long prompt can change a call's rates (see
`stayer.providers.prices`). Attempts a call abandoned before it switched models are counted
with the model that finally answered: an overloaded model mostly refuses before any token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from stayer.events import ModelSwitched, ModelUsage
from stayer.messages import Message, ModelSpend, ToolResultBlock, ToolSpec, Usage, UserMessage
from stayer.providers.base import ModelRequest, Provider

from .state import LoopParams, LoopState

OVERLOADS_BEFORE_SWITCH = 3
"""Overloaded answers in a row, within one model call, before the next model takes over."""


def main_model(params: LoopParams) -> str:
    """The main model's id for the call about to start (`opusplan` follows the mode)."""
    return params.model if params.live_model is None else params.live_model()


def model_name(params: LoopParams, serving: int) -> str:
    """The id sent for model `serving` (0: the main model, n: the n-th fallback)."""
    return main_model(params) if serving == 0 else params.fallbacks[serving - 1].model


def request_for(
    params: LoopParams,
    serving: int,
    messages: tuple[Message, ...],
    specs: tuple[ToolSpec, ...],
    max_tokens: int | None,
) -> tuple[Provider, ModelRequest]:
    """Who answers the call, and the request for model `serving`; `max_tokens` overrides the
    output limit (an escalation), capped to what a fallback can give."""
    if serving == 0:
        provider, model, betas = params.provider, main_model(params), params.betas
        limit = max_tokens or params.max_tokens
    else:
        fallback = params.fallbacks[serving - 1]
        provider, model, betas = fallback.provider, fallback.model, fallback.betas
        limit = min(max_tokens, fallback.max_output_tokens) if max_tokens else fallback.max_tokens
    system = params.system_prompt
    named = serving or params.live_model is not None  # a fallback, or opusplan's mode switch
    if named and params.model_prompt is not None and params.purpose == "main":
        system = params.model_prompt(model)  # a summary or a tool's question keeps its own
    request = ModelRequest(
        model=model,
        system=system,
        messages=messages,
        tools=specs,
        max_tokens=limit,
        purpose=params.purpose,
        betas=betas,
        **_reasoning(params, messages),
    )
    return provider, request


def _reasoning(params: LoopParams, messages: tuple[Message, ...]) -> dict[str, Any]:
    """Thinking and effort for a call: the run's own calls only; a summary or a tool's question
    has a small output limit of its own, and asks as the model does by default."""
    if params.purpose != "main":
        return {}
    live = params.live_thinking
    thinking = params.thinking if live is None else live(not _after_tools(messages))
    return {"thinking": thinking, "effort": params.effort}


def _after_tools(messages: tuple[Message, ...]) -> bool:
    """Whether the call goes on with an assistant turn: the last message holds tool results."""
    last = messages[-1] if messages else None
    return isinstance(last, UserMessage) and any(
        isinstance(block, ToolResultBlock) for block in last.content
    )


def should_switch(params: LoopParams, serving: int, overloads: int, *, exhausted: bool) -> bool:
    """True when the call goes on with the next model: there is one, and the last `overloads`
    failures in a row were overloads, enough of them or all the retries allow."""
    if serving >= len(params.fallbacks) or overloads == 0:
        return False
    return overloads >= OVERLOADS_BEFORE_SWITCH or exhausted


def switch(params: LoopParams, serving: int, overloads: int) -> ModelSwitched:
    """The event for handing the call from model `serving` to the next one."""
    before = model_name(params, serving)
    times = "once" if overloads == 1 else f"{overloads} times in a row"
    return ModelSwitched(
        from_model=before,
        to_model=model_name(params, serving + 1),
        reason=f"{before} was overloaded {times}",
    )


def refused(params: LoopParams, serving: int) -> ModelSwitched:
    """The event for asking the next model, once, what model `serving` declined to answer."""
    before = model_name(params, serving)
    return ModelSwitched(
        from_model=before,
        to_model=model_name(params, serving + 1),
        reason=f"{before} declined to answer (stop_reason refusal)",
    )


def handed_over(state: LoopState, serving: int) -> LoopState:
    """The state once model `serving` answers the run (it serves the rest of it)."""
    return state if serving == state.serving else replace(state, serving=serving)


def model_label(params: LoopParams, serving: int) -> str:
    """Model `serving` as the result names it: its id, with `[1m]` when the 1M window is on."""
    from stayer.providers.select import display_name

    if serving == 0:
        return display_name(main_model(params), params.betas)
    fallback = params.fallbacks[serving - 1]
    return display_name(fallback.model, fallback.betas)


def _limits(params: LoopParams, serving: int) -> tuple[int, int]:
    """Model `serving`'s context window and the output limit of its calls."""
    from stayer.providers.select import context_window_for

    if serving == 0:
        return params.context_window, params.max_tokens
    fallback = params.fallbacks[serving - 1]
    return context_window_for(fallback.model, fallback.betas), fallback.max_tokens


def billed(params: LoopParams, state: LoopState, serving: int, calls: Sequence[Usage]) -> LoopState:
    """The state with `calls` (the usage of each request, one by one) counted for the run and
    for model `serving`, each priced on its own at that model's list prices."""
    from stayer.providers.profiles import cost_usd

    model = model_name(params, serving)
    cost = sum(cost_usd(model, call) for call in calls)
    return _tallied(state, model_label(params, serving), calls, cost, _limits(params, serving))


def billed_spends(state: LoopState, spends: Sequence[ModelSpend]) -> LoopState:
    """The state with the model calls tools made of their own counted, each under the model
    that answered it (WebFetch's small model has its own `modelUsage` entry), at the cost it
    came with if it was priced already (a subagent's calls)."""
    from stayer.providers.profiles import cost_usd, profile_for

    for spend in spends:
        profile = profile_for(spend.model)
        limits = (profile.context_window, profile.max_output_tokens)
        cost = spend.cost_usd if spend.cost_usd is not None else cost_usd(spend.model, spend.usage)
        state = _tallied(state, spend.model, (spend.usage,), cost, limits)
    return state


def _tallied(
    state: LoopState,
    label: str,
    calls: Sequence[Usage],
    cost: float,
    limits: tuple[int, int],
) -> LoopState:
    """The state with `calls`, which cost `cost`, added to the run and to model `label`."""
    usage = sum(calls, Usage())
    tally = list(state.model_usage)
    for index, entry in enumerate(tally):
        if entry.model == label:
            tally[index] = replace(entry, usage=entry.usage + usage, cost_usd=entry.cost_usd + cost)
            break
    else:
        window, output = limits
        tally.append(ModelUsage(label, usage, cost, window, output))
    return replace(state, usage=state.usage + usage, model_usage=tuple(tally))


def run_cost(state: LoopState) -> float:
    """What the run has cost so far in US dollars, each call at its model's list prices."""
    return sum(entry.cost_usd for entry in state.model_usage)
