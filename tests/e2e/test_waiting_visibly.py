"""A person waiting on `stayer -p` sees each retry, and a server speaking something else is
given up on quickly with one line that says so."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Chunk,
    Frame,
    RawBytes,
    Stream,
    Text,
    WireProtocol,
    anthropic_stream,
    garbage_frame,
    openai_chunk,
    openai_stream,
    reply,
)

RETRY_LINE = re.compile(r"^stayer: retrying in (\d+(?:\.\d)?) s \(attempt (\d+)/(\d+)\): (.+)$")


def closed_port() -> int:
    """A loopback port nobody listens on: connecting to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_each_retry_is_shown_on_stderr_with_attempt_delay_and_reason(
    tmp_path: Path, output_format: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    env = {"ANTHROPIC_BASE_URL": url, "CLAUDE_CODE_MAX_RETRIES": "2"}
    done = stayer("-p", "hi", "--output-format", output_format, cwd=tmp_path, env=env)

    assert done.status == 1
    lines = done.stderr.splitlines()
    if output_format == "text":
        *retries, final = lines
        assert final.startswith(f"stayer: model_error: could not connect to {url}")
        assert done.stdout == ""
    else:
        retries, (result,) = lines, done.json_lines()
        assert result["result"].startswith(f"could not connect to {url}")
    parsed = [RETRY_LINE.match(line) for line in retries]
    assert all(parsed), retries
    assert [(m.group(2), m.group(3)) for m in parsed if m] == [("1", "2"), ("2", "2")]
    for match in parsed:
        assert match is not None
        assert 0 < float(match.group(1)) < 5
        assert match.group(4).startswith(f"could not connect to {url}")


def test_stream_json_reports_retries_in_band_only(tmp_path: Path) -> None:
    env = {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}",
        "CLAUDE_CODE_MAX_RETRIES": "1",
    }
    done = stayer("-p", "hi", "--output-format", "stream-json", "--verbose", cwd=tmp_path, env=env)

    assert done.status == 1
    kinds = [(line["type"], line.get("subtype")) for line in done.json_lines()]
    assert kinds == [
        ("system", "init"),
        ("system", "api_retry"),
        ("result", "error_during_execution"),
    ]
    assert not any(RETRY_LINE.match(line) for line in done.stderr.splitlines())


def test_a_stalled_server_is_reported_with_both_ways_to_tune_the_timeout(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(Stream(frames=(), protocol="anthropic").stalled(before_headers=5.0))
    env = {**server.env(), "API_TIMEOUT_MS": "300", "CLAUDE_CODE_MAX_RETRIES": "0"}
    done = stayer("-p", "hi", cwd=tmp_path, env=env)

    assert done.status == 1
    (line,) = done.stderr.splitlines()
    assert line == (
        f"stayer: model_error: the server at {server.url} sent nothing for 0.3 s (the "
        "API_TIMEOUT_MS read timeout), so it may be stalled; lower API_TIMEOUT_MS to give up on "
        "a stalled server sooner, or raise it if the model needs longer to answer"
    )


@pytest.mark.parametrize(
    ("protocol", "format_name", "hint"),
    [
        ("anthropic", "Anthropic Messages", "ANTHROPIC_BASE_URL"),
        ("openai", "OpenAI Chat Completions", "OPENAI_BASE_URL"),
    ],
)
def test_a_stream_that_is_not_the_protocol_is_retried_twice_then_named(
    server: FakeModelServer,
    tmp_path: Path,
    protocol: WireProtocol,
    format_name: str,
    hint: str,
) -> None:
    garbage = Stream(frames=(garbage_frame("gateway says hi"),), protocol=protocol)
    server.enqueue(garbage, garbage, garbage)
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env(protocol))

    assert done.status == 1
    *retries, final = done.stderr.splitlines()
    parsed = [RETRY_LINE.match(line) for line in retries]
    assert [(m.group(2), m.group(3)) for m in parsed if m] == [("1", "2"), ("2", "2")]
    base = server.url if protocol == "anthropic" else server.openai_url
    assert final == (
        f"stayer: model_error: the server at {base} answered something that is not the "
        f"{format_name} streaming format (an event that is not JSON: 'gateway says "
        f"hi'); check {hint}"
    )
    assert len(server.requests) == 3


HTML = RawBytes(b"<!DOCTYPE html>\n<html><body><h1>Welcome to nginx!</h1></body></html>\n")
OPENAI_CHUNKS = openai_stream(Text("hi")).frames[:-1]  # some servers send no [DONE]
ANTHROPIC_EVENTS = anthropic_stream(Text("hi")).frames
NEVER_BEGAN = {
    "anthropic": ("Anthropic Messages", "message_start", "ANTHROPIC_BASE_URL"),
    "openai": ("OpenAI Chat Completions", "chat completion chunk", "OPENAI_BASE_URL"),
}


@pytest.mark.parametrize(
    ("protocol", "frames"),
    [
        pytest.param("anthropic", (HTML,), id="html-as-anthropic"),
        pytest.param("openai", (HTML,), id="html-as-openai"),
        pytest.param("anthropic", (Frame('{"hello": "world"}'),), id="json-without-a-type"),
        pytest.param("openai", (Frame('{"hello": "world"}'),), id="json-without-choices"),
        pytest.param("anthropic", OPENAI_CHUNKS, id="openai-chunks-at-the-anthropic-url"),
        pytest.param("openai", ANTHROPIC_EVENTS, id="anthropic-events-at-the-openai-url"),
    ],
)
def test_a_stream_that_never_begins_a_message_is_retried_twice_then_named(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol, frames: tuple[Chunk, ...]
) -> None:
    stream = Stream(frames=frames)  # no protocol: the fake serves it on either URL
    server.enqueue(stream, stream, stream)
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env(protocol))

    assert done.status == 1
    *retries, final = done.stderr.splitlines()
    parsed = [RETRY_LINE.match(line) for line in retries]
    assert [(m.group(2), m.group(3)) for m in parsed if m] == [("1", "2"), ("2", "2")], retries
    base = server.url if protocol == "anthropic" else server.openai_url
    name, what, hint = NEVER_BEGAN[protocol]
    assert final == (
        f"stayer: model_error: the server at {base} answered something that is not the {name} "
        f"streaming format (no {what} in the stream); check {hint}"
    )
    assert len(server.requests) == 3


def test_one_garbled_answer_is_retried_and_the_run_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        Stream(frames=(openai_chunk({"content": "hel"}), garbage_frame()), protocol="openai"),
        reply("hello"),
    )
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env("openai"))

    assert (done.status, done.stdout) == (0, "hello\n"), done.stderr
    (retry,) = done.stderr.splitlines()
    assert RETRY_LINE.match(retry)


def test_json_that_is_not_a_chat_chunk_is_a_protocol_mismatch_too(
    server: FakeModelServer, tmp_path: Path
) -> None:
    odd = Stream(frames=(Frame('{"id": "x", "choices": "none today"}'),), protocol="openai")
    server.enqueue(odd, odd, odd)
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env("openai"))

    assert done.status == 1
    *retries, final = done.stderr.splitlines()
    assert len(retries) == 2 and all(RETRY_LINE.match(line) for line in retries)
    assert final.startswith(
        f"stayer: model_error: the server at {server.openai_url} answered something that is "
        "not the OpenAI Chat Completions streaming format (a malformed chunk: "
    )
