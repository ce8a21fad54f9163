"""`stayer -p` against a stalled or absent server: the stream timeouts from the environment end
the wait, the retry line says which one fired and how to tune it, and the retry's answer is
printed; a server that refuses the very first connection is named as a setting to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.e2e.test_waiting_visibly import RETRY_LINE, closed_port
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Stream, anthropic_text, reply

STALL_S = 30.0
"""Far longer than the test may take: only the timeout can end the wait."""
PARTIAL = anthropic_text("half an answer and then")
ADVICE = (
    "so the server may be stalled; try again, or raise {} if the model {} (0 turns the timeout off)"
)


@pytest.mark.parametrize(
    ("variable", "stall", "reason"),
    [
        pytest.param(
            "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS",
            anthropic_text("x").stalled(before_headers=STALL_S),
            "the first-byte timeout fired: {url} did not start its answer within 0.3 s of the "
            "request (not even response headers), "
            + ADVICE.format("CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS", "needs longer to start"),
            id="first-byte",
        ),
        pytest.param(
            "CLAUDE_STREAM_IDLE_TIMEOUT_MS",
            PARTIAL.stalled(at=PARTIAL.index_of('"then"'), seconds=STALL_S),
            "the idle timeout fired: the stream from {url} made no progress for 0.3 s (no event "
            "at all), " + ADVICE.format("CLAUDE_STREAM_IDLE_TIMEOUT_MS", "pauses longer"),
            id="idle",
        ),
    ],
)
def test_a_stalled_stream_is_retried_after_the_timeout_the_environment_sets(
    server: FakeModelServer, tmp_path: Path, variable: str, stall: Stream, reason: str
) -> None:
    server.enqueue(stall, reply("the whole answer"))
    done = stayer("-p", "hi", cwd=tmp_path, env={**server.env(), variable: "300"}, timeout=20)

    assert (done.status, done.stdout) == (0, "the whole answer\n"), done.stderr
    (line,) = done.stderr.splitlines()
    retry = RETRY_LINE.match(line)
    assert retry is not None, line
    assert (retry.group(2), retry.group(3)) == ("1", "10")
    assert retry.group(4) == reason.format(url=f"{server.url}/v1/messages")
    assert len(server.requests) == 2


def test_a_bad_stream_timeout_is_one_line_before_any_request(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = {**server.env(), "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "5 minutes"}
    done = stayer("-p", "hi", cwd=tmp_path, env=env)

    assert (done.status, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        "stayer: CLAUDE_STREAM_IDLE_TIMEOUT_MS must be a number of milliseconds (0 turns the "
        "timeout off), not '5 minutes'"
    ]
    assert server.requests == []


def test_headers_and_then_nothing_are_retried_at_the_first_byte_limit(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """The stall a dead model behind a live proxy makes: headers, then silence."""
    server.enqueue(anthropic_text("x").stalled(at=0, seconds=STALL_S), reply("the answer"))
    # A second: a loaded machine must not stall the healthy retry past it too.
    env = {**server.env(), "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS": "1000"}
    done = stayer("-p", "hi", cwd=tmp_path, env=env, timeout=20)

    assert (done.status, done.stdout) == (0, "the answer\n"), done.stderr
    (line,) = done.stderr.splitlines()
    retry = RETRY_LINE.match(line)
    assert retry is not None, line
    assert (retry.group(2), retry.group(3)) == ("1", "10")
    assert retry.group(4) == (
        f"the first-byte timeout fired: {server.url}/v1/messages did not start its answer "
        "within 1 s of the request (response headers, then no event), "
        + ADVICE.format("CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS", "needs longer to start")
    )


@pytest.mark.parametrize(
    ("variable", "path", "model"),
    [("ANTHROPIC_BASE_URL", "", "sonnet"), ("OPENAI_BASE_URL", "/v1", "openai:local-model")],
)
def test_a_server_that_refuses_the_first_request_is_a_setting_to_fix(
    tmp_path: Path, variable: str, path: str, model: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}{path}"
    done = stayer("-p", "hi", "--model", model, cwd=tmp_path, env={variable: url}, timeout=20)

    assert (done.status, done.stdout) == (1, "")
    *retries, final = done.stderr.splitlines()
    parsed = [RETRY_LINE.match(line) for line in retries]
    assert [(m.group(2), m.group(3)) for m in parsed if m] == [("1", "2"), ("2", "2")], retries
    assert sum(float(m.group(1)) for m in parsed if m) < 3  # a few seconds, not minutes
    assert final == (
        f"stayer: model_error: could not connect to {url}: the connection was refused and no "
        f"server has answered there since stayer started; check {variable}, or start the server"
    )
