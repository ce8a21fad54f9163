"""claude-agent-sdk's `can_use_tool` callback answering stayer's permission questions
(`--permission-prompt-tool stdio`), and the values of that flag stayer cannot ask through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (
            ("--permission-prompt-tool", "mcp__approver__ask"),
            "--permission-prompt-tool mcp__approver__ask: stayer cannot ask an MCP tool",
        ),
        (("--permission-prompt-tool", "stdio"), "--permission-prompt-tool stdio asks over"),
    ],
)
def test_a_prompt_tool_stayer_cannot_ask_through_is_refused_in_one_line(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], complaint: str
) -> None:
    done = stayer("-p", "say hi", *flags, cwd=tmp_path, env=server.env())

    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"stayer: {complaint}")
    assert server.requests == []
