"""A person answers the agent's permission questions: yes to one command, which then runs; no
to another with a note, which reaches the model in the denial; and "don't ask again", which
keeps the rule in the project's local settings."""

from __future__ import annotations

import json
import re

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.tty.harness import OpenPane, Pane, asking, idle, needs_tmux

pytestmark = [needs_tmux, pytest.mark.timeout(30)]

OPTIONS = ("1. Yes", "2. Yes, and don't ask again", "3. No, and tell the model what to do instead")


def _results(server: FakeModelServer, index: int) -> list[dict[str, object]]:
    """The tool_result blocks of request `index`'s last message."""
    last = server.requests[index].messages[-1]
    return [block for block in last["content"] if block.get("type") == "tool_result"]


def _text_of(result: dict[str, object]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(str(part.get("text", "")) for part in content)


def test_a_command_approved_runs_and_one_denied_carries_the_note(
    server: FakeModelServer, pane: Pane
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})),
        reply("Made the file."),
    )
    pane.submit("make a file")
    screen = pane.wait_for(asking)
    assert "touch made.txt" in screen
    for option in OPTIONS:
        assert option in screen, screen
    assert not (pane.repo / "made.txt").exists()  # nothing runs before the person says so
    pane.send("1")
    pane.wait_for(lambda s: "Made the file." in s and idle(s))
    assert (pane.repo / "made.txt").exists()
    [approved] = _results(server, 1)
    assert approved["tool_use_id"] == "toolu_1" and not approved.get("is_error")

    server.enqueue(
        reply(ToolCall("toolu_2", "Bash", {"command": "touch other.txt"})),
        reply("Understood, I will reuse made.txt."),
    )
    pane.submit("make another")
    pane.wait_for(lambda s: asking(s) and "touch other.txt" in s)
    pane.send("3")
    pane.wait_for("What should the model do instead?")
    pane.type("reuse made.txt instead")
    pane.send("Enter")
    pane.wait_for(lambda s: "I will reuse made.txt." in s and idle(s))
    assert not (pane.repo / "other.txt").exists()
    [denied] = _results(server, 3)
    assert denied["tool_use_id"] == "toolu_2" and denied.get("is_error") is True
    assert "reuse made.txt instead" in _text_of(denied)


def test_escape_at_a_question_says_no(server: FakeModelServer, pane: Pane) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch never.txt"})),
        reply("Leaving it alone."),
    )
    pane.submit("make a file")
    pane.wait_for(asking)
    pane.send("Escape")
    pane.wait_for(lambda s: "Leaving it alone." in s and idle(s))
    assert not (pane.repo / "never.txt").exists()
    [denied] = _results(server, 1)
    assert denied.get("is_error") is True


def test_dont_ask_again_keeps_the_rule_in_local_settings(
    server: FakeModelServer, pane: Pane
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})),
        reply("First done."),
        reply(ToolCall("toolu_2", "Bash", {"command": "touch made.txt"})),
        reply("Second done, unasked."),
    )
    pane.submit("make a file")
    screen = pane.wait_for(asking)
    named = re.search(r"2\. Yes, and don't ask again for (.+) in this project", screen)
    assert named is not None, screen
    pane.send("2")
    pane.wait_for(lambda s: "First done." in s and idle(s))
    local = pane.repo / ".stayer" / "settings.local.json"
    allowed = json.loads(local.read_text(encoding="utf-8"))["permissions"]["allow"]
    assert named.group(1) in allowed, allowed
    (pane.repo / "made.txt").unlink()
    pane.submit("make it again")  # the rule applies at once: no second question
    screen = pane.wait_for(lambda s: "Second done, unasked." in s and idle(s))
    assert "Do you want to" not in screen.split("make it again")[-1]
    assert (pane.repo / "made.txt").exists()


@pytest.mark.parametrize("allowed", [True, False])
def test_shift_tab_reaches_bypass_only_where_the_session_may_switch_to_it(
    open_pane: OpenPane, allowed: bool
) -> None:
    """Claude Code's rule, the session's for every front end: bypassPermissions is in the
    cycle with --allow-dangerously-skip-permissions, and never without it."""
    args = ("--allow-dangerously-skip-permissions",) if allowed else ()
    with open_pane(*args) as pane:
        pane.wait_idle()
        for shown in ("accept edits on", "plan mode on"):
            pane.send("BTab")
            pane.wait_for(shown)
        pane.send("BTab")
        if allowed:
            pane.wait_for("bypass permissions on")
        else:  # back to default, which the footer does not name
            pane.wait_for(lambda screen: "plan mode on" not in screen)
            pane.send("BTab")
            screen = pane.wait_for("accept edits on")
            assert "bypass permissions" not in screen
