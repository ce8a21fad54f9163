"""Skills (a folder's SKILL.md) and commands (a Markdown file) read as Claude Code writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.agents.model import Skill
from stayer.agents.skills import read_command, read_skill, skill_folders

from .conftest import write

DEPLOY = """\
---
name: Deploy helper
description: Deploys the app to an environment.
when_to_use: When the user asks to ship or release.
argument-hint: [environment] [version]
arguments: environment version
allowed-tools: Bash(git add *) Bash(./deploy.sh *), Read
disallowed-tools:
  - Write
model: sonnet
effort: high
disable-model-invocation: yes
user-invocable: off
context: fork
agent: Explore
background: false
hooks: {}
paths: ["src/**"]
license: MIT
---
Deploy $environment at $version.
"""


def test_a_skill_with_every_front_matter_field(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "deploy"
    path = write(folder / "SKILL.md", DEPLOY)
    write(folder / "reference.md", "never read here")
    assert read_skill(folder, scope="project") == (
        Skill(
            name="deploy",  # the folder's name; front matter's `name` is only a label
            description="Deploys the app to an environment.",
            body="Deploy $environment at $version.\n",
            kind="skill",
            scope="project",
            source=path,
            base_dir=folder,
            when_to_use="When the user asks to ship or release.",
            argument_hint="[environment] [version]",
            arguments=("environment", "version"),
            allowed_tools=("Bash(git add *)", "Bash(./deploy.sh *)", "Read"),
            disallowed_tools=("Write",),
            model="sonnet",
            effort="high",
            disable_model_invocation=True,
            user_invocable=False,
            context="fork",
            agent="Explore",
            background=False,
        ),
        None,
    )


def test_a_command_is_named_by_its_file_and_may_have_no_front_matter(tmp_path: Path) -> None:
    path = write(tmp_path / "commands" / "greet.md", "\n# Greet someone by name\n\nHi $0!\n")
    skill, problem = read_command(path, scope="user")
    assert problem is None
    assert skill == Skill(
        name="greet",
        description="Greet someone by name",  # the first line stands in
        body="\n# Greet someone by name\n\nHi $0!\n",
        kind="command",
        scope="user",
        source=path,
        base_dir=path.parent,
    )


def test_a_missing_description_is_capped(tmp_path: Path) -> None:
    path = write(tmp_path / "long.md", "x" * 400)
    skill, _ = read_command(path, scope="project")
    assert skill is not None and skill.description == "x" * 249 + "…"


def test_a_hint_yaml_reads_as_a_list_is_kept_as_written(tmp_path: Path) -> None:
    path = write(tmp_path / "c.md", "---\nargument-hint: [message]\n---\nbody")
    skill, _ = read_command(path, scope="project")
    assert skill is not None and skill.argument_hint == "[message]"


def test_a_plugins_skill_takes_its_front_matter_name_after_the_plugins(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "folder-name"
    write(folder / "SKILL.md", "---\nname: lint\ndescription: d\n---\nbody")
    skill, _ = read_skill(folder, scope="plugin", plugin="kit")
    assert skill is not None and (skill.name, skill.plugin) == ("kit:lint", "kit")


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("context: inline", "`context: inline` must be fork (the only other context is the "
         "default, inline)"),
        ("user-invocable: perhaps", "`user-invocable: perhaps` must be true or false"),
        ("effort: extreme", "`effort: extreme` must be one of low, medium, high, xhigh, max"),
        ("description: [a, b]", "`description: a list` must be text"),
        ("{a: [", "its front matter is not valid YAML at line 3 (did not find "
         "expected node content); fix or quote the value"),
    ],
)  # fmt: skip
def test_a_skill_we_cannot_use_is_one_problem_line(
    tmp_path: Path, front: str, problem: str
) -> None:
    folder = tmp_path / "s"
    path = write(folder / "SKILL.md", f"---\n{front}\n---\nbody")
    assert read_skill(folder, scope="project") == (None, f"{path}: {problem}")


def test_a_skill_md_that_cannot_be_read_is_a_problem(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    (folder / "SKILL.md").mkdir(parents=True)  # unreadable as a file, even to root
    assert read_skill(folder, scope="project") == (
        None,
        f"{folder / 'SKILL.md'}: is not a regular file (a folder, FIFO or device); refused",
    )


def test_a_name_that_cannot_be_typed_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "two words.md", "body")
    assert read_command(path, scope="project") == (
        None,
        f"{path}: `two words` cannot be a command name (use letters, digits, `-`, `_` or `.`, "
        "starting with a letter or digit); rename it",
    )


def test_only_folders_with_a_skill_md_are_skills(tmp_path: Path) -> None:
    write(tmp_path / "b" / "SKILL.md", "b")
    write(tmp_path / "a" / "SKILL.md", "a")
    write(tmp_path / "notes" / "README.md", "not a skill")
    write(tmp_path / "loose.md", "not a skill")
    assert skill_folders(tmp_path, []) == (tmp_path / "a", tmp_path / "b")
