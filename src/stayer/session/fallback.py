"""The fallback chain of a run (`--fallback-model`, `QueryOptions.fallback_models`), resolved
before any request is sent.

Each name is resolved as `--model` is (aliases, `[1m]`, `anthropic:` and `openai:` prefixes),
and may be served by another provider than the main model (an `openai:gpt-4.1` behind a Claude
model): its client is built from the environment, and one missing key is a one-line error up
front, not a surprise in the middle of an overload. With CLAUDE_CODE_NO_MODEL_FALLBACK set the
names are still checked, but the run never switches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from stayer.errors import ConfigError
from stayer.loop.state import FallbackModel
from stayer.providers.base import Provider
from stayer.providers.select import ModelChoice
from stayer.switches import env_flag

NO_FALLBACK_VARIABLE = "CLAUDE_CODE_NO_MODEL_FALLBACK"


def fallback_names(given: str | Sequence[str]) -> list[str]:
    """The chain's model names in order: each item may itself be a comma-separated chain."""
    items = (given,) if isinstance(given, str) else given
    names = [name.strip() for item in items for name in item.split(",")]
    names = [name for name in names if name]
    if items and not names:
        raise ConfigError(
            "--fallback-model needs a model name, such as --fallback-model sonnet, "
            "or a chain such as --fallback-model opus,sonnet"
        )
    return names


def _choose(name: str, env: Mapping[str, str], injected: Provider | None) -> ModelChoice:
    if injected is not None:  # the caller's client serves every model, as for the main one
        from stayer.providers.profiles import profile_for

        profile = profile_for(name)
        return ModelChoice(injected.name, name, profile.context_window, profile.max_output_tokens)
    from stayer.providers.select import choose_model

    try:
        return choose_model(name, env)
    except ConfigError as error:
        raise ConfigError(f"--fallback-model: {error}") from None


def _choices(
    names: list[str], env: Mapping[str, str], main: ModelChoice, injected: Provider | None
) -> list[ModelChoice]:
    seen: set[tuple[str, str]] = set()
    choices = []
    for name in names:
        choice = _choose(name, env, injected)
        key = (choice.provider, choice.model)
        if key == (main.provider, main.model):
            raise ConfigError(
                f"--fallback-model {name} is the main model itself; name another model to "
                "switch to when it is overloaded"
            )
        if key in seen:
            raise ConfigError(f"--fallback-model names {choice.model} twice; list each model once")
        seen.add(key)
        choices.append(choice)
    return choices


def fallback_models(
    given: str | Sequence[str],
    env: Mapping[str, str],
    *,
    main: ModelChoice,
    provider: Provider,
    injected: bool,
    betas: tuple[str, ...],
    max_tokens: Callable[[int], int],
) -> tuple[FallbackModel, ...]:
    """The run's fallback models, in order; raises `ConfigError` for a name that is unusable.

    `provider` serves the main model; a fallback of the same provider shares its client.
    `betas` are the user's, sent to every model; `max_tokens` gives a model's output limit
    per call from its ceiling, as for the main model."""
    choices = _choices(fallback_names(given), env, main, provider if injected else None)
    if env_flag(env, NO_FALLBACK_VARIABLE):
        return ()
    clients: dict[str, Provider] = {main.provider: provider}
    chain = []
    for choice in choices:
        client = clients.get(choice.provider)
        if client is None:
            client = clients[choice.provider] = _client(choice, env)
        chain.append(
            FallbackModel(
                provider=client,
                model=choice.model,
                max_tokens=max_tokens(choice.max_output_tokens),
                max_output_tokens=choice.max_output_tokens,
                betas=(*choice.betas, *betas),
            )
        )
    return tuple(chain)


def _client(choice: ModelChoice, env: Mapping[str, str]) -> Provider:
    from stayer.providers.select import provider_for

    try:
        return provider_for(choice, env)
    except ConfigError as error:
        raise ConfigError(f"--fallback-model {choice.display_name}: {error}") from None
