"""Settings' `agent` and `enabledPlugins`, and what a plugin brings to a session besides its
files: its hooks (`session.plugin_hooks`) and its MCP servers (`config.mcp_servers`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stayer.agents.model import Plugin
from stayer.config import load_settings
from stayer.config.mcp_servers import PluginServers, load_mcp_servers
from stayer.config.model import HookHandler, HookMatcher
from stayer.errors import ConfigError
from stayer.session.plugin_hooks import plugin_hooks, with_plugin_hooks


def write(path: Path, data: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def test_a_bad_plugin_entry_makes_its_file_unusable(home: dict[str, str], project: Path) -> None:
    """A plugin brings hooks: a list that cannot be read fails closed, as `hooks` does, since
    dropping a user's malformed `false` would let a project's `true` turn the plugin on."""
    written = {"enabledPlugins": {"a@market": True, "b@market": "yes"}}
    path = write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", written)
    with pytest.raises(ConfigError) as raised:
        load_settings(project, home)
    (line,) = str(raised.value).splitlines()
    assert line.startswith(f"{path}:4:17: enabledPlugins.b@market: input should be a valid")


def test_agent_takes_the_last_files_value_and_enabled_plugins_merge_plugin_by_plugin(
    home: dict[str, str], project: Path
) -> None:
    user = {"agent": "writer", "enabledPlugins": {"a@market": True, "b@market": True}}
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", user)
    write(project / ".claude" / "settings.json", {"enabledPlugins": {"b@market": False}})
    write(project / ".claude" / "settings.local.json", {"agent": "reviewer"})

    settings = load_settings(project, home).settings

    assert settings.agent == "reviewer"
    assert settings.enabled_plugins == {"a@market": True, "b@market": False}


def test_no_file_naming_plugins_leaves_them_unset(home: dict[str, str], project: Path) -> None:
    write(project / ".claude" / "settings.json", {"model": "sonnet"})
    settings = load_settings(project, home).settings
    assert (settings.agent, settings.enabled_plugins) == (None, None)


@pytest.mark.parametrize(
    ("written", "what"),
    [
        ({"agent": 3}, "agent"),
        ({"agent": ""}, "agent"),
    ],
)
def test_a_malformed_value_is_dropped_whole_with_one_warning_and_the_rest_applies(
    home: dict[str, str], project: Path, written: dict[str, Any], what: str
) -> None:
    path = write(project / ".claude" / "settings.json", {**written, "model": "sonnet"})

    loaded = load_settings(project, home)

    (warning,) = loaded.warnings
    assert warning.startswith(f"{path}:") and what in warning
    assert warning.endswith("ignored this value, the rest of the file applies")
    assert loaded.settings.agent is None
    assert loaded.settings.model == "sonnet"


def test_an_enabled_plugins_value_of_the_wrong_type_stops_the_run(
    home: dict[str, str], project: Path
) -> None:
    path = write(project / ".claude" / "settings.json", {"enabledPlugins": ["a@market"]})
    with pytest.raises(ConfigError, match=f"^{path}:.*enabledPlugins"):
        load_settings(project, home)


def plugin(root: Path, *, hooks_file: Path) -> Plugin:
    return Plugin(name="tidy", root=root, source="--plugin-dir", hooks_file=hooks_file)


def test_a_plugin_the_user_turned_off_stays_off_whatever_the_project_says(
    home: dict[str, str], project: Path
) -> None:
    user = {"enabledPlugins": {"a@m": False, "b@m": False, "c@m": True}}
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", user)
    write(Path(home["STAYER_CONFIG_DIR"]) / "settings.json", {"enabledPlugins": {"b@m": True}})
    write(project / ".claude" / "settings.json", {"enabledPlugins": {"a@m": True, "b@m": False}})
    write(project / ".claude" / "settings.local.json", {"enabledPlugins": {"a@m": True}})
    write(project / ".stayer" / "settings.json", {"enabledPlugins": {"c@m": False}})

    assert load_settings(project, home).settings.enabled_plugins == {
        "a@m": False,  # the user's off wins over project and local
        "b@m": False,  # the user's own later file turned it on; the project may turn it off
        "c@m": False,
    }
    given = load_settings(project, home, flag_settings='{"enabledPlugins": {"a@m": true}}')
    assert given.settings.enabled_plugins == {"a@m": True, "b@m": False, "c@m": False}


def test_a_plugins_hooks_have_its_root_in_their_commands_and_follow_the_settings_ones(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tidy"
    hooks = {
        "description": "formats after edits",
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "Edit|Write",
                    "hooks": [{"type": "command", "command": '"${CLAUDE_PLUGIN_ROOT}/fmt.sh"'}],
                }
            ]
        },
    }
    found = plugin_hooks([plugin(root, hooks_file=write(root / "hooks" / "hooks.json", hooks))])

    (matcher,) = found["PostToolUse"]
    assert matcher.matcher == "Edit|Write"
    assert [handler.command for handler in matcher.hooks] == [f'"{root}/fmt.sh"']

    own = HookMatcher(hooks=(HookHandler(type="command", command="echo mine"),))
    combined = with_plugin_hooks({"PostToolUse": (own,), "Stop": (own,)}, found)
    assert combined == {"PostToolUse": (own, matcher), "Stop": (own,)}


def test_a_plugins_folder_goes_into_its_hooks_quoted_for_where_it_stands(
    tmp_path: Path,
) -> None:
    root = tmp_path / "my kit;x"
    commands = [
        "sh ${CLAUDE_PLUGIN_ROOT}/a.sh",
        "echo '${CLAUDE_PLUGIN_ROOT}'",
        "ls $CLAUDE_PLUGIN_ROOT",
    ]
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": c} for c in commands]}]}}
    found = plugin_hooks([plugin(root, hooks_file=write(root / "hooks.json", hooks))])

    (matcher,) = found["Stop"]
    assert [handler.command for handler in matcher.hooks] == [
        f"sh '{root}'/a.sh",
        f"echo '{root}'",
        "ls $CLAUDE_PLUGIN_ROOT",  # the shell's, from the hook's environment
    ]
    assert {getattr(handler, "plugin_root", None) for handler in matcher.hooks} == {str(root)}

    heredoc = {"type": "command", "command": "cat <<E\n${CLAUDE_PLUGIN_ROOT}\nE"}
    path = write(root / "hooks.json", {"hooks": {"Stop": [{"hooks": [heredoc]}]}})
    with pytest.raises(ConfigError) as caught:
        plugin_hooks([plugin(root, hooks_file=path)])
    assert str(caught.value) == (
        f"plugin tidy: {path}: ${{CLAUDE_PLUGIN_ROOT}} in the command `cat <<E`… stands where the"
        " folder's name cannot be quoted safely (after a backquote, here-document, ${…},"
        " arithmetic, case or comment); fix it, or leave the plugin out"
    )


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("{not json", "not valid JSON"),
        ('{"PreToolUse": []}', 'needs a "hooks" object'),
        ('{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}', "command"),
    ],
)
def test_a_hooks_file_that_cannot_be_used_stops_the_session_in_one_line(
    tmp_path: Path, text: str, what: str
) -> None:
    root = tmp_path / "tidy"
    path = write(root / "hooks" / "hooks.json", text)
    with pytest.raises(ConfigError) as caught:
        plugin_hooks([plugin(root, hooks_file=path)])
    message = str(caught.value)
    assert message.startswith(f"plugin tidy: {path}: ") and what in message
    assert message.endswith("fix it, or leave the plugin out") and "\n" not in message


def test_a_plugins_servers_are_named_for_it_start_unasked_and_never_replace_the_users(
    tmp_path: Path, home: dict[str, str], project: Path
) -> None:
    root = tmp_path / "kit"
    servers = {
        "mcpServers": {
            "kitchen": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/kitchen.py"]},
            "clash": {"command": "plugin-clash"},
        }
    }
    file = write(root / ".mcp.json", servers)
    flat = write(tmp_path / "flat" / ".mcp.json", {"solo": {"command": "solo-server"}})
    mine = {"mcpServers": {"plugin_kit_clash": {"command": "my-own"}}}

    found = load_mcp_servers(
        cwd=project,
        env=home,
        settings=load_settings(project, home),
        flag_configs=[mine],
        plugins=[PluginServers("kit", root, file), PluginServers("flat", flat.parent, flat)],
    )

    started = {config.name: config for config in found.start}
    assert sorted(started) == ["plugin_flat_solo", "plugin_kit_clash", "plugin_kit_kitchen"]
    assert started["plugin_kit_kitchen"].args == (f"{root}/kitchen.py",)
    assert started["plugin_kit_kitchen"].scope == "plugin"
    assert started["plugin_kit_clash"].command == "my-own"
    assert found.warnings == (
        f"{file}: server clash of plugin kit is named plugin_kit_clash, as a server of your "
        "own configuration is; yours is used",
    )


def test_a_broken_plugin_server_file_is_a_warning_and_strict_config_leaves_plugins_out(
    tmp_path: Path, home: dict[str, str], project: Path
) -> None:
    broken = write(tmp_path / "bad" / ".mcp.json", "{oops")
    good = write(tmp_path / "good" / ".mcp.json", {"one": {"command": "one"}})
    plugins = [
        PluginServers("bad", broken.parent, broken),
        PluginServers("good", good.parent, good),
    ]
    loaded = load_settings(project, home)

    found = load_mcp_servers(cwd=project, env=home, settings=loaded, plugins=plugins)
    assert [config.name for config in found.start] == ["plugin_good_one"]
    assert found.warnings == (
        f"{broken}:1:2: not valid JSON (Expecting property name enclosed in double quotes); "
        "none of its MCP servers were started",
    )

    strict = load_mcp_servers(cwd=project, env=home, settings=loaded, plugins=plugins, strict=True)
    assert (strict.start, strict.warnings) == ((), ())
