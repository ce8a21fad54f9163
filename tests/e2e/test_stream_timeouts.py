"""`stayer -p` against a stalled server: the stream timeouts from the environment end the wait,
the retry line says which one fired and how to tune it, and the retry's answer is printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.e2e.test_waiting_visibly import RETRY_LINE
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
