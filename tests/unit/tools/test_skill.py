"""The Skill tool's declarations and input."""

from __future__ import annotations

import pytest

from stayer.tools.base import ToolInputError
from stayer.tools.builtin.skill import SkillTool
from stayer.tools.names import SKILL


def test_its_subject_is_the_skills_name_and_it_runs_alone_without_a_permission_of_its_own() -> None:
    tool = SkillTool()
    given = tool.parse_input({"skill": " /review-pr ", "args": "123"})
    assert tool.name == SKILL and tool.aliases == ()
    assert tool.permission_subject(given) == "review-pr"
    assert tool.is_read_only(given) and not tool.is_concurrency_safe(given)


def test_input_is_claude_codes_skill_and_args() -> None:
    tool = SkillTool()
    assert tool.parse_input({"skill": "pdf"}).args == ""
    with pytest.raises(ToolInputError, match="skill"):
        tool.parse_input({"args": "x"})
    with pytest.raises(ToolInputError, match="name"):
        tool.parse_input({"skill": "pdf", "name": "x"})
