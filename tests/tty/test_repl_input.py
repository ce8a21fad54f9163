"""What a person types besides prompts: a message queued while the agent works (taken by its
next model call, or taken back with Escape), `!command`, history from an earlier session (Up,
Ctrl+R), Tab completion of commands and of `@path` (ignored files left out), and a settings
`statusLine` in place of the footer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, ToolCall, anthropic_stream, anthropic_text, reply
from tests.tty.harness import OpenPane, Pane, idle, make_repo, needs_tmux, running, tail

pytestmark = [needs_tmux, pytest.mark.timeout(40)]


def _box(screen: str) -> list[str]:
    """The input box's lines."""
    lines = screen.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("─" * 10)]
    return lines[rules[-2] + 1 : rules[-1]]


def test_a_message_typed_during_a_run_joins_its_next_model_call(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    first = anthropic_stream(
        Text("Looking first."), ToolCall("toolu_1", "Bash", {"command": "echo looked"})
    )
    first = first.paused(at=first.index_of("tool_use"))  # held after the text
    server.enqueue(first, reply("Done, and I read your note."))
    with open_pane("--dangerously-skip-permissions") as pane:
        pane.wait_idle()
        pane.submit("look around")
        pane.wait_for("Looking first.")
        pane.submit("also check the tests")
        pane.wait_for("queued: also check the tests")
        server.resume()
        screen = pane.wait_for(lambda s: "I read your note." in s and idle(s))
        assert "queued:" not in screen
        assert pane.scrollback().count("> also check the tests") == 1  # shown once, as taken

    second = server.requests[1].messages[-1]
    assert "also check the tests" in json.dumps(second["content"])  # with the tool's result


def test_escape_takes_a_queued_message_back(server: FakeModelServer, pane: Pane) -> None:
    long = anthropic_text("A long answer that is held here. " * 5)
    server.enqueue(long.paused(at=long.index_of("held")))
    pane.submit("tell me something long")
    pane.wait_for("A long answer")
    pane.submit("on second thought")
    pane.wait_for("queued: on second thought")
    pane.send("Escape")
    screen = pane.wait_for(lambda s: not running(s) and "queued:" not in s)
    assert _box(screen) == ["> on second thought"]  # back in the box, not sent
    server.resume()
    assert len(server.requests) == 1


def test_a_bang_command_runs_and_the_model_sees_it(server: FakeModelServer, pane: Pane) -> None:
    server.enqueue(reply("I see the command printed bang-output."))
    pane.submit("!echo bang-output")
    pane.wait_for(lambda s: "I see the command printed" in s and idle(s))
    assert "bang-output" in pane.scrollback()
    sent = json.dumps(server.requests[-1].messages[-1]["content"])
    assert "<bash-input>echo bang-output</bash-input>" in sent
    assert "<bash-stdout>bang-output" in sent


def test_history_from_an_earlier_session_with_up_and_ctrl_r(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    server.enqueue(reply("First answer."), reply("Second answer."))
    with open_pane() as pane:
        pane.wait_idle()
        pane.submit("the pelican prompt")
        pane.wait_for(lambda s: "First answer." in s and idle(s))
        pane.submit("the walrus prompt")
        pane.wait_for(lambda s: "Second answer." in s and idle(s))
        pane.send("C-d")
        pane.wait_exit()
    with open_pane() as pane:
        pane.wait_idle()
        pane.send("Up")
        assert _box(pane.wait_for("> the walrus prompt"))[0] == "> the walrus prompt"
        pane.send("C-u")  # clear the line (back to an empty box)
        pane.send("C-r")
        pane.type("pelic")
        pane.wait_for("the pelican prompt")
        pane.send("Enter")  # take the match into the box
        assert _box(pane.wait_for(lambda s: _box(s)[0] == "> the pelican prompt"))


def test_tab_completes_a_command_and_a_path(tmp_path: Path, open_pane: OpenPane) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    (repo / "src" / "needle_module.py").write_text("x = 1\n")
    (repo / "needle_secret.txt").write_text("ignored\n")
    (repo / ".gitignore").write_text("needle_secret.txt\n")
    with open_pane() as pane:
        pane.wait_idle()
        pane.type("/comp")
        pane.wait_for("/compact  summarise")  # the menu a person sees, then Tab
        pane.send("Tab")
        pane.wait_for(lambda s: _box(s)[0].startswith("> /compact"))
        pane.send("C-u")
        pane.type("look at @needle")
        screen = pane.wait_for("src/needle_module.py")
        assert "needle_secret.txt" not in screen  # .gitignore'd: never offered
        pane.send("Tab")
        pane.wait_for(lambda s: _box(s)[0] == "> look at @src/needle_module.py")


def test_a_status_line_command_replaces_the_footer(
    tmp_path: Path, server: FakeModelServer, open_pane: OpenPane
) -> None:
    config = tmp_path / "home" / ".stayer-config"  # the user's own settings (the harness's)
    config.mkdir(parents=True)
    # the command reads the session JSON on stdin and shows a field of it
    command = "grep -o '\"session_id\"' | head -1 | sed 's/^/STATUS /'"
    settings = {"statusLine": {"type": "command", "command": command}}
    (config / "settings.json").write_text(json.dumps(settings))
    with open_pane() as pane:
        screen = pane.wait_for('STATUS "session_id"')
        assert tail(screen)[1] == ['STATUS "session_id"']  # in the footer's place


def test_a_projects_status_line_is_not_run(tmp_path: Path, open_pane: OpenPane) -> None:
    """A cloned repository's settings must not run a command as stayer opens there."""
    repo = make_repo(tmp_path / "repo")
    (repo / ".claude").mkdir()
    marker = tmp_path / "ran"
    settings = {"statusLine": {"type": "command", "command": f"touch {marker}; echo PWNED"}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    with open_pane() as pane:
        screen = pane.wait_for("statusLine in")
        shown = " ".join(pane.screen().split())  # the view wraps the line itself
        assert "is not run: a project's settings could run any command" in shown
        pane.wait_idle()
        pane.submit("/cost")  # a statusLine runs after the session starts: give it the time
        pane.wait_for("Cost")
        assert "PWNED" not in pane.screen() and "PWNED" not in screen
    assert not marker.exists()
