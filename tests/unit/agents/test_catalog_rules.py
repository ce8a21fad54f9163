"""Which skill, command or agent wins a name, and the fields stayer cannot honour yet: the
user's own command is never replaced by a repository's skill, stayer's REPL names and names
differing only in case are refused, a file whose hooks or shell would not run is left out."""

from __future__ import annotations

import json
from pathlib import Path

from stayer.agents.catalog import load_catalog
from stayer.agents.model import RESERVED_COMMANDS, Catalog

from .conftest import write


def load(repo: Path, env: dict[str, str], plugin_dirs: tuple[Path, ...] = ()) -> Catalog:
    return load_catalog(repo, project_root=repo, env=env, plugin_dirs=plugin_dirs)


def test_the_users_command_wins_over_a_project_skill_of_its_name(
    repo: Path, env: dict[str, str], home: Path
) -> None:
    mine = write(home / ".claude/commands/deploy.md", "my own deploy")
    theirs = write(repo / ".claude/skills/deploy/SKILL.md", "the repository's deploy")
    write(repo / ".claude/commands/lint.md", "project command")
    write(repo / ".claude/skills/lint/SKILL.md", "project skill")  # same scope: skill wins
    found = load(repo, env)
    deploy, lint = found.skill("deploy"), found.skill("lint")
    assert deploy is not None and lint is not None
    assert (deploy.source, deploy.kind, lint.kind) == (mine, "command", "skill")
    assert found.problems == (
        f"{theirs}: `/deploy` is also defined by {mine}, which wins (user over project); "
        "this one is left out",
    )


def test_reserved_and_case_only_names_are_left_out(repo: Path, env: dict[str, str]) -> None:
    assert {"help", "clear", "compact", "exit", "agents"} <= RESERVED_COMMANDS
    help_file = write(repo / ".claude/commands/Help.md", "not the REPL's")
    write(repo / ".claude/commands/deploy.md", "lower")
    upper = write(repo / ".claude/commands/zz/Deploy.md", "upper")
    found = load(repo, env)
    assert [skill.name for skill in found.skills] == ["deploy"]
    assert found.problems == (
        f"{help_file}: `/Help` is one of stayer's own commands; this one is left out (rename it)",
        f"{upper}: `/Deploy` differs from `/deploy` ({repo / '.claude/commands/deploy.md'}) "
        "only in case; this one is left out (rename one)",
    )


def test_hooks_and_other_shells_leave_the_definition_out(repo: Path, env: dict[str, str]) -> None:
    hooked = "hooks:\n  PreToolUse:\n    - matcher: Bash\n"
    agent = write(repo / ".claude/agents/db.md", f"---\nname: db\ndescription: d\n{hooked}---\np")
    quiet = write(
        repo / ".claude/agents/quiet.md",
        f"---\nname: quiet\ndescription: d\ntools: []\n{hooked}---\np",
    )
    skill = write(repo / ".claude/skills/s/SKILL.md", f"---\n{hooked}---\nbody")
    shell = write(repo / ".claude/skills/ps/SKILL.md", "---\nshell: powershell\n---\nbody")
    found = load(repo, env)
    assert (found.agent("db"), found.skills) == (None, ())
    assert found.agent("quiet") is not None  # no tools: nothing its hooks would guard
    assert found.problems == (
        f"{agent}: `hooks` is not supported by stayer: the checks they make would not run "
        "while the agent uses its tools, so the agent is left out (move them into settings' "
        "hooks, or remove them)",
        f"{quiet}: `hooks` is not supported by stayer; ignored (it has no tools)",
        f"{shell}: `shell: powershell` is not supported by stayer (its `!` commands run in "
        "bash); the skill is left out",
        f"{skill}: `hooks` is not supported by stayer: the skill's hooks would not run, so "
        "the skill is left out (move its checks into settings' hooks)",
    )


def test_permission_mode_auto_reads_as_default(repo: Path, env: dict[str, str]) -> None:
    path = write(
        repo / ".claude/agents/a.md", "---\nname: a\ndescription: d\npermissionMode: auto\n---\np"
    )
    found = load(repo, env)
    agent = found.agent("a")
    assert agent is not None and agent.permission_mode == "default"
    assert found.problems == (
        f"{path}: `permissionMode: auto` is Claude Code's classifier mode, which stayer does "
        "not have; read as `default` (asks as its parent would)",
    )


def test_plugin_commands_and_agents_in_subfolders(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    kit = tmp_path / "kit"
    write(kit / ".claude-plugin/plugin.json", json.dumps({"name": "kit"}))
    write(kit / "commands/git/push.md", "push")
    write(kit / "commands/top.md", "top")
    bad = write(kit / "agents/Bad Folder/x.md", "---\nname: x\ndescription: d\n---\np")
    found = load(repo, env, plugin_dirs=(kit,))
    assert [skill.name for skill in found.skills] == ["kit:git:push", "kit:top"]
    assert [agent.name for agent in found.agents if agent.plugin] == []
    assert found.problems == (
        f"{kit.resolve() / 'agents/Bad Folder/x.md'}: its folder `Bad Folder` cannot be part "
        "of an agent's name (use lowercase letters, digits, `-`, `.` and `_`); left out",
    )
    assert bad.exists()
