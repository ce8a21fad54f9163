"""A run the API refuses as too long ends in Claude Code's words, where scripts look for them:
the result (json, stream-json) and the error line of the text output start "Prompt is too long",
then say what stayer knows (the token counts) and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import Completed, stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_error

TOO_LONG = anthropic_error(
    400, "invalid_request_error", "prompt is too long: 210345 tokens > 200000 maximum"
)
RESULT = (
    "Prompt is too long: the conversation is too long for the model (210345 tokens, limit "
    "200000); compact it or start a new session"
)


def refused(server: FakeModelServer, tmp_path: Path, *flags: str) -> Completed:
    """`stayer -p` whose request, and the summary it then tries, are refused as too long."""
    server.enqueue(TOO_LONG, TOO_LONG)
    env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
    return stayer("-p", "hi", *flags, cwd=tmp_path, env=env)


def test_the_text_output_says_prompt_is_too_long(server: FakeModelServer, tmp_path: Path) -> None:
    done = refused(server, tmp_path)

    assert (done.status, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [f"stayer: prompt_too_long: {RESULT}"]
    # The run tried to summarise its history first, and that was refused too.
    purposes = [request.headers["x-stayer-purpose"] for request in server.requests]
    assert purposes == ["main", "compact"]


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_the_result_starts_with_prompt_is_too_long(
    server: FakeModelServer, tmp_path: Path, output_format: str
) -> None:
    flags = ("--output-format", output_format, *(["--verbose"] * (output_format == "stream-json")))
    done = refused(server, tmp_path, *flags)

    assert done.status == 1, done.stderr
    result = done.json_lines()[-1]
    assert (result["type"], result["subtype"], result["is_error"]) == (
        "result",
        "error_during_execution",
        True,
    )
    assert (result["result"], result["terminal_reason"]) == (RESULT, "prompt_too_long")
    assert result["errors"] == [RESULT]
