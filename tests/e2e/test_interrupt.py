"""Ctrl+C while a tool runs: the run ends cleanly with a result, and the tool's process dies."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.e2e.cli import start_tool_run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.process_table import assert_gone_within, family_command, read_pids


def test_interrupt_during_a_tool_ends_with_aborted_tools(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    command = family_command(pids_file)
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    process, lines = start_tool_run(tmp_path, server.env(), pids_file)
    pids = read_pids(pids_file)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=15)
    elapsed = time.monotonic() - started

    lines += [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert process.returncode == 130
    assert elapsed < 10
    result = lines[-1]
    assert result["type"] == "result"
    assert (result["terminal_reason"], result["is_error"]) == ("aborted_tools", True)
    user = next(line for line in lines if line["type"] == "user")
    block = user["message"]["content"][0]
    assert block["tool_use_id"] == "toolu_1" and block["is_error"] is True
    assert_gone_within(pids, 10)  # gone when stayer exits; the deadline only bounds the poll
