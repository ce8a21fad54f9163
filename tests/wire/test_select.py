"""Choosing a provider from a model name and the environment, and what it costs."""

from __future__ import annotations

import pytest

from stayer.errors import ConfigError
from stayer.messages import Usage
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.profiles import DEFAULT_PROFILE, cost_usd, profile_for
from stayer.providers.select import (
    LONG_CONTEXT_BETA,
    ModelChoice,
    choose_model,
    model_configured,
    resolve_model,
    select_provider,
)
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_text, openai_text
from tests.wire.helpers import final_message, make_request

ANTHROPIC_ENV = {"ANTHROPIC_API_KEY": "sk-ant"}
OPENAI_ENV = {"OPENAI_API_KEY": "sk-oai"}
BOTH = {**ANTHROPIC_ENV, **OPENAI_ENV}


@pytest.mark.parametrize(
    ("model", "env", "expected"),
    [
        ("claude-opus-4-5-20251101", BOTH, ("anthropic", "claude-opus-4-5-20251101")),
        ("sonnet", BOTH, ("anthropic", "claude-sonnet-5-5")),
        ("Opus", BOTH, ("anthropic", "claude-opus-5-5")),
        ("best", BOTH, ("anthropic", "claude-opus-5-5")),
        ("fable", BOTH, ("anthropic", "claude-fable-5-2")),
        ("opusplan", BOTH, ("anthropic", "claude-sonnet-5-5")),
        ("haiku", BOTH, ("anthropic", "claude-haiku-5-5")),
        ("gpt-4.1", BOTH, ("openai", "gpt-4.1")),
        ("o3-mini", BOTH, ("openai", "o3-mini")),
        ("o4-mini", BOTH, ("openai", "o4-mini")),
        ("chatgpt-4o-latest", BOTH, ("openai", "chatgpt-4o-latest")),
        ("openai:claude-proxy", BOTH, ("openai", "claude-proxy")),
        ("anthropic:sonnet", BOTH, ("anthropic", "claude-sonnet-5-5")),
        ("anthropic:my-gateway-model", BOTH, ("anthropic", "my-gateway-model")),
        ("llama3:8b", {"OPENAI_BASE_URL": "http://localhost:11434/v1"}, ("openai", "llama3:8b")),
        (None, {**BOTH, "ANTHROPIC_MODEL": "haiku"}, ("anthropic", "claude-haiku-5-5")),
        (None, BOTH, ("anthropic", "claude-opus-5-5")),
        (None, {"ANTHROPIC_BASE_URL": "http://gw"}, ("anthropic", "claude-opus-5-5")),
        (None, OPENAI_ENV, ("openai", "gpt-5.5")),
        (None, {"OPENAI_BASE_URL": "http://x/v1", "OPENAI_MODEL": "qwen3"}, ("openai", "qwen3")),
        ("  ", {"ANTHROPIC_AUTH_TOKEN": "t"}, ("anthropic", "claude-opus-5-5")),
        # A gateway serving another model behind the Anthropic protocol, as Claude Code allows.
        (
            None,
            {"ANTHROPIC_BASE_URL": "http://gw", "ANTHROPIC_MODEL": "glm-4.6"},
            ("anthropic", "glm-4.6"),
        ),
        ("glm-4.6", {"ANTHROPIC_BASE_URL": "http://gw"}, ("anthropic", "glm-4.6")),
        (
            "us.anthropic.claude-sonnet-4-5-v1:0",
            BOTH,
            ("anthropic", "us.anthropic.claude-sonnet-4-5-v1:0"),
        ),
        ("qwen3-coder", OPENAI_ENV, ("openai", "qwen3-coder")),
    ],
)
def test_resolve_model(model: str | None, env: dict[str, str], expected: tuple[str, str]) -> None:
    assert resolve_model(model, env) == expected


def test_an_unknown_name_without_a_local_server_asks_for_a_prefix() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model("mistral-large", BOTH)
    assert str(caught.value) == (
        "cannot tell which provider serves model 'mistral-large': write anthropic:mistral-large "
        "or openai:mistral-large (set OPENAI_BASE_URL for a local server)"
    )


def test_nothing_configured() -> None:
    with pytest.raises(ConfigError, match="no model provider is configured"):
        select_provider(None, {})
    assert not model_configured({})
    assert not model_configured({"ANTHROPIC_API_KEY": "  "})
    assert model_configured({"OPENAI_BASE_URL": "http://localhost:8000/v1"})


def test_missing_anthropic_key_names_the_variable() -> None:
    with pytest.raises(ConfigError) as caught:
        select_provider("sonnet", OPENAI_ENV)
    assert str(caught.value) == (
        "no API key for anthropic: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
        "or ANTHROPIC_BASE_URL for a gateway"
    )


def test_missing_openai_key_names_the_variable() -> None:
    with pytest.raises(ConfigError) as caught:
        select_provider("gpt-4o", ANTHROPIC_ENV)
    assert str(caught.value) == (
        "no API key for openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"
    )


def test_provider_prefix_without_a_model() -> None:
    with pytest.raises(ConfigError, match="names no model"):
        resolve_model("openai:", OPENAI_ENV)


@pytest.mark.parametrize("value", ["soon", "-5", "0"])
def test_bad_api_timeout(value: str) -> None:
    with pytest.raises(ConfigError, match="API_TIMEOUT_MS"):
        select_provider("sonnet", {**ANTHROPIC_ENV, "API_TIMEOUT_MS": value})


async def test_selected_anthropic_provider_uses_the_environment(server: FakeModelServer) -> None:
    env = {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_AUTH_TOKEN": "tok",
        "API_TIMEOUT_MS": "3000",
    }
    provider, choice = select_provider("haiku", env)
    assert isinstance(provider, AnthropicProvider)
    server.enqueue(anthropic_text("hi"))
    try:
        await final_message(provider, make_request(model=choice.model))
    finally:
        await provider.aclose()
    request = server.requests[0]
    assert request.body["model"] == "claude-haiku-5-5"
    assert request.headers["authorization"] == "Bearer tok"
    assert "anthropic-beta" not in request.headers


async def test_selected_local_openai_server_needs_no_key(server: FakeModelServer) -> None:
    provider, choice = select_provider("qwen2.5-coder:7b", {"OPENAI_BASE_URL": server.openai_url})
    assert isinstance(provider, OpenAIChatProvider)
    assert provider.name == "openai"
    server.enqueue(openai_text("ok"))
    try:
        await final_message(provider, make_request(model=choice.model))
    finally:
        await provider.aclose()
    assert server.requests[0].body["model"] == "qwen2.5-coder:7b"
    assert "authorization" not in server.requests[0].headers


LONG = (LONG_CONTEXT_BETA,)


@pytest.mark.parametrize(
    ("model", "env", "expected"),
    [
        (
            "sonnet[1m]",
            BOTH,
            ModelChoice("anthropic", "claude-sonnet-5-5", 1_000_000, 128_000, LONG),
        ),
        (
            "claude-sonnet-4-5[1M]",
            BOTH,
            ModelChoice("anthropic", "claude-sonnet-4-5", 1_000_000, 64_000, LONG),
        ),
        (
            "anthropic:claude-sonnet-4-20250514[1m]",
            BOTH,
            ModelChoice("anthropic", "claude-sonnet-4-20250514", 1_000_000, 64_000, LONG),
        ),
        (
            None,
            {**ANTHROPIC_ENV, "ANTHROPIC_MODEL": "claude-opus-4-6[1m]"},
            ModelChoice("anthropic", "claude-opus-4-6", 1_000_000, 64_000, LONG),
        ),
        ("sonnet", BOTH, ModelChoice("anthropic", "claude-sonnet-5-5", 1_000_000, 128_000)),
        (
            "opusplan",
            BOTH,
            ModelChoice(
                "anthropic", "claude-sonnet-5-5", 1_000_000, 128_000, plan_model="claude-opus-5-5"
            ),
        ),
        # Models stayer does not know get the beta, and the server decides.
        (
            "claude-opus-7[1m]",
            BOTH,
            ModelChoice("anthropic", "claude-opus-7", 1_000_000, 32_000, LONG),
        ),
        (
            "gateway-model[1m]",
            {"ANTHROPIC_BASE_URL": "http://gw"},
            ModelChoice("anthropic", "gateway-model", 1_000_000, 8_192, LONG),
        ),
        (
            "claude-sonnet-4-5[1m]",
            {**BOTH, "CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"},
            ModelChoice("anthropic", "claude-sonnet-4-5", 200_000, 64_000),
        ),
        (  # a switch set to 0 is off, as Claude Code reads it
            "claude-sonnet-4-5[1m]",
            {**BOTH, "CLAUDE_CODE_DISABLE_1M_CONTEXT": "0"},
            ModelChoice("anthropic", "claude-sonnet-4-5", 1_000_000, 64_000, LONG),
        ),
    ],
)
def test_a_1m_suffix_asks_for_the_long_window_with_its_beta(
    model: str | None, env: dict[str, str], expected: ModelChoice
) -> None:
    assert choose_model(model, env) == expected
    assert expected.display_name == expected.model + ("[1m]" if expected.betas else "")


@pytest.mark.parametrize(
    ("model", "complaint"),
    [
        ("claude-haiku-4-5[1m]", "claude-haiku-4-5 has no 1M-token context window"),
        ("gpt-4.1[1m]", "openai models do not have"),
        ("[1m]", "names no model"),
        ("claude-3-5-haiku-latest[1m]", "claude-3-5-haiku-latest has no 1M-token context window"),
    ],
)
def test_a_1m_suffix_on_a_model_without_that_window_is_refused(model: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint):
        choose_model(model, BOTH)


async def test_a_1m_model_is_sent_bare_with_the_beta_header(server: FakeModelServer) -> None:
    provider, choice = select_provider("claude-sonnet-4-5[1m]", {"ANTHROPIC_BASE_URL": server.url})
    server.enqueue(anthropic_text("hi"))
    try:
        await final_message(provider, make_request(model=choice.model, betas=choice.betas))
    finally:
        await provider.aclose()
    request = server.requests[0]
    assert request.body["model"] == "claude-sonnet-4-5"
    assert request.headers["anthropic-beta"] == LONG_CONTEXT_BETA


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-5", "claude-opus-4-5"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("anthropic:claude-opus-4-6", "claude-opus-4-6"),
        ("claude-someday-9", "claude"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4o", "gpt-4o"),
        ("o3-mini", "o3-mini"),
        ("o3", "o3"),
        ("gpt-9-turbo", "gpt"),
    ],
)
def test_profiles_match_by_longest_prefix(model: str, family: str) -> None:
    assert profile_for(model).family == family


def test_unknown_models_get_a_small_free_profile() -> None:
    profile = profile_for("llama3.1:8b")
    assert profile == DEFAULT_PROFILE
    assert not profile.known
    assert profile.context_window <= 32_768
    assert cost_usd("llama3.1:8b", Usage(1_000_000, 1_000_000)) == 0.0
