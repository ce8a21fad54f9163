"""The catalog a session starts with: a Claude Code project's and user's files, the plugins and
`--agents`, which definition of a name wins, one problem line per file left out, and nothing
costly imported when there is nothing to read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stayer.agents.arguments import render
from stayer.agents.catalog import load_catalog
from stayer.agents.model import Catalog
from stayer.errors import ConfigError

from .conftest import write


def agent(name: str, description: str = "d", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nYou are {name}.\n"


def catalog(
    cwd: Path,
    repo: Path | None,
    env: dict[str, str],
    *,
    agents_json: str | dict[str, object] | None = None,
    plugin_dirs: tuple[Path, ...] = (),
    enabled_plugins: dict[str, bool] | None = None,
) -> Catalog:
    return load_catalog(
        cwd,
        project_root=repo,
        env=env,
        agents_json=agents_json,
        plugin_dirs=plugin_dirs,
        enabled_plugins=enabled_plugins,
    )


def sources(found: Catalog) -> dict[str, str]:
    return {a.name: a.source for a in found.agents if a.scope != "built-in"}


def test_a_claude_code_project_as_it_lies_on_disk(repo: Path, env: dict[str, str]) -> None:
    write(
        repo / ".claude/agents/reviewer.md",
        agent("reviewer", extra="tools: Read, Grep\nmodel: haiku\n"),
    )
    write(repo / ".claude/skills/deploy/SKILL.md", "---\ndescription: Ship it\n---\nDeploy $0")
    write(repo / ".claude/commands/greet.md", "Say hello to $ARGUMENTS ($0)")
    write(repo / ".claude/agents/README.md", "# Our agents\n")  # documentation, not an agent
    found = catalog(repo, repo, env)
    reviewer = found.agent("reviewer")
    assert reviewer is not None
    assert (reviewer.tools, reviewer.model, reviewer.scope) == (
        ("Read", "Grep"),
        "haiku",
        "project",
    )
    assert [a.name for a in found.agents] == ["general-purpose", "Explore", "Plan", "reviewer"]
    assert [(s.name, s.kind, s.description) for s in found.skills] == [
        ("deploy", "skill", "Ship it"),
        ("greet", "command", "Say hello to $ARGUMENTS ($0)"),
    ]
    greet = found.skill("/greet")
    assert greet == found.skills[1]
    assert render(greet.body, "Ada Lovelace", session_id="s", project_dir=repo).fill([]) == (
        "Say hello to Ada Lovelace (Ada)"
    )
    assert (found.plugins, found.problems) == ((), ())


def test_nearest_folder_wins_and_stayer_over_claude(repo: Path, env: dict[str, str]) -> None:
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    far = write(repo / ".claude/agents/a.md", agent("a"))
    write(repo / ".claude/agents/b.md", agent("b"))
    near_b = write(repo / "pkg/.stayer/agents/b.md", agent("b"))
    write(repo / "pkg/.claude/agents/b.md", agent("b"))
    write(repo.parent / ".claude/agents/outside.md", agent("outside"))  # above the repository
    assert sources(catalog(cwd, repo, env)) == {"a": str(far), "b": str(near_b)}


def test_outside_a_repository_only_the_working_directory_counts(
    tmp_path: Path, env: dict[str, str]
) -> None:
    cwd = tmp_path / "loose" / "dir"
    here = write(cwd / ".claude/agents/a.md", agent("a"))
    write(tmp_path / "loose/.claude/agents/b.md", agent("b"))
    assert sources(catalog(cwd, None, env)) == {"a": str(here)}


def test_agent_precedence_flag_project_user_plugin_built_in(
    repo: Path, home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    plugin = tmp_path / "kit"
    write(plugin / ".claude-plugin/plugin.json", '{"name": "kit"}')
    write(plugin / "agents/helper.md", agent("helper"))
    write(plugin / "agents/deep/helper.md", agent("helper"))
    write(home / ".claude/agents/mine.md", agent("mine", "from claude home"))
    user_mine = write(home / ".stayer/agents/mine.md", agent("mine", "from stayer home"))
    write(home / ".claude/agents/shared.md", agent("shared", "user"))
    project_shared = write(repo / ".claude/agents/shared.md", agent("shared", "project"))
    write(repo / ".claude/agents/flagged.md", agent("flagged"))
    explore = write(repo / ".claude/agents/explore.md", agent("Explore", "our own explore"))
    found = catalog(
        repo,
        repo,
        env,
        plugin_dirs=(plugin,),
        agents_json={"flagged": {"description": "from the flag", "prompt": "p"}},
    )
    assert sources(found) == {
        "Explore": str(explore),
        "kit:helper": str(plugin.resolve() / "agents/helper.md"),
        "kit:deep:helper": str(plugin.resolve() / "agents/deep/helper.md"),
        "mine": str(user_mine),
        "shared": str(project_shared),
        "flagged": "--agents",
    }
    # allowed, as in Claude Code, but said: a repository redefines what the user relies on
    assert found.problems == (
        f"{explore}: notice: this project's agent replaces the built-in Explore agent",
        f"{project_shared}: notice: this project's agent replaces your own agent `shared` "
        f"({home / '.claude/agents/shared.md'})",
    )


def test_config_dir_variables_move_the_users_folders(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    claude = write(tmp_path / "cc/agents/a.md", agent("a"))
    stayer = write(tmp_path / "st/agents/b.md", agent("b"))
    write(Path(env["HOME"]) / ".claude/agents/c.md", agent("c"))
    env = {
        **env,
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "STAYER_CONFIG_DIR": str(tmp_path / "st"),
    }
    assert sources(catalog(repo, repo, env)) == {"a": str(claude), "b": str(stayer)}


def test_skill_precedence_home_project_plugin_and_skill_over_command(
    repo: Path, home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    plugin = tmp_path / "kit"
    write(plugin / ".claude-plugin/plugin.json", '{"name": "kit"}')
    write(plugin / "skills/lint/SKILL.md", "plugin lint")
    write(plugin / "commands/hello.md", "plugin hello")
    write(home / ".claude/skills/deploy/SKILL.md", "home deploy")
    write(home / ".agents/skills/tidy/SKILL.md", "home tidy")
    write(repo / ".claude/skills/deploy/SKILL.md", "project deploy")
    write(repo / ".agents/skills/review/SKILL.md", "project agents review")
    write(repo / ".claude/skills/review/SKILL.md", "project claude review")
    write(repo / ".stayer/commands/review.md", "project command review")
    write(repo / ".claude/commands/lint.md", "project lint command")
    write(home / ".claude/commands/greet.md", "home greet")
    write(repo / ".claude/commands/greet.md", "project greet")
    found = catalog(repo, repo, env, plugin_dirs=(plugin,))
    assert [(s.name, s.kind, s.scope, s.body) for s in found.skills] == [
        ("deploy", "skill", "user", "home deploy"),
        ("greet", "command", "user", "home greet"),
        ("kit:hello", "command", "plugin", "plugin hello"),
        ("kit:lint", "skill", "plugin", "plugin lint"),
        ("lint", "command", "project", "project lint command"),
        ("review", "skill", "project", "project claude review"),
        ("tidy", "skill", "user", "home tidy"),
    ]
    assert [p.name for p in found.plugins] == ["kit"]


def test_every_file_left_out_is_one_problem_line_and_the_rest_loads(
    repo: Path, env: dict[str, str]
) -> None:
    no_description = write(repo / ".claude/agents/a.md", "---\nname: a\n---\nprompt")
    first = write(repo / ".claude/agents/one.md", agent("same"))
    second = write(repo / ".claude/agents/two.md", agent("same"))
    bad_skill = write(repo / ".claude/skills/s/SKILL.md", "---\ncontext: inline\n---\nx")
    write(repo / ".claude/skills/good/SKILL.md", "good")
    first_cmd = write(repo / ".claude/commands/a/go.md", "a")
    second_cmd = write(repo / ".claude/commands/b/go.md", "b")
    found = catalog(repo, repo, env, enabled_plugins={"kit@market": True})
    assert [s.name for s in found.skills] == ["go", "good"]
    assert sources(found) == {"same": str(first)}
    assert found.problems == (
        "enabledPlugins: kit@market is not installed on this machine; stayer loads only plugins "
        "already on disk (install it with Claude Code, or pass --plugin-dir DIR)",
        f"{no_description}: no `description` in its front matter; add one (the model picks "
        "agents by it)",
        f"{second}: agent `same` is also defined in {first}; this one is left out",
        f"{bad_skill}: `context: inline` must be fork (the only other context is the default, "
        "inline)",
        f"{second_cmd}: `/go` is also defined by {first_cmd}; this one is left out",
    )


def test_enabled_plugins_on_disk_join_and_a_plugin_dir_wins_over_one(
    repo: Path, home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    installed = tmp_path / "installed-kit"
    write(installed / ".claude-plugin/plugin.json", '{"name": "kit", "version": "2.0.0"}')
    write(installed / "commands/hi.md", "installed")
    other = tmp_path / "installed-other"
    write(other / ".claude-plugin/plugin.json", '{"name": "other"}')
    record = {"version": 2, "plugins": {
        "kit@m": [{"installPath": str(installed), "version": "2.0.0"}],
        "other@m": [{"installPath": str(other), "version": "1.0.0"}],
    }}  # fmt: skip
    write(home / ".claude/plugins/installed_plugins.json", json.dumps(record))
    local = tmp_path / "local-kit"
    write(local / ".claude-plugin/plugin.json", '{"name": "kit"}')
    write(local / "commands/hi.md", "local")
    found = catalog(
        repo, repo, env, plugin_dirs=(local,), enabled_plugins={"kit@m": True, "other@m": True}
    )
    assert [(p.name, p.source, p.version) for p in found.plugins] == [
        ("kit", "--plugin-dir", None),
        ("other", "enabledPlugins", "1.0.0"),
    ]
    assert [(s.name, s.body) for s in found.skills] == [("kit:hi", "local")]
    assert found.problems == ()


def test_a_bad_agents_flag_is_a_config_error(repo: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"^--agents: not valid JSON"):
        catalog(repo, repo, env, agents_json="{")


def test_an_empty_project_is_the_built_ins_only(repo: Path, env: dict[str, str]) -> None:
    found = catalog(repo, repo, env)
    assert ([a.name for a in found.agents], found.skills, found.problems) == (
        ["general-purpose", "Explore", "Plan"],
        (),
        (),
    )


PROBE = """\
import sys
from pathlib import Path
from stayer.agents.arguments import render
from stayer.agents.catalog import load_catalog
cwd = Path(sys.argv[1])
load_catalog(cwd, project_root=cwd, env={"HOME": sys.argv[2]})
print(sorted(m for m in ("yaml", "stayer.agents.definitions", "stayer.agents.skills",
                         "stayer.agents.plugins", "stayer.config.model") if m in sys.modules))
"""


def imported(cwd: Path, home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(cwd), str(home)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.strip()


def test_nothing_to_read_imports_no_parser(repo: Path, home: Path) -> None:
    assert imported(repo, home) == "[]"
    write(repo / ".claude/agents/a.md", agent("a"))
    assert imported(repo, home) == ("['stayer.agents.definitions', 'stayer.config.model', 'yaml']")


def test_a_missing_preloaded_skill_or_forked_agent_is_a_problem(
    repo: Path, env: dict[str, str]
) -> None:
    agent_file = write(repo / ".claude/agents/a.md", agent("a", extra="skills: [there, gone]\n"))
    write(repo / ".claude/skills/there/SKILL.md", "x")
    skill_file = write(
        repo / ".claude/skills/fork/SKILL.md", "---\ncontext: fork\nagent: nobody\n---\nx"
    )
    assert catalog(repo, repo, env).problems == (
        f"{agent_file}: agent `a` preloads skill `gone`, which was not found; add the skill or "
        "take it out of `skills`",
        f"{skill_file}: `agent: nobody` names no agent there is; use one of Explore, Plan, a, "
        "general-purpose",
    )


def test_a_relative_plugin_dir_is_read_from_the_working_directory(
    repo: Path, env: dict[str, str]
) -> None:
    write(repo / "plugins/kit/.claude-plugin/plugin.json", '{"name": "kit"}')
    found = catalog(repo, repo, env, plugin_dirs=(Path("plugins/kit"),))
    assert [(p.name, p.root) for p in found.plugins] == [("kit", repo / "plugins/kit")]
