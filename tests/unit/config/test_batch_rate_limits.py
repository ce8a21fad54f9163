"""A batch's rate limits from the settings files (`batch.rateLimits`) and its flags: merged
provider by provider across the files, the flags over them, and one line for a bad value."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from stayer.batch.config import RateLimit
from stayer.batch.rate_limits import batch_rate_limits
from stayer.errors import ConfigError


def _settings(project: Path) -> Path:
    """The project's stayer settings file, its folder made (`project` comes from conftest)."""
    (project / ".stayer").mkdir(exist_ok=True)
    return project / ".stayer" / "settings.json"


def limits(**by_provider: Mapping[str, object]) -> str:
    return json.dumps({"batch": {"rateLimits": by_provider}})


def test_no_settings_and_no_flags_mean_no_limit(project: Path, home: dict[str, str]) -> None:
    assert batch_rate_limits(project, home) == {}


def test_the_files_merge_provider_by_provider_the_later_winning(
    project: Path, home: dict[str, str]
) -> None:
    user = Path(home["STAYER_CONFIG_DIR"]) / "settings.json"
    user.write_text(
        limits(anthropic={"requestsPerMinute": 50, "tokensPerMinute": 80000}, openai={})
    )
    _settings(project).write_text(
        limits(openai={"requestsPerMinute": 500}, **{"*": {"tokensPerMinute": 1000}})
    )
    assert batch_rate_limits(project, home) == {
        "anthropic": RateLimit(50, 80000),
        "openai": RateLimit(500, None),
        "*": RateLimit(None, 1000),
    }


def test_a_flag_sets_its_measure_for_every_provider_over_the_settings(
    project: Path, home: dict[str, str]
) -> None:
    _settings(project).write_text(
        limits(anthropic={"requestsPerMinute": 50, "tokensPerMinute": 80000})
    )
    got = batch_rate_limits(project, home, requests_per_minute=20)
    assert got == {"anthropic": RateLimit(20, 80000), "*": RateLimit(20, None)}
    got = batch_rate_limits(project, home, tokens_per_minute=9000, requests_per_minute=5)
    assert got == {"anthropic": RateLimit(5, 9000), "*": RateLimit(5, 9000)}


def test_inline_settings_count_as_the_last_file(project: Path, home: dict[str, str]) -> None:
    _settings(project).write_text(limits(anthropic={"requestsPerMinute": 50}))
    inline = limits(anthropic={"requestsPerMinute": 7})
    assert batch_rate_limits(project, home, flag_settings=inline) == {
        "anthropic": RateLimit(7, None)
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            limits(antropic={"requestsPerMinute": 5}),
            "1:11: batch: no provider is called 'antropic' in rateLimits; name anthropic, "
            'openai, or * for every provider (got {"rateLimits": {"antropic": '
            '{"requestsPerMinute": 5}}})',
        ),
        (
            limits(anthropic={"requestPerMinute": 5}),
            "1:40: batch.rateLimits.anthropic: object contains unknown field `requestPerMinute` "
            '(got {"requestPerMinute": 5})',
        ),
        (
            limits(anthropic={"requestsPerMinute": 0}),
            "1:62: batch.rateLimits.anthropic.requestsPerMinute: input should be greater than 0 "
            "(got 0)",
        ),
        (
            limits(anthropic={"tokensPerMinute": "80000"}),
            "1:60: batch.rateLimits.anthropic.tokensPerMinute: input should be a valid number "
            '(got "80000")',
        ),
        (
            json.dumps({"batch": {"ratelimits": {}}}),
            '1:11: batch: object contains unknown field `ratelimits` (got {"ratelimits": {}})',
        ),
    ],
)
def test_a_bad_value_stops_the_batch_with_one_line_naming_its_place(
    project: Path, home: dict[str, str], text: str, message: str
) -> None:
    settings = _settings(project)
    settings.write_text(text)
    with pytest.raises(ConfigError) as caught:
        batch_rate_limits(project, home)
    assert str(caught.value) == (
        f"{settings}:{message}; fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on "
        "without it"
    )
