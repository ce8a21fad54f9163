"""Plugins on disk: the manifest, the parts at the root and those it names, paths kept inside,
and enabled plugins looked up where Claude Code installed them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stayer.agents.model import Plugin
from stayer.agents.plugins import PluginParts, installed_roots, read_plugin

from .conftest import write


def manifest(root: Path, data: object) -> Path:
    return write(root / ".claude-plugin" / "plugin.json", json.dumps(data))


def test_a_plugin_with_every_part_at_its_root(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    manifest(root, {"name": "kit", "version": "1.0.0", "description": "Tools"})
    for part in ("skills/lint/SKILL.md", "commands/hello.md", "agents/fixer.md"):
        write(root / part, "x")
    write(root / "hooks" / "hooks.json", "{}")
    write(root / ".mcp.json", "{}")
    plugin, parts, problems = read_plugin(root, source="--plugin-dir")
    real = root.resolve()
    assert (plugin, parts, problems) == (
        Plugin(
            name="kit",
            root=root,
            source="--plugin-dir",
            version="1.0.0",
            description="Tools",
            hooks_file=real / "hooks" / "hooks.json",
            mcp_file=real / ".mcp.json",
        ),
        PluginParts(
            skills=(real / "skills",), commands=(real / "commands",), agents=(real / "agents",)
        ),
        (),
    )


def test_the_manifest_may_name_more_paths_inside_the_plugin(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    manifest(
        root,
        {
            "name": "kit",
            "commands": ["./extra/cmds", "./one.md"],
            "agents": "./team",
            "hooks": "./config/hooks.json",
            "mcpServers": "./servers.json",
        },
    )
    for part in ("extra/cmds/a.md", "one.md", "team/x.md", "config/hooks.json", "servers.json"):
        write(root / part, "x")
    plugin, parts, problems = read_plugin(root, source="--plugin-dir")
    real = root.resolve()
    assert problems == ()
    assert parts == PluginParts(
        commands=(real / "extra/cmds", real / "one.md"), agents=(real / "team",)
    )
    assert plugin is not None
    assert (plugin.hooks_file, plugin.mcp_file) == (
        real / "config/hooks.json",
        real / "servers.json",
    )


def test_paths_that_lead_outside_the_plugin_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    write(tmp_path / "secrets" / "x.md", "x")
    (root / "link").parent.mkdir(parents=True)
    (root / "link").symlink_to(tmp_path / "secrets")
    manifest(root, {"name": "kit", "agents": ["../secrets", "/etc", "./link"], "skills": "./nope"})
    plugin, parts, problems = read_plugin(root, source="--plugin-dir")
    where = root / ".claude-plugin" / "plugin.json"
    assert plugin is not None and parts == PluginParts()
    assert problems == (
        f"{where}: `skills` path ./nope does not exist",
        *(
            f"{where}: `agents` path {item} leads outside the plugin; refused (a plugin's paths "
            "must stay inside its folder)"
            for item in ("../secrets", "/etc", "./link")
        ),
    )


def test_inline_hooks_are_said_to_be_unsupported(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    manifest(root, {"name": "kit", "hooks": {"PreToolUse": []}})
    plugin, _, problems = read_plugin(root, source="--plugin-dir")
    assert plugin is not None and plugin.hooks_file is None
    assert problems == (
        f"{root / '.claude-plugin' / 'plugin.json'}: `hooks` written inline is not supported; "
        "put it in a file inside the plugin and name that file",
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "{root}: not a plugin (no .claude-plugin/plugin.json); the plugin is left out"),
        ("{", "{manifest}: not valid JSON (Expecting property name enclosed in double quotes, "
         "line 1); fix it"),
        ("[]", "{manifest}: must be a JSON object with at least a `name`"),
        ("{}", "{manifest}: `name` must be given in kebab-case (such as `my-plugin`); the "
         "plugin is left out"),
        ('{"name": "My Plugin"}', "{manifest}: `name` must be given in kebab-case (such as "
         "`my-plugin`); the plugin is left out"),
    ],
)  # fmt: skip
def test_a_plugin_without_a_usable_manifest_is_left_out(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    root = tmp_path / "kit"
    root.mkdir()
    path = root / ".claude-plugin" / "plugin.json"
    if content is not None:
        write(path, content)
    assert read_plugin(root, source="--plugin-dir") == (
        None,
        PluginParts(),
        (problem.format(root=root, manifest=path),),
    )


def test_a_missing_plugin_dir_is_a_problem(tmp_path: Path) -> None:
    plugin, _, problems = read_plugin(tmp_path / "nope", source="--plugin-dir")
    assert (plugin, problems) == (None, (f"{tmp_path / 'nope'}: no such plugin folder",))


def test_enabled_plugins_found_in_version_2_of_the_record(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    install = claude / "plugins" / "cache" / "market" / "kit" / "1.2.0"
    install.mkdir(parents=True)
    record = {
        "version": 2,
        "plugins": {
            "kit@market": [
                {"scope": "project", "installPath": str(tmp_path / "gone"), "version": "0.1"},
                {"scope": "user", "installPath": str(install), "version": "1.2.0"},
            ]
        },
    }
    write(claude / "plugins" / "installed_plugins.json", json.dumps(record))
    enabled = {"kit@market": True, "off@market": False, "other@market": True}
    assert installed_roots(enabled, claude_dir=claude) == (
        [(install, "1.2.0")],
        [
            "enabledPlugins: other@market is not installed on this machine; stayer loads only "
            "plugins already on disk (install it with Claude Code, or pass --plugin-dir DIR)"
        ],
    )


def test_enabled_plugins_found_in_version_1_of_the_record(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    (claude / "plugins" / "cache" / "kit").mkdir(parents=True)
    record = {"plugins": {"kit@market": {"installPath": "cache/kit", "version": "1"}}}
    write(claude / "plugins" / "installed_plugins.json", json.dumps(record))
    assert installed_roots({"kit@market": True}, claude_dir=claude) == (
        [(claude / "plugins" / "cache" / "kit", "1")],
        [],
    )


def test_an_enabled_plugin_without_a_record_is_a_problem(tmp_path: Path) -> None:
    roots, problems = installed_roots({"kit@market": True}, claude_dir=tmp_path)
    assert (roots, len(problems)) == ([], 1)
    assert problems[0].startswith("enabledPlugins: kit@market is not installed on this machine")
