"""`stop_reason: refusal` over the wire (OpenAI's `content_filter`): with `--fallback-model` the
request goes once to the fallback model; without one the run ends as `refusal` with the model's
words, on every output format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import WireProtocol, reply

WORDS = "I can't help with that."


@pytest.mark.parametrize(
    ("protocol", "model"), [("anthropic", "sonnet"), ("openai", "openai:gpt-4.1")]
)
def test_a_refusal_ends_the_run_with_the_models_words(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol, model: str
) -> None:
    server.enqueue(reply(WORDS, stop_reason="refusal"))
    done = stayer(
        "-p", "hi", "--model", model, "--output-format", "stream-json", "--verbose",
        cwd=tmp_path, env=server.env(protocol),
    )  # fmt: skip

    assert done.status == 1, done.stderr
    lines = done.json_lines()
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds == [("system", "init"), ("result", "error_during_execution")]
    result = lines[-1]
    assert (result["terminal_reason"], result["result"], result["is_error"]) == (
        "refusal",
        WORDS,
        True,
    )
    assert result["stop_reason"] == "refusal"
    assert len(server.requests) == 1  # not asked again, not nudged


def test_a_refusal_goes_once_to_the_fallback_model(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply(WORDS, stop_reason="refusal"), reply("A careful answer."))
    done = stayer(
        "-p", "hi", "--model", "opus", "--fallback-model", "haiku",
        cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert (done.status, done.stdout) == (0, "A careful answer.\n"), done.stderr
    assert done.stderr.splitlines() == [
        "stayer: switching to claude-haiku-5-5 for the rest of this run: claude-opus-5-5 "
        "declined to answer (stop_reason refusal)"
    ]
    first, again = server.requests
    assert (first.model, again.model) == ("claude-opus-5-5", "claude-haiku-5-5")
    assert again.messages == first.messages  # the refused answer is not sent back


def test_text_output_reports_a_refusal_in_one_line(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply(WORDS, stop_reason="refusal"))
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env())

    assert (done.status, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [f"stayer: refusal: {WORDS}"]
