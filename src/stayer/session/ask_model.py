"""A tool's own question to a model (`ToolContext.ask_model`), asked through the run's provider.

WebFetch asks a small, fast model about the page it fetched. The question is one model call
with no tools and no history, sent by the loop's own call path (`stream_turn`), so it gets the
run's retry policy, its timeouts and its connection, and is named on the wire by its purpose
(`x-stayer-purpose: webfetch`).

Which model answers (`small_model`), as Claude Code picks its small fast model:

1. ``ANTHROPIC_SMALL_FAST_MODEL``, else ``ANTHROPIC_DEFAULT_HAIKU_MODEL``, when set: the user
   named it (a gateway's name for Haiku, say);
2. on Anthropic's own API (an Anthropic run with no ``ANTHROPIC_BASE_URL``, or one that points
   at api.anthropic.com), the current Haiku (what ``--model haiku`` names, the model list
   included);
3. anywhere else (an OpenAI-compatible server, a gateway, a local server, a provider the caller
   passed in) the run's own model: it is the one model known to be served there.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec.structs import replace

from stayer.errors import BadResponse
from stayer.loop.fallback import model_name
from stayer.loop.state import LoopParams
from stayer.loop.turn import TurnResult, stream_turn
from stayer.messages import ModelSpend, UserMessage
from stayer.providers.models import BUILT_IN, current_model
from stayer.providers.select import LONG_CONTEXT_BETA
from stayer.tools.base import AskModel, ModelAnswer

SMALL_MODEL_VARIABLES = ("ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL")
SMALL_FAST_MODEL = BUILT_IN["haiku"]
"""The Haiku asked on Anthropic's API when no model list says a newer one is current: one
place (the `haiku` alias, `models.current_model`) says which is current."""
_ANTHROPIC_API_HOST = "api.anthropic.com"


def small_model(env: Mapping[str, str], *, provider: str, main_model: str, injected: bool) -> str:
    """The model that answers tools' own questions in a run of `main_model` (see above)."""
    for variable in SMALL_MODEL_VARIABLES:
        named = env.get(variable, "").strip()
        if named:
            return named
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    official = not base_url or _ANTHROPIC_API_HOST in base_url.lower()
    if provider == "anthropic" and official and not injected:
        return current_model("haiku", env)
    return main_model


def model_asker(params: LoopParams, model: str) -> AskModel:
    """An `AskModel` that sends each question to `model` through the run's provider."""
    same = model == params.model
    asking = replace(
        params,
        model=model,
        live_model=None,  # opusplan's switch is the main model's: the asker's model is `model`
        # Another model has other limits: the main model's fallbacks and 1M window stay its own.
        fallbacks=params.fallbacks if same else (),
        betas=params.betas if same else tuple(b for b in params.betas if b != LONG_CONTEXT_BETA),
        escalated_max_tokens=None,
        observe=None,
    )

    async def ask(prompt: str, *, system: str, purpose: str, max_tokens: int = 1024) -> ModelAnswer:
        call = replace(asking, system_prompt=system, purpose=purpose, max_tokens=max_tokens)
        turn = TurnResult()
        async for _event in stream_turn(call, (UserMessage.of_text(prompt),), (), turn):
            pass  # the answer is wanted whole; its deltas and retries are the tool's business
        if turn.message is None:
            raise BadResponse(f"the {purpose} model call ended without an answer")
        spent = ModelSpend(model_name(call, turn.serving), turn.message.usage)
        return ModelAnswer(turn.message.text, spent)

    return ask
