"""A Stop hook that never approves, over the real CLI: past the block cap the run ends as
`stop_hook_prevented`, and the result says so (with the hook's last words) in every format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

NAG = 'echo "the changelog is not updated" >&2; exit 2'
WHY = (
    "A Stop hook kept the turn from ending 2 times in a row with no tool call in between, the "
    "most allowed (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2), so the run ends without its approval. "
    "A Stop hook should check stop_hook_active in its input and let the turn end while it is "
    f"true. The hook's last words:\n[{NAG}]: the changelog is not updated"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".claude").mkdir(parents=True)
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": NAG}]}]}}
    (path / ".claude" / "settings.json").write_text(json.dumps(settings))
    return path


def nagged(server: FakeModelServer, project: Path, *flags: str) -> tuple[int, str, str]:
    server.enqueue(reply("done"), reply("really done"), reply("done, I promise"))
    env = {**server.env(), "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "2"}
    done = stayer("-p", "tidy up", *flags, cwd=project, env=env)
    assert len(server.requests) == 3
    return done.status, done.stdout, done.stderr


def assert_prevented(result: dict[str, Any]) -> None:
    shown = {key: result[key] for key in ("type", "subtype", "is_error", "terminal_reason")}
    assert shown == {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "terminal_reason": "stop_hook_prevented",
    }
    assert (result["result"], result["errors"]) == (WHY, [WHY])
    assert (result["stop_reason"], result["num_turns"]) == ("end_turn", 1)


def test_json_result_says_the_hook_never_approved(server: FakeModelServer, project: Path) -> None:
    status, out, err = nagged(server, project, "--output-format", "json")
    assert status == 1, err
    assert_prevented(json.loads(out))


def test_stream_json_result_line_says_the_hook_never_approved(
    server: FakeModelServer, project: Path
) -> None:
    status, out, err = nagged(server, project, "--output-format", "stream-json", "--verbose")
    assert status == 1, err
    lines = [json.loads(line) for line in out.splitlines()]
    shapes = [(line["type"], line.get("subtype")) for line in lines]
    recovery = ("system", "continuing")
    assert shapes == [
        ("system", "init"),
        ("assistant", None),
        recovery,
        ("assistant", None),
        recovery,
        ("assistant", None),
        ("result", "error_during_execution"),
    ]
    assert {line.get("reason") for line in lines if line["type"] == "system"} == {
        None,
        "stop_hook_blocking",
    }
    assert_prevented(lines[-1])


def test_text_mode_prints_no_answer_and_says_why_on_stderr(
    server: FakeModelServer, project: Path
) -> None:
    status, out, err = nagged(server, project)
    assert (status, out) == (1, "")
    assert f"stayer: stop_hook_prevented: {WHY}" in err
