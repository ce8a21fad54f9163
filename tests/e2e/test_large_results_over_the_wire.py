"""A command that prints megabytes, from `stayer -p` with stream-json: every line stays under
1 MiB, the model gets a preview and the path, and the session's folder holds all of the output.
With `--no-session-persistence` nothing is saved and the result is cut.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from stayer.session.paths import session_folder
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

STREAM = ("--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
# 3 MB of two-byte characters, in lines: 6 MB of UTF-8, far over any line limit
COMMAND = "yes 'ééééééééé line' | head -n 200000"
LINE = "ééééééééé line\n"


def _tool_result_text(lines: list[dict[str, Any]]) -> str:
    (user,) = [line for line in lines if line["type"] == "user"]
    (block,) = user["message"]["content"]
    (part,) = block["content"]
    text = part["text"]
    assert isinstance(text, str)
    return text


def test_a_huge_bash_output_is_saved_and_every_line_stays_under_1_mib(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_big", "Bash", {"command": COMMAND})), reply("Done."))
    done = stayer("-p", "print a lot", *STREAM, cwd=tmp_path, env=server.env(), timeout=120)

    assert done.status == 0, done.stderr
    raw = done.stdout.splitlines()
    assert max(len(line.encode()) for line in raw) < 1 << 20
    lines = [json.loads(line) for line in raw]
    session_id = lines[0]["session_id"]
    saved = session_folder(os.environ, tmp_path.resolve(), session_id) / "tool-results"
    path = saved / "toolu_big.txt"
    assert path.read_text(encoding="utf-8") == LINE * 200_000
    shown = _tool_result_text(lines)
    assert shown.startswith(
        f"[This result has {len(LINE) * 200_000} characters (200000 lines), more than the "
        f"30000 one result may hold here, so it was saved to {path}. "
    )
    assert len(shown) < 4_000
    # what the model was sent is what stream-json printed
    body: Any = server.requests[1].body
    assert body["messages"][-1]["content"][0]["content"] == [{"type": "text", "text": shown}]


def test_without_persistence_nothing_is_saved_and_the_output_is_cut(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_big", "Bash", {"command": COMMAND})), reply("Done."))
    args = ("-p", "print a lot", *STREAM, "--no-session-persistence")
    done = stayer(*args, cwd=tmp_path, env=server.env(), timeout=120)

    assert done.status == 0, done.stderr
    raw = done.stdout.splitlines()
    assert max(len(line.encode()) for line in raw) < 1 << 20
    lines = [json.loads(line) for line in raw]
    folder = session_folder(os.environ, tmp_path.resolve(), lines[0]["session_id"])
    assert not folder.exists()
    shown = _tool_result_text(lines)
    assert "was saved to" not in shown
    assert f"characters of stdout omitted] ...\n\n{LINE}" in shown
    assert 29_000 < len(shown) <= 30_000
