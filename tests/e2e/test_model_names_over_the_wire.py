"""Model names over the wire: each alias, the default, the variables that rename them, and the
provider's model list (cached for a day) as the real CLI sends them to the fake server."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from stayer.providers.model_list import cache_path, fetch_listing, list_endpoint
from tests.e2e.cli import Completed, stayer
from tests.fakes.model_server import FakeModelServer, ListedModel
from tests.fakes.sse import anthropic_error, reply


def run(server: FakeModelServer, tmp_path: Path, *args: str, **env: str) -> tuple[Completed, str]:
    """One `stayer -p` run with its own stayer folder; the model its request named."""
    config = tmp_path / "config"
    server.enqueue(reply("ok"))
    done = stayer(
        "-p", "hi", *args, cwd=tmp_path,
        env={**server.env(), "STAYER_CONFIG_DIR": str(config), **env},
    )  # fmt: skip
    assert done.status == 0, done.stderr
    return done, server.requests[-1].model


def cache_file(server: FakeModelServer, tmp_path: Path, provider: str = "anthropic") -> Path:
    env = {**server.env(provider), "STAYER_CONFIG_DIR": str(tmp_path / "config")}  # type: ignore[arg-type]
    return cache_path(list_endpoint(provider, env), env)


def write_cache(path: Path, fetched_at: float, *models: tuple[str, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    listed = [{"id": model, "created": created} for model, created in models]
    path.write_text(json.dumps({"fetched_at": fetched_at, "models": listed}))


@pytest.mark.parametrize(
    ("flags", "sent"),
    [
        ((), "claude-opus-5-5"),
        (("--model", "sonnet"), "claude-sonnet-5-5"),
        (("--model", "sonnet[1m]"), "claude-sonnet-5-5"),
        (("--model", "opus"), "claude-opus-5-5"),
        (("--model", "opus[1m]"), "claude-opus-5-5"),
        (("--model", "best"), "claude-opus-5-5"),
        (("--model", "haiku"), "claude-haiku-5-5"),
        (("--model", "fable"), "claude-fable-5-2"),
        (("--model", "opusplan"), "claude-sonnet-5-5"),
        (("--model", "opusplan", "--permission-mode", "plan"), "claude-opus-5-5"),
        (("--model", "claude-sonnet-4-5-20250929"), "claude-sonnet-4-5-20250929"),
        (("--model", "Sonnet"), "claude-sonnet-5-5"),
    ],
)
def test_each_alias_sends_todays_model(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], sent: str
) -> None:
    assert run(server, tmp_path, *flags)[1] == sent


def test_openai_default_is_todays_general_model(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("ok"))
    done = stayer(
        "-p", "hi", cwd=tmp_path,
        env={**server.env("openai"), "STAYER_CONFIG_DIR": str(tmp_path / "config")},
    )  # fmt: skip
    assert done.status == 0, done.stderr
    assert server.requests[-1].model == "gpt-5.5"


@pytest.mark.parametrize(
    ("flags", "env", "sent"),
    [
        ((), {"ANTHROPIC_MODEL": "haiku"}, "claude-haiku-5-5"),
        (("--model", "sonnet"), {"ANTHROPIC_MODEL": "haiku"}, "claude-sonnet-5-5"),
        ((), {"ANTHROPIC_DEFAULT_OPUS_MODEL": "gw-opus"}, "gw-opus"),
        (("--model", "opus"), {"ANTHROPIC_DEFAULT_OPUS_MODEL": "gw-opus"}, "gw-opus"),
        (("--model", "sonnet"), {"ANTHROPIC_DEFAULT_SONNET_MODEL": "gw-sonnet"}, "gw-sonnet"),
        (("--model", "haiku"), {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "gw-haiku"}, "gw-haiku"),
        (
            ("--model", "opusplan"),
            {"ANTHROPIC_DEFAULT_SONNET_MODEL": "gw-sonnet", "ANTHROPIC_DEFAULT_OPUS_MODEL": "o"},
            "gw-sonnet",
        ),
        ((), {"ANTHROPIC_MODEL": "sonnet", "ANTHROPIC_DEFAULT_SONNET_MODEL": "gw-s"}, "gw-s"),
    ],
)
def test_the_variables_name_the_model_as_in_claude_code(
    server: FakeModelServer,
    tmp_path: Path,
    flags: tuple[str, ...],
    env: dict[str, str],
    sent: str,
) -> None:
    assert run(server, tmp_path, *flags, **env)[1] == sent


def test_the_flag_then_the_variable_then_the_settings_name_the_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    settings = json.dumps({"model": "fable"})
    assert run(server, tmp_path, "--settings", settings)[1] == "claude-fable-5-2"
    assert run(server, tmp_path, "--settings", settings, ANTHROPIC_MODEL="haiku")[1] == (
        "claude-haiku-5-5"
    )
    flagged = run(server, tmp_path, "--settings", settings, "--model", "opus", ANTHROPIC_MODEL="x")
    assert flagged[1] == "claude-opus-5-5"


def test_a_missing_cache_is_fetched_for_the_next_run_which_uses_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    newer = ListedModel("claude-sonnet-5-7", "2026-11-25T00:00:00Z", 800_000, 96_000)
    server.models = (newer, *server.models)
    assert run(server, tmp_path, "--model", "sonnet")[1] == "claude-sonnet-5-5"  # never waits
    path = cache_file(server, tmp_path)
    cached = json.loads(path.read_text())
    assert cached["models"][0] == {
        "id": "claude-sonnet-5-7",
        "created": 1_795_564_800.0,
        "max_input_tokens": 800_000,
        "max_tokens": 96_000,
    }
    assert time.time() - cached["fetched_at"] < 60
    assert [r.query for r in server.list_requests] == [{"limit": "1000"}]

    done, sent = run(server, tmp_path, "--model", "sonnet", "--output-format", "json")
    assert sent == "claude-sonnet-5-7"
    assert len(server.list_requests) == 1  # a fresh cache is not fetched again
    usage = json.loads(done.stdout)["modelUsage"]["claude-sonnet-5-7"]
    assert usage["contextWindow"] == 800_000  # the list's limit, not the table's 1M


def test_a_fresh_cache_resolves_by_release_time_never_below_the_table(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = cache_file(server, tmp_path)
    now = time.time()
    write_cache(
        path,
        now,
        ("claude-opus-4-8", now),  # released last but older than the table's choice
        ("claude-opus-6-0-20261201", now - 10),
        ("claude-opus-5-5", now - 100),
        ("claude-haiku-4-5", now),
    )
    assert run(server, tmp_path, "--model", "opus")[1] == "claude-opus-6-0-20261201"
    assert run(server, tmp_path)[1] == "claude-opus-6-0-20261201"
    assert run(server, tmp_path, "--model", "haiku")[1] == "claude-haiku-5-5"
    assert server.list_requests == []


def test_a_stale_cache_is_not_used_and_is_refreshed(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = cache_file(server, tmp_path)
    write_cache(path, time.time() - 2 * 86_400, ("claude-opus-9-9", time.time()))
    assert run(server, tmp_path, "--model", "opus")[1] == "claude-opus-5-5"
    assert len(server.list_requests) == 1
    assert "claude-opus-9-9" not in path.read_text()


@pytest.mark.parametrize(
    "garbage",
    [
        "{not json",
        '{"models": "x"}',
        "[]",
        "",
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's recursion limit
        '{"fetched_at": 1' + "0" * 400 + ', "models": []}',  # past a float's range
        '{"fetched_at": 1, "models": [{"id": "m", "created": 1' + "0" * 400 + "}]}",
    ],
)
def test_a_garbage_cache_falls_back_to_the_table_quietly(
    server: FakeModelServer, tmp_path: Path, garbage: str
) -> None:
    path = cache_file(server, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(garbage)
    done, sent = run(server, tmp_path, "--model", "sonnet")
    assert (sent, done.stderr) == ("claude-sonnet-5-5", "")
    assert json.loads(path.read_text())["models"]  # rewritten whole by the refresh


def test_an_unreadable_cache_warns_in_one_line_under_debug(
    server: FakeModelServer, tmp_path: Path
) -> None:
    if os.geteuid() == 0:
        path = cache_file(server, tmp_path)
        path.mkdir(parents=True)  # a folder where the file should be: root reads any file
    else:
        path = cache_file(server, tmp_path)
        write_cache(path, time.time(), ("claude-opus-9-9", time.time()))
        path.chmod(0)
    done, sent = run(server, tmp_path, "--model", "opus", STAYER_DEBUG="1")
    assert sent == "claude-opus-5-5"
    lines = done.stderr.splitlines()
    assert len([line for line in lines if "could not be read" in line]) == 1, lines


def test_a_failed_refresh_is_silent_and_never_fails_the_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.list_status = 500
    done, sent = run(server, tmp_path, "--model", "haiku")
    assert (done.stderr, sent) == ("", "claude-haiku-5-5")
    assert not cache_file(server, tmp_path).exists()
    debug, _ = run(server, tmp_path, "--model", "haiku", STAYER_DEBUG="1")
    assert debug.stderr == (
        f"stayer: the model list at {server.url}/v1/models was not refreshed: HTTP 500\n"
    )


def test_a_server_without_a_list_is_asked_again_only_the_next_day(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.list_status = 404
    assert run(server, tmp_path, "--model", "sonnet")[1] == "claude-sonnet-5-5"
    assert json.loads(cache_file(server, tmp_path).read_text())["models"] == []
    assert run(server, tmp_path, "--model", "sonnet")[1] == "claude-sonnet-5-5"
    assert len(server.list_requests) == 1


def test_openai_default_follows_the_list(server: FakeModelServer, tmp_path: Path) -> None:
    server.models = (
        ListedModel("gpt-5.5-pro", "2026-11-30T00:00:00Z"),  # a variant, not the general model
        ListedModel("gpt-5.6", "2026-11-20T00:00:00Z"),
        *server.models,
    )
    env = {**server.env("openai"), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
    server.enqueue(reply("ok"), reply("ok"))
    first = stayer("-p", "hi", cwd=tmp_path, env=env)
    second = stayer("-p", "hi", cwd=tmp_path, env=env)
    assert (first.status, second.status) == (0, 0), first.stderr + second.stderr
    assert [r.model for r in server.requests] == ["gpt-5.5", "gpt-5.6"]
    assert server.list_requests[0].headers["authorization"] == "Bearer test-key"


def test_a_retired_model_is_answered_with_its_replacement(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(anthropic_error(404, "not_found_error", "model: claude-sonnet-4-5"))
    done = stayer(
        "-p", "hi", "--model", "claude-sonnet-4-5", cwd=tmp_path,
        env={**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")},
    )  # fmt: skip
    assert done.status == 1
    assert done.stdout == ""
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "model claude-sonnet-4-5 was not found (retired on 2026-11-30); "
            "use claude-sonnet-5-5 or --model sonnet"
        )
    ), done.stderr


def test_a_404_that_names_no_model_is_not_blamed_on_the_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    # a base URL with a wrong path answers not_found_error about the path, not the model:
    # telling the user to switch models would send them the wrong way
    server.enqueue(anthropic_error(404, "not_found_error", "Not Found"))
    done = stayer(
        "-p", "hi", "--model", "claude-sonnet-4-6", cwd=tmp_path,
        env={**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")},
    )  # fmt: skip
    assert done.status == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "use claude-sonnet-5-5" not in last, done.stderr
    assert "ANTHROPIC_BASE_URL" in last, done.stderr


def test_anthropics_list_is_read_page_after_page(server: FakeModelServer) -> None:
    server.models = tuple(
        ListedModel(f"claude-sonnet-5-{i}", "2026-01-01T00:00:00Z") for i in range(1_500)
    )
    listing = fetch_listing(list_endpoint("anthropic", server.env()))
    assert len(listing.models) == 1_500
    assert [r.query for r in server.list_requests] == [
        {"limit": "1000"},
        {"limit": "1000", "after_id": "claude-sonnet-5-999"},
    ]
    assert server.list_requests[0].headers["x-api-key"] == "test-key"


def test_no_list_is_fetched_when_nonessential_traffic_is_off(
    server: FakeModelServer, tmp_path: Path
) -> None:
    _, sent = run(
        server, tmp_path, "--model", "sonnet", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"
    )
    assert (sent, server.list_requests) == ("claude-sonnet-5-5", [])
    assert not cache_file(server, tmp_path).exists()


def test_a_listed_limit_no_model_has_leaves_the_table_s(
    server: FakeModelServer, tmp_path: Path
) -> None:
    absurd = ListedModel("claude-sonnet-5-7", "2026-11-25T00:00:00Z", 10**12, 10**12)
    server.models = (absurd, *server.models)
    run(server, tmp_path, "--model", "sonnet")  # fetches the list for the next run

    done, sent = run(server, tmp_path, "--model", "sonnet", "--output-format", "json")
    assert sent == "claude-sonnet-5-7"
    usage = json.loads(done.stdout)["modelUsage"]["claude-sonnet-5-7"]
    assert usage["contextWindow"] == 1_000_000  # the family's figure, not a trillion
