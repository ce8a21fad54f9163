"""A person uses the slash commands at the prompt: /cost tells what the session used, /clear
starts a new conversation in the same process, /compact summarizes the conversation so far,
/model switches the model from the next prompt on, /exit leaves (in test_repl_exit)."""

from __future__ import annotations

import re

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.tty.harness import Pane, idle, needs_tmux, tail

pytestmark = [needs_tmux, pytest.mark.timeout(30)]


def _chat(server: FakeModelServer, pane: Pane) -> None:
    server.enqueue(reply("The capital of France is Paris."))
    pane.submit("what is the capital of France")
    pane.wait_for(lambda s: "Paris." in s and idle(s))


def _after(screen: str, marker: str) -> str:
    """What the screen shows below the last line holding `marker`."""
    return screen[screen.rindex(marker) + len(marker) :]


def test_cost_tells_money_and_tokens(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    pane.submit("/cost")
    screen = pane.wait_for(lambda s: "/cost" in s and bool(re.search(r"\$\d", _after(s, "/cost"))))
    assert idle(screen)
    assert len(server.requests) == 1  # told from what the session counted, no model call


def test_clear_starts_a_new_conversation(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    server.enqueue(reply("A fresh start."))
    pane.submit("/clear")  # and at once the next prompt, as a quick typist or a paste does:
    pane.submit("hello again")  # it waits for the clear entered before it
    pane.wait_for(lambda s: "A fresh start." in s and idle(s))
    fresh = server.requests[-1].messages
    assert len(fresh) == 1 and "Paris" not in str(fresh) and "hello again" in str(fresh)


def test_compact_summarizes_the_conversation(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    server.enqueue(reply("Summary: the person asked for the capital of France; it is Paris."))
    pane.submit("/compact")
    server.wait_for_requests(2)
    pane.wait_idle()
    server.enqueue(reply("Yes, Paris."))
    pane.submit("was it Paris")
    pane.wait_for(lambda s: "Yes, Paris." in s and idle(s))
    after = server.requests[-1].messages
    assert "Summary: the person asked for the capital of France" in str(after)
    assert "The capital of France is Paris." not in str(after)


def test_model_switches_from_the_next_prompt(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    pane.submit("/model claude-haiku-5-5")
    # the footer names the new model at once, no key pressed
    pane.wait_for(lambda s: idle(s) and "claude-haiku-5-5" in "\n".join(tail(s)[1]), timeout=3)
    server.enqueue(reply("Answered by another model."))
    pane.submit("who answers now")
    screen = pane.wait_for(lambda s: "Answered by another model." in s and idle(s))
    assert server.requests[-1].model == "claude-haiku-5-5"
    assert "claude-haiku-5-5" in screen  # the footer names the model in use


def test_a_line_that_starts_with_a_path_is_a_prompt(server: FakeModelServer, pane: Pane) -> None:
    server.enqueue(reply("That file lists the accounts."))
    pane.submit("/etc/passwd please explain")
    pane.wait_for(lambda s: "That file lists the accounts." in s and idle(s))
    assert "/etc/passwd please explain" in str(server.requests[-1].messages)
