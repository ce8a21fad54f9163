"""The model table's pure parts: families, the newest model of a list, the two list shapes, and
the line for a model the server does not know."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.providers.model_list import Listed, Listing, parse_page, read_cache, write_cache
from stayer.providers.models import BUILT_IN, family_of, newest_in, not_found_advice

ENV = {"STAYER_CONFIG_DIR": "/nonexistent/stayer"}  # no cache: the table answers


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "sonnet"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "opus"),
        ("claude-3-5-haiku-latest", "haiku"),
        ("anthropic:claude-fable-5-1", "fable"),
        ("gpt-4.1", "gpt"),
        ("openai:gpt-5.5-mini", "gpt"),
        ("llama3:8b", None),
        ("claude-someday", None),
    ],
)
def test_a_model_belongs_to_its_family(model: str, family: str | None) -> None:
    assert family_of(model) == family


def test_the_newest_plain_model_of_the_family_wins_never_one_below_the_table() -> None:
    listing = Listing(
        0.0,
        (
            Listed("gpt-5.5-pro", 300.0),  # a variant
            Listed("gpt-4.5", 250.0),  # newer release date, older model than the table's
            Listed("gpt-5.6", 200.0),
            Listed("gpt-5.5", 100.0),
        ),
    )
    assert newest_in("gpt", listing) == "gpt-5.6"
    assert newest_in("fable", listing) == BUILT_IN["fable"]  # none listed


def test_both_list_shapes_are_read_and_anthropics_pages_are_followed() -> None:
    anthropic = {
        "data": [
            {
                "type": "model",
                "id": "claude-opus-5-5",
                "created_at": "2026-10-20T00:00:00Z",
                "max_input_tokens": 0,  # a placeholder, not a limit
                "max_tokens": 0,
            }
        ],
        "has_more": True,
        "last_id": "claude-opus-5-5",
    }
    models, cursor = parse_page("anthropic", anthropic)
    assert (models, cursor) == ([Listed("claude-opus-5-5", 1_792_454_400.0)], "claude-opus-5-5")
    openai = {"object": "list", "data": [{"id": "gpt-5.5", "created": 1_785_542_400}]}
    assert parse_page("openai", openai) == ([Listed("gpt-5.5", 1_785_542_400.0)], None)
    with pytest.raises(ValueError, match="not a model list"):
        parse_page("openai", {"error": "nope"})


@pytest.mark.parametrize(
    ("model", "provider", "line"),
    [
        (
            "claude-sonnet-4-5-20250929",
            "anthropic",
            "model claude-sonnet-4-5-20250929 was not found (retired on 2026-11-30); "
            "use claude-sonnet-5-5 or --model sonnet",
        ),
        (
            "claude-opus-4-1",
            "anthropic",
            "model claude-opus-4-1 was not found; use claude-opus-5-5 or --model opus",
        ),
        ("gpt-4", "openai", "model gpt-4 was not found; use gpt-5.5"),
        ("claude-opus-5-5", "anthropic", None),  # the current model: something else is off
        ("my-gateway-model", "anthropic", None),
    ],
)
def test_a_model_not_found_names_the_current_one_of_its_family(
    model: str, provider: str, line: str | None
) -> None:
    assert not_found_advice(model, provider, ENV) == line


def test_a_cache_read_once_is_read_again_when_a_refresh_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    first = Listing(1.0, (Listed("claude-sonnet-5-5", 1.0),))
    second = Listing(2.0, (Listed("claude-sonnet-5-7", 2.0),))
    write_cache(path, first)
    assert read_cache(path) == read_cache(path) == first
    write_cache(path, second)  # same size, new file
    assert read_cache(path) == second
    path.unlink()
    assert read_cache(path) is None
