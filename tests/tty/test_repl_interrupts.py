"""A person stops the agent: Escape or Ctrl+C while the model streams or while a long command
runs brings the input box back at once, and the conversation goes on (the fake server refuses
a request whose history breaks the API's rules, so the next answer proves it valid)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, ToolCall, anthropic_stream, reply
from tests.process_table import assert_gone_within, family_command, read_pids
from tests.tty.harness import OpenPane, Pane, idle, needs_tmux, running

pytestmark = [needs_tmux, pytest.mark.timeout(30)]

KEYS = [pytest.param("Escape", id="escape"), pytest.param("C-c", id="ctrl-c")]


def _goes_on(server: FakeModelServer, pane: Pane) -> None:
    """A next prompt is answered, on a history the API accepts."""
    server.enqueue(reply("Still here and listening."))
    pane.submit("are you still there")
    pane.wait_for(lambda s: "Still here and listening." in s and idle(s))
    assert not server.violations
    assert server.requests[-1].messages[-1]["role"] == "user"


@pytest.mark.parametrize("key", KEYS)
def test_a_stream_stops_at_once(server: FakeModelServer, pane: Pane, key: str) -> None:
    stream = anthropic_stream(Text("Counting slowly: one two three four five six seven."))
    server.enqueue(stream.paused(stream.index_of("four")))
    pane.submit("count for me")
    pane.wait_for(lambda s: "one two three" in s and running(s))
    pane.send(key)
    screen = pane.wait_idle()
    assert "seven" not in screen
    _goes_on(server, pane)


@pytest.mark.parametrize("key", KEYS)
def test_a_long_command_stops_at_once(
    server: FakeModelServer, open_pane: OpenPane, tmp_path: Path, key: str
) -> None:
    pids = tmp_path / "pids"
    with open_pane("--dangerously-skip-permissions") as pane:
        command = family_command(pids)  # a shell and its `sleep 30`, their pids in a file
        server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
        pane.wait_idle()
        pane.submit("wait a long while")
        pane.wait_for(lambda _: pids.exists())  # the command says it runs: a signal
        family = read_pids(pids)
        assert running(pane.screen())
        pane.send(key)
        pane.wait_idle(timeout=3)
        assert_gone_within(family, 3)
        _goes_on(server, pane)
        # the interrupted call was answered in the history, as the API demands
        history = server.requests[-1].messages
        results = [
            block
            for message in history
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert [result["tool_use_id"] for result in results] == ["toolu_1"]
