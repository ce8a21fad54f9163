"""`Task` is Agent's name before Claude Code renamed it: settings, flags and hooks written with
either name reach the tool whichever name a call uses."""

from __future__ import annotations

import pytest

from stayer.hooks.match import matches
from stayer.permissions import PermissionPolicy
from stayer.session.toolset import run_toolbox


@pytest.mark.parametrize(
    ("matcher", "subject"),
    [("Task", "Agent"), ("Agent", "Task"), ("Read|Task", "Agent"), ("Ag.*", "Task")],
)
def test_a_hook_for_either_name_sees_a_call_of_either(matcher: str, subject: str) -> None:
    assert matches(matcher, subject)


def test_a_hook_for_another_tool_still_does_not() -> None:
    assert not matches("Read|Grep", "Task")
    assert not matches("Task", "Bash")


def test_tools_named_by_the_old_name_offer_the_agent_tool() -> None:
    box = run_toolbox(["Read,Task"], (), PermissionPolicy())
    assert box.names == ("Agent", "Read")
