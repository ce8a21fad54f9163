"""A person watches subagents in the REPL: one the model starts shows under its Agent call with
its type, task and latest action; its permission question opens the same dialog as the
session's own, naming it, and the answer lets its call run; it ends in one line. One started in
the background stays on screen after its call returned, until it ends. A dumb terminal asks in
plain lines. Real `stayer`, the fake model server answering the session and its subagent apart
(by their conversations)."""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec

import pytest

from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Response, ToolCall, reply
from tests.tty.harness import OpenPane, Pane, asking, idle, needs_tmux

pytestmark = [
    needs_tmux,
    pytest.mark.timeout(40),
    pytest.mark.skipif(
        find_spec("stayer.session.spawn") is None,
        reason="subagents made from their agent type (session/spawn.py) are not merged yet",
    ),
]

TASK = "Create the file made.txt with touch, then say so."


def _agent(description: str, prompt: str, *, background: bool) -> ToolCall:
    given = {"description": description, "prompt": prompt, "run_in_background": background}
    return ToolCall("toolu_agent", "Agent", {**given, "subagent_type": "general-purpose"})


def _is_child(request: RecordedRequest, prompt: str) -> bool:
    """Whether `request` is the subagent's: its first message holds the task it was given."""
    return bool(request.messages) and prompt in str(request.messages[0])


def _make_file_responder() -> Callable[[RecordedRequest], Response]:
    """The session asks a general-purpose subagent to make a file; the subagent runs touch."""

    def respond(request: RecordedRequest) -> Response:
        said = str(request.messages)
        if _is_child(request, TASK):
            if "toolu_touch" not in said:
                return reply(ToolCall("toolu_touch", "Bash", {"command": "touch made.txt"}))
            return reply("Made made.txt.")
        if "toolu_agent" not in said:
            return reply(_agent("make the file", TASK, background=False))
        return reply("The helper made the file.")

    return respond


def test_a_subagent_s_question_names_it_and_its_end_is_one_line(
    server: FakeModelServer, pane: Pane
) -> None:
    server.respond_with(_make_file_responder())
    pane.submit("have a helper make a file")
    screen = pane.wait_for(lambda s: asking(s) and "touch made.txt" in s)
    assert "general-purpose: make the file wants to use Bash" in screen
    assert "↳ general-purpose: make the file · 1 tool call" in screen
    assert "? waiting for your answer" in screen
    assert not (pane.repo / "made.txt").exists()
    pane.send("1")
    screen = pane.wait_for(lambda s: "The helper made the file." in s and idle(s))
    assert (pane.repo / "made.txt").exists()
    assert "✓ general-purpose: make the file · done · 1 tool call · " in screen


def test_a_background_subagent_stays_on_screen_until_it_ends(
    server: FakeModelServer, pane: Pane
) -> None:
    task = "Count the Markdown files here and report the number."
    (pane.repo / "notes.md").write_text("# notes\n")

    def respond(request: RecordedRequest) -> Response:
        said = str(request.messages)
        if _is_child(request, task):
            if "toolu_glob" not in said:
                return reply(ToolCall("toolu_glob", "Glob", {"pattern": "*.md"}))
            # held before any of its text, so its latest action is still the Glob
            return reply("There is one Markdown file.").render("anthropic").paused(at=1)
        if "toolu_agent" not in said:
            return reply(_agent("count markdown files", task, background=True))
        if "There is one Markdown file." in said:
            return reply("The helper found one Markdown file.")
        return reply("A helper is counting them.")

    server.respond_with(respond)
    pane.submit("count the markdown files in the background")
    screen = pane.wait_for(lambda s: "A helper is counting them." in s and "Glob(*.md)" in s)
    assert "↳ general-purpose: count markdown files · 1 tool call" in screen
    server.resume()
    screen = pane.wait_for(lambda s: "The helper found one Markdown file." in s and idle(s))
    assert (
        "✓ general-purpose: count markdown files (in the background) · done · 1 tool call · "
        in screen
    )


def test_on_a_dumb_terminal_a_subagent_s_question_is_asked_in_plain_lines(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    server.respond_with(_make_file_responder())
    with open_pane(env={"TERM": "dumb"}) as pane:
        pane.wait_for(lambda s: s.endswith(">"))
        pane.submit("have a helper make a file")
        screen = pane.wait_for("Answer 1-3:")
        assert "general-purpose: make the file wants to use Bash" in screen
        pane.submit("1")
        screen = pane.wait_for("The helper made the file.")
        assert "✓ general-purpose: make the file · done · 1 tool call · " in screen
        assert (pane.repo / "made.txt").exists()
