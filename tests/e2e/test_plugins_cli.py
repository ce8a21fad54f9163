"""Local plugins over the real CLI (`--plugin-dir`), the fake model server on the wire: a
plugin's hook fires with its root in the command, its agents, skills and commands are in the
init line, its MCP server's tools are offered under the plugin's name, and a folder that is not
a plugin, or an agent file that cannot be used, is said in one line."""

from __future__ import annotations

import json
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = ROOT / "tests" / "mcp_servers" / "kitchen.py"
STREAM = ("--output-format", "stream-json", "--verbose")
READERS = pytest.mark.skipif(
    find_spec("stayer.agents.plugins") is None,
    reason="needs the agents package's file readers (stayer.agents.plugins)",
)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """User folders of the test's own, so no real settings, agents or plugins apply."""
    folder = tmp_path / "home"
    folder.mkdir()
    return {"HOME": str(folder), "STAYER_CONFIG_DIR": str(folder / ".stayer"),
            "CLAUDE_CONFIG_DIR": str(folder / ".claude")}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def write(path: Path, text: str | dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if isinstance(text, str) else json.dumps(text))
    return path


def tidy_plugin(root: Path) -> Path:
    """A plugin with every part: a hook, an agent, a skill, a command and an MCP server."""
    write(root / ".claude-plugin" / "plugin.json", {"name": "tidy", "version": "1.0.0"})
    write(root / "note.txt", "tidy plugin says: keep it short")
    hook = {"type": "command", "command": 'cat "${CLAUDE_PLUGIN_ROOT}/note.txt"'}
    write(root / "hooks" / "hooks.json", {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})
    write(
        root / "agents" / "sweeper.md",
        "---\nname: sweeper\ndescription: Cleans up.\ntools: Read\n---\nYou sweep.\n",
    )
    write(root / "skills" / "fmt" / "SKILL.md", "---\ndescription: Formats code.\n---\nRun it.\n")
    write(root / "commands" / "hello.md", "---\ndescription: Says hello.\n---\nSay hello.\n")
    server = {"command": sys.executable, "args": [str(KITCHEN)]}
    write(root / ".mcp.json", {"mcpServers": {"kitchen": server}})
    return root


def init_line(stdout: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return next(line for line in lines if line.get("subtype") == "init")


def tool_names(request: RecordedRequest) -> list[str]:
    body = request.body
    assert isinstance(body, dict)
    return [tool["name"] for tool in body.get("tools", [])]


def first_prompt(request: RecordedRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, dict)
    content = first["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content)


@READERS
def test_a_local_plugin_brings_its_hook_agent_skill_command_and_server(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    root = tidy_plugin(tmp_path / "tidy")
    call = ToolCall("toolu_1", "mcp__plugin_tidy_kitchen__add", {"a": 2, "b": 3})
    server.enqueue(reply(call), reply("5"))
    done = stayer("-p", "add 2 and 3", "--plugin-dir", str(root),
                  "--allowedTools", "mcp__plugin_tidy_kitchen", *STREAM, cwd=project,
                  env={**server.env(), **home, "MCP_CONNECTION_NONBLOCKING": "0"})  # fmt: skip

    assert done.status == 0, done.stderr
    init = init_line(done.stdout)
    assert init["plugins"] == [{"name": "tidy", "path": str(root)}]
    assert "tidy:sweeper" in init["agents"]
    assert "tidy:fmt" in init["skills"]
    assert {"tidy:fmt", "tidy:hello"} <= set(init["slash_commands"])
    assert {"name": "plugin_tidy_kitchen", "status": "connected"}.items() <= next(
        entry for entry in init["mcp_servers"] if entry["name"] == "plugin_tidy_kitchen"
    ).items()
    first = server.requests[0]
    assert "tidy plugin says: keep it short" in first_prompt(first)  # the hook ran, rooted
    assert "mcp__plugin_tidy_kitchen__add" in tool_names(first)
    assert init["settings_warnings"] == []


def test_a_folder_that_is_not_a_plugin_stops_the_run_in_one_line(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for given, said in (
        (plain, f"stayer: --plugin-dir {plain}: not a plugin (it has no "),
        (tmp_path / "missing", f"stayer: --plugin-dir {tmp_path / 'missing'}: no such folder"),
    ):
        done = stayer("-p", "hi", "--plugin-dir", str(given), cwd=project,
                      env={**server.env(), **home})  # fmt: skip
        assert done.status == 2
        assert done.stderr.startswith(said) and done.stderr.count("\n") == 1
    assert server.requests == []


@READERS
def test_a_plugin_whose_manifest_is_unusable_stops_the_run_naming_it(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "bad"
    write(root / ".claude-plugin" / "plugin.json", {"name": "Not Kebab"})
    done = stayer("-p", "hi", "--plugin-dir", str(root), cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 2
    assert done.stderr.startswith("stayer: --plugin-dir: ") and str(root) in done.stderr
    assert done.stderr.count("\n") == 1


@READERS
def test_an_agent_file_that_cannot_be_used_is_said_on_stderr_and_in_the_init_line(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    bad = write(project / ".claude" / "agents" / "half.md", "---\nname: half\n---\nNo words.\n")
    server.enqueue(reply("hi"), reply("hi"))

    done = stayer("-p", "hi", *STREAM, cwd=project, env={**server.env(), **home})
    assert done.status == 0, done.stderr
    (warning,) = init_line(done.stdout)["settings_warnings"]
    assert str(bad) in warning

    text = stayer("-p", "hi", cwd=project, env={**server.env(), **home})
    assert text.status == 0
    assert f"stayer: {warning}\n" in text.stderr


@READERS
def test_a_plugin_enabled_in_settings_loads_from_where_claude_code_installed_it(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "cache" / "tidy"
    write(root / ".claude-plugin" / "plugin.json", {"name": "tidy"})
    write(root / "commands" / "hello.md", "---\ndescription: Says hello.\n---\nSay hello.\n")
    installed = {"version": 2, "plugins": {"tidy@market": [{"installPath": str(root)}]}}
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "plugins" / "installed_plugins.json", installed)
    settings = project / ".claude" / "settings.json"
    write(settings, {"enabledPlugins": {"tidy@market": True}})
    server.enqueue(reply("hi"), reply("hi"))

    done = stayer("-p", "hi", *STREAM, cwd=project, env={**server.env(), **home})
    assert done.status == 0, done.stderr
    init = init_line(done.stdout)
    assert init["plugins"] == [{"name": "tidy", "path": str(root)}]
    assert "tidy:hello" in init["slash_commands"]

    write(project / ".claude" / "settings.local.json", {"enabledPlugins": {"tidy@market": False}})
    done = stayer("-p", "hi", *STREAM, cwd=project, env={**server.env(), **home})
    assert done.status == 0, done.stderr
    assert init_line(done.stdout)["plugins"] == []


@READERS
def test_a_plugin_whose_hooks_file_is_broken_stops_the_run_in_one_line(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "tidy"
    write(root / ".claude-plugin" / "plugin.json", {"name": "tidy"})
    hooks = write(root / "hooks" / "hooks.json", '{"hooks": {"PreToolUse": "block everything"}}')
    done = stayer("-p", "hi", "--plugin-dir", str(root), cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 2
    assert done.stderr.startswith(f"stayer: plugin tidy: {hooks}: ")
    assert done.stderr.endswith("fix it, or leave the plugin out\n")
    assert done.stderr.count("\n") == 1 and server.requests == []


@READERS
def test_a_plugin_folder_named_like_shell_syntax_stays_one_path_in_its_hooks(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "My Plugins;touch INJECTED;" / "tidy"
    write(root / ".claude-plugin" / "plugin.json", {"name": "tidy"})
    write(root / "hooks" / "h.sh", 'printf "bare sees %s\\n" "$CLAUDE_PLUGIN_ROOT"\n')
    write(root / "note.txt", "quoted reads the note")
    hooks = [
        {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/h.sh"},
        {"type": "command", "command": 'cat "${CLAUDE_PLUGIN_ROOT}/note.txt"'},
    ]
    write(root / "hooks" / "hooks.json", {"hooks": {"UserPromptSubmit": [{"hooks": hooks}]}})
    server.enqueue(reply("hi"))
    done = stayer("-p", "hi", "--plugin-dir", str(root), cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 0, done.stderr
    prompt = first_prompt(server.requests[0])
    assert f"bare sees {root}" in prompt  # ran, and CLAUDE_PLUGIN_ROOT is in its environment
    assert "quoted reads the note" in prompt
    assert list(tmp_path.rglob("INJECTED*")) == []  # the project is in tmp_path too
