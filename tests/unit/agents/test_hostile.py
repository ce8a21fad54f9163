"""A repository's files written to hurt: values PyYAML cannot build, links out of the project,
FIFOs and devices, huge files and huge values, terminal escapes. `load_catalog` never raises
for them, never reads outside the project, and says what it left out in one clean line each."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stayer.agents.catalog import load_catalog
from stayer.agents.guard import MAX_ENTRIES, MAX_FILE_BYTES
from stayer.agents.model import Catalog
from stayer.errors import ConfigError

from .conftest import write

HOSTILE_FRONT_MATTER = {
    "int": "description: !!int abc",
    "float": "description: !!float abc",
    "bool": "description: !!bool maybe",
    "timestamp": "description: !!timestamp garbage",
    "date": "description: 2024-02-30",
    "superscript": 'description: d\nmaxTurns: "²"',
    "digits": "description: d\nmaxTurns: " + "7" * 5000,
    "digit-key": "7" * 5000 + ": x\ndescription: d",
    "deep": "description: d\ntools: " + "[" * 5000 + "]" * 5000,
    "deep-map": "description: d\ntools: " + "{a: " * 3000 + "1" + "}" * 3000,
    "python": "description: !!python/object:os.system [echo]",
    "nul": "description: a\x00b",
}


def load(repo: Path, env: dict[str, str], **options: object) -> Catalog:
    return load_catalog(repo, project_root=repo, env=env, **options)  # type: ignore[arg-type]


def assert_clean(problems: tuple[str, ...]) -> None:
    for line in problems:
        assert len(line) <= 300
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in line), line


def test_hostile_files_never_make_load_catalog_raise(repo: Path, env: dict[str, str]) -> None:
    for name, front in HOSTILE_FRONT_MATTER.items():
        write(repo / f".claude/agents/{name}.md", f"---\nname: {name}\n{front}\n---\nbody\n")
        write(repo / f".claude/skills/{name}/SKILL.md", f"---\n{front}\n---\nbody\n")
        write(repo / f".claude/commands/{name}.md", f"---\n{front}\n---\nbody\n")
    found = load(repo, env)
    assert_clean(found.problems)
    assert "superscript" not in [agent.name for agent in found.agents]
    assert "digits" not in [agent.name for agent in found.agents]


@pytest.mark.parametrize(
    "manifest",
    [
        '{"name": "kit", "version": ' + "1" * 5000 + "}",
        '{"name": "kit", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"name": "kit", "commands": "a\\u0000b"}',
    ],
    ids=["digits", "deep", "nul"],
)
def test_a_hostile_plugin_manifest_is_a_problem_line(
    repo: Path, env: dict[str, str], tmp_path: Path, manifest: str
) -> None:
    write(tmp_path / "kit/.claude-plugin/plugin.json", manifest)
    found = load(repo, env, plugin_dirs=(tmp_path / "kit",))
    assert found.problems and all("plugin.json" in line for line in found.problems)
    assert_clean(found.problems)


@pytest.mark.parametrize(
    "given",
    [
        '{"a": {"description": "d", "prompt": "p", "maxTurns": ' + "1" * 5000 + "}}",
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
        {"a": {"description": 10**5000, "prompt": "p"}},
    ],
    ids=["digits", "deep", "huge-value"],
)
def test_hostile_agents_flag_is_one_config_error_line(
    repo: Path, env: dict[str, str], given: object
) -> None:
    with pytest.raises(ConfigError) as raised:
        load(repo, env, agents_json=given)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 300


def test_yaml_aliases_are_never_expanded_into_a_problem_line(
    repo: Path, env: dict[str, str]
) -> None:
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    front = "\n".join(levels)
    write(
        repo / ".claude/agents/lol.md",
        f"---\nname: lol\n{front}\ndescription: d\nmaxTurns: *i\n---\nbody",
    )
    write(repo / ".claude/commands/lol.md", f"---\n{front}\ndescription: *i\n---\nbody")
    found = load(repo, env)
    assert found.problems == (
        f"{repo / '.claude/agents/lol.md'}: `maxTurns: a list` must be a whole number of "
        "turns, 1 or more",
        f"{repo / '.claude/commands/lol.md'}: `description: a list` must be text",
    )


def test_a_long_value_is_cut(repo: Path, env: dict[str, str]) -> None:
    write(repo / ".claude/commands/long.md", f"---\ndescription: {'x' * 50_000}\n---\nbody")
    found = load(repo, env)
    skill = found.skill("long")
    assert skill is not None and len(skill.description) == 10_000


def test_links_out_of_the_project_are_refused(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    secret = write(tmp_path / "outside/secret.md", "---\ndescription: SECRET\n---\nSECRET")
    (repo / ".claude/skills/env").mkdir(parents=True)
    (repo / ".claude/skills/env/SKILL.md").symlink_to("/proc/self/environ")
    write(secret.parent / "skill/SKILL.md", "---\ndescription: SECRET\n---\nSECRET")
    (repo / ".claude/skills/out").symlink_to(secret.parent / "skill")
    (repo / ".claude/commands").mkdir(parents=True)
    (repo / ".claude/commands/s.md").symlink_to(secret)
    (repo / ".claude/agents").symlink_to("/usr")
    write(repo / ".claude/commands/ok.md", "fine")
    own = write(repo / "docs/own.md", "---\ndescription: ours\n---\nours")
    (repo / ".claude/commands/own.md").symlink_to(own)  # inside the project: read
    found = load(repo, env)
    assert sorted(skill.name for skill in found.skills) == ["ok", "own"]
    refused = [line.split(": ", 1)[0] for line in found.problems]
    assert sorted(refused) == sorted(
        str(repo / p)
        for p in (".claude/agents", ".claude/skills/env/SKILL.md", ".claude/skills/out",
                  ".claude/commands/s.md")
    )  # fmt: skip
    assert all("leads outside the project" in line for line in found.problems)
    assert "SECRET" not in repr(found)


def test_fifos_devices_and_huge_files_are_not_read(repo: Path, env: dict[str, str]) -> None:
    commands = repo / ".claude/commands"
    commands.mkdir(parents=True)
    os.mkfifo(commands / "fifo.md")  # reading it would wait for a writer forever
    write(commands / "big.md", "x" * (MAX_FILE_BYTES + 1))
    (repo / ".claude/skills/dir/SKILL.md").mkdir(parents=True)
    found = load(repo, env)
    assert found.skills == ()
    assert found.problems == (
        f"{repo / '.claude/skills/dir/SKILL.md'}: is not a regular file (a folder, FIFO or "
        "device); refused",
        f"{commands / 'big.md'}: is larger than 1024 KiB; left out (make it smaller)",
        f"{commands / 'fifo.md'}: is not a regular file (a folder, FIFO or device); refused",
    )


def test_a_huge_folder_is_read_only_so_far(repo: Path, env: dict[str, str]) -> None:
    commands = repo / ".claude/commands"
    for i in range(MAX_ENTRIES + 5):
        write(commands / f"c{i:05}.md", "x")
    found = load(repo, env)
    assert found.problems == (
        f"{commands}: more than {MAX_ENTRIES} entries; only the first are read (keep "
        "definition folders small)",
    )


def test_control_characters_are_escaped(repo: Path, env: dict[str, str]) -> None:
    write(repo / ".claude/agents/\x1b]0;pwned\x07\nFAKE.md", "no front matter")
    write(
        repo / ".claude/commands/c.md",
        '---\ndescription: "a\\e[31mred\\nline"\nargument-hint: "\\x9b2J"\n---\nbody\x1b[0m\n',
    )
    found = load(repo, env)
    skill = found.skill("c")
    assert skill is not None
    assert (skill.description, skill.argument_hint, skill.body) == (
        "a\\x1b[31mred line",
        "\\x9b2J",
        "body\\x1b[0m\n",
    )
    assert found.problems == (
        f"{repo}/.claude/agents/\\x1b]0;pwned\\x07\\x0aFAKE.md: no `name` in its front matter; "
        "add one (the model calls the agent by it)",
    )


def test_a_plugins_default_folders_must_stay_inside_it(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    kit = tmp_path / "kit"
    write(kit / ".claude-plugin/plugin.json", json.dumps({"name": "kit"}))
    write(tmp_path / "elsewhere/x.md", "---\nname: x\ndescription: d\n---\np")
    write(tmp_path / "elsewhere/hooks.json", "{}")
    for part in ("skills", "commands", "agents"):
        (kit / part).symlink_to(tmp_path / "elsewhere")
    (kit / "hooks").mkdir()
    (kit / "hooks/hooks.json").symlink_to(tmp_path / "elsewhere/hooks.json")
    (kit / ".mcp.json").symlink_to(tmp_path / "elsewhere/hooks.json")
    found = load(repo, env, plugin_dirs=(kit,))
    assert (found.skills, [a.name for a in found.agents if a.plugin]) == ((), [])
    assert found.plugins[0].hooks_file is None and found.plugins[0].mcp_file is None
    assert sorted(line.split(": ", 1)[0] for line in found.problems) == sorted(
        str(kit / p) for p in ("skills", "commands", "agents", "hooks/hooks.json", ".mcp.json")
    )


def test_a_plugins_description_and_an_agents_model_are_clean(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    kit = tmp_path / "kit"
    write(
        kit / ".claude-plugin/plugin.json",
        json.dumps({"name": "kit", "description": "x\u001b[2J\ny", "version": "1\u009b"}),
    )
    write(repo / ".claude/agents/a.md", '---\nname: a\ndescription: d\nmodel: "m\\e]0;t"\n---\np')
    found = load(repo, env, plugin_dirs=(kit,))
    agent = found.agent("a")
    assert agent is not None and agent.model == "m\\x1b]0;t"
    assert (found.plugins[0].description, found.plugins[0].version) == ("x\\x1b[2J y", "1\\x9b")
