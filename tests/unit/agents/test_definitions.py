"""Custom agents read from Claude Code's agent files and from `--agents`, and the built-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.agents.builtin import BUILTIN_AGENTS
from stayer.agents.definitions import agents_from_json, read_agent_file
from stayer.agents.model import AgentDefinition
from stayer.errors import ConfigError
from stayer.tools.registry import builtin_tools

from .conftest import write

REVIEWER = """\
---
name: reviewer
description: Reviews a diff for bugs. Use after any change.
tools: Read, Grep, Glob, Bash(git diff *)
disallowedTools: [Write]
model: haiku
permissionMode: plan
maxTurns: 7
skills:
  - style-guide
effort: low
isolation: worktree
background: yes
color: blue
memory: project
---

You are a careful code reviewer.
"""


def test_an_agent_file_with_every_field_we_read(tmp_path: Path) -> None:
    path = write(tmp_path / ".claude" / "agents" / "reviewer.md", REVIEWER)
    assert read_agent_file(path, scope="project") == (
        AgentDefinition(
            name="reviewer",
            description="Reviews a diff for bugs. Use after any change.",
            prompt="You are a careful code reviewer.",
            scope="project",
            source=str(path),
            tools=("Read", "Grep", "Glob", "Bash(git diff *)"),
            disallowed_tools=("Write",),
            model="haiku",
            permission_mode="plan",
            max_turns=7,
            skills=("style-guide",),
            effort="low",
            isolation="worktree",
            background=True,
        ),
        (),
    )


def test_published_names_with_dots_and_digits_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "---\nname: powershell-5.1-expert\ndescription: d\n---\np")
    agent, problems = read_agent_file(path, scope="project")
    assert (agent is not None and agent.name, problems) == ("powershell-5.1-expert", ())


def test_model_inherit_is_the_parents(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "---\nname: a\ndescription: d\nmodel: inherit\n---\np")
    agent, problems = read_agent_file(path, scope="user")
    assert (agent is not None and agent.model, problems) == (None, ())


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("description: d", "no `name` in its front matter; add one (the model calls the "
         "agent by it)"),
        ("name: a", "no `description` in its front matter; add one (the model picks agents "
         "by it)"),
        ("name: Code_Reviewer\ndescription: d", "agent name `Code_Reviewer` may use only "
         "lowercase letters, digits, `-`, `.` and `_`; rename it"),
        ("name: team:lead\ndescription: d", "agent name `team:lead` may use only "
         "lowercase letters, digits, `-`, `.` and `_`; rename it"),
        ("name: a\ndescription: d\npermissionMode: yolo", "`permissionMode: yolo` must be one "
         "of default, manual, acceptEdits, plan, bypassPermissions, dontAsk"),
        ("name: a\ndescription: d\nmaxTurns: 0", "`maxTurns: 0` must be a whole number of "
         "turns, 1 or more"),
        ("name: a\ndescription: d\nmaxTurns: true", "`maxTurns: True` must be a whole number "
         "of turns, 1 or more"),
        ("name: a\ndescription: d\nisolation: remote", "`isolation: remote` must be worktree "
         "(the only isolation stayer supports)"),
        ("name: a\ndescription: d\neffort: huge", "`effort: huge` must be one of low, medium, "
         "high, xhigh, max"),
        ("name: a\ndescription: d\nbackground: sometimes", "`background: sometimes` must be "
         "true or false"),
        ("name: a\ndescription: d\ntools: {Read: 1}", "`tools: a dict` must be a list of "
         "names (a YAML list, or one string of them)"),
    ],
)  # fmt: skip
def test_a_file_we_cannot_use_is_one_problem_line(tmp_path: Path, front: str, problem: str) -> None:
    path = write(tmp_path / "agent.md", f"---\n{front}\n---\nprompt")
    assert read_agent_file(path, scope="project") == (None, (f"{path}: {problem}",))


def test_broken_yaml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "agent.md", "---\n{name: [a\n---\nprompt")
    agent, problems = read_agent_file(path, scope="project")
    assert agent is None
    assert [p.startswith(f"{path}: its front matter is not valid YAML") for p in problems] == [True]


def test_a_max_turns_written_as_text_is_a_number(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", '---\nname: a\ndescription: d\nmaxTurns: "3"\n---\np')
    agent, _ = read_agent_file(path, scope="project")
    assert agent is not None and agent.max_turns == 3


def test_a_plugins_agent_is_namespaced_and_may_not_choose_its_mode(tmp_path: Path) -> None:
    path = write(
        tmp_path / "agents" / "sub" / "fixer.md",
        "---\nname: fixer\ndescription: d\npermissionMode: bypassPermissions\n---\np",
    )
    agent, problems = read_agent_file(path, scope="plugin", plugin="tools", prefix="sub:")
    assert agent is not None
    assert (agent.name, agent.permission_mode, agent.plugin) == ("tools:sub:fixer", None, "tools")
    assert problems == (
        f"{path}: `permissionMode` is ignored in a plugin's agent (a plugin does not choose "
        "what its agent may do unasked); the agent runs in its parent's mode",
    )


def test_agents_json_text_and_mapping() -> None:
    text = (
        '{"checker": {"description": "Checks", "prompt": "You check.", "tools": ["Read"], '
        '"disallowedTools": "Bash", "model": "sonnet", "permissionMode": "default", '
        '"maxTurns": 2, "skills": ["x"], "unknown": 1}}'
    )
    expected = AgentDefinition(
        name="checker",
        description="Checks",
        prompt="You check.",
        scope="flag",
        source="--agents",
        tools=("Read",),
        disallowed_tools=("Bash",),
        model="sonnet",
        permission_mode="default",
        max_turns=2,
        skills=("x",),
    )
    assert agents_from_json(text) == (expected,)
    assert agents_from_json({"checker": {"description": "Checks", "prompt": "You check."}}) == (
        AgentDefinition(
            name="checker",
            description="Checks",
            prompt="You check.",
            scope="flag",
            source="--agents",
        ),
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("{not json", "--agents: not valid JSON (Expecting property name enclosed in double "
         'quotes at character 1); pass an object such as {"reviewer": {"description": "...", '
         '"prompt": "..."}}'),
        ("[1]", "--agents: must be a JSON object of agent names to definitions, such as "
         '{"reviewer": {"description": "...", "prompt": "..."}}'),
        ('{"a": {"prompt": "p"}}', '--agents: agent `a`: needs a "description" and a '
         '"prompt" (both text)'),
        ('{"a": 3}', '--agents: agent `a`: must be an object with "description" and "prompt"'),
        ('{"Bad Name": {}}', "--agents: agent `Bad Name`: use only lowercase letters, digits, "
         "`-`, `.` and `_` in its name"),
        ('{"a": {"description": "d", "prompt": "p", "permissionMode": "yolo"}}',
         "--agents: agent `a`: `permissionMode: yolo` must be one of default, manual, "
         "acceptEdits, plan, bypassPermissions, dontAsk"),
    ],
)  # fmt: skip
def test_a_bad_agents_flag_is_one_config_error_line(given: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        agents_from_json(given)
    assert str(caught.value) == message


def test_the_built_ins_and_their_tools() -> None:
    tools = {tool.name for tool in builtin_tools()}
    summary = [(a.name, a.tools, a.memory, a.scope) for a in BUILTIN_AGENTS]
    read_only = ("Glob", "Grep", "Read", "Bash", "WebFetch")
    assert summary == [
        ("general-purpose", None, True, "built-in"),
        ("Explore", read_only, False, "built-in"),
        ("Plan", read_only, True, "built-in"),
    ]
    assert set(read_only) <= tools
    assert all(agent.description and agent.prompt for agent in BUILTIN_AGENTS)
