"""The REPL's MCP commands over a real session and the real test server on stdio: /mcp lists
every server with its state and where it is configured; a server's prompts become slash
commands once it is up (and go with it), and running one sends its text; /context counts the
tool definitions and what deferral saves; the approval question names each server's command
line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stayer.driver import Submit
from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.session.mcp_link import McpPrompt, McpPromptArgument
from stayer.tools.base import ToolFailure
from stayer.ui.repl.commands import Commands
from stayer.ui.repl.commands_context import breakdown, render
from stayer.ui.repl.commands_mcp import (
    EMPTY,
    approval_question,
    ask_approval,
    prompt_command,
    servers_text,
)
from stayer.ui.repl.mcp_watch import McpWatch
from tests.fakes.model_server import FakeModelServer
from tests.session.test_mcp_approval import project, until_connected
from tests.ui.repl.commands_kit import RecordingRepl, opened, run
from tests.ui.repl.test_commands import echo

KITCHEN = Path(__file__).resolve().parents[2] / "mcp_servers" / "kitchen.py"
DEFER = {"ENABLE_TOOL_SEARCH": "true"}


def mcp_config(**servers: dict[str, Any]) -> tuple[str, ...]:
    return (json.dumps({"mcpServers": servers}),)


def kitchen(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(KITCHEN), *args]}


# --- the table --------------------------------------------------------------------------------


def test_an_added_command_can_be_taken_out_and_a_built_in_cannot() -> None:
    table = Commands()
    table.add(echo("mcp__kitchen__review"))
    assert table.find("/mcp__kitchen__review") is not None
    assert table.remove("mcp__kitchen__review")
    assert table.find("mcp__kitchen__review") is None
    assert not table.remove("mcp__kitchen__review")
    with pytest.raises(ConfigError, match="built-in"):
        table.remove("mcp")
    assert table.find("mcp") is not None


def test_a_prompt_command_says_it_is_mcp_and_what_it_takes() -> None:
    prompt = McpPrompt(
        command="mcp__kitchen__review",
        server="kitchen",
        name="review",
        description="Review some code.",
        arguments=(McpPromptArgument("code", required=True), McpPromptArgument("style")),
    )
    command = prompt_command(prompt)
    assert command.name == "mcp__kitchen__review"
    assert command.summary == "Review some code. (MCP)"
    assert command.argument_hint == "<code> [style]"


# --- /mcp's text ------------------------------------------------------------------------------


def test_every_state_reads_as_a_line_with_where_it_comes_from() -> None:
    text = servers_text(
        (
            McpServerStatus("kitchen", "connected", tools=9, scope="flag"),
            McpServerStatus("broken", "failed", error="command not found: nope", scope="user"),
            McpServerStatus("slow", "pending", scope="local"),
            McpServerStatus("shared", "needs-approval", scope="mcpjson"),
            McpServerStatus("off", "disabled", scope="mcpjson"),
        ),
        Path("/s/mcp-logs"),
    )
    lines = text.splitlines()
    assert lines[0] == "MCP servers:"
    assert lines[1] == "  kitchen  connected · 9 tools · --mcp-config"
    assert lines[2] == "  broken   failed: command not found: nope · user settings"
    assert lines[3] == "  slow     connecting · local settings"
    assert lines[4] == "  shared   needs approval: /mcp approve shared · project .mcp.json"
    assert lines[5] == "  off      disabled (disabledMcpjsonServers) · project .mcp.json"
    assert lines[6] == "Logs (each server's stderr): /s/mcp-logs/"


async def test_with_no_server_it_says_how_to_add_one(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            said = await run(RecordingRepl(session), "/mcp")
    assert said == [EMPTY]
    assert "stayer mcp add" in EMPTY


async def test_mcp_lists_a_connected_and_a_failed_server(tmp_path: Path) -> None:
    servers = mcp_config(kitchen=kitchen(), broken={"command": str(tmp_path / "no-such-program")})
    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=servers) as session:
            await until_connected(session, "kitchen")
            said = await run(RecordingRepl(session), "/mcp")
            logs = session.mcp_log_dir()
    text = said[0]
    assert "kitchen  connected · " in text and " tools · --mcp-config" in text
    assert "broken   failed: " in text
    assert logs is not None and logs.name == "mcp-logs" and logs.is_relative_to(tmp_path)
    assert f"Logs (each server's stderr): ./{logs.relative_to(tmp_path)}/" in text


# --- prompts as commands ----------------------------------------------------------------------


async def test_a_servers_prompt_becomes_a_command_that_sends_its_text(tmp_path: Path) -> None:
    table = Commands()
    warned: list[str] = []
    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=mcp_config(kitchen=kitchen())) as session:
            watch = McpWatch(table, say=warned.append, warn=warned.append)
            watch.attach(session)
            await until_connected(session, "kitchen")
            await watch.refreshed()
            command = table.find("mcp__kitchen__review")
            assert command is not None
            assert command.summary == "Review some code. (MCP)"
            assert [c.name for c in table.complete("/mcp__")] == ["mcp__kitchen__review"]
            repl = RecordingRepl(session)
            await table.run(repl, "/mcp__kitchen__review 'x = 1'")
            assert repl.sent == [Submit("Please review: x = 1")]
            said = await run(repl, "/mcp__kitchen__review", table)
            assert said == [
                "/mcp__kitchen__review: /mcp__kitchen__review needs code; "
                "usage: /mcp__kitchen__review <code>"
            ]
            watch.close()
    assert warned == []


async def test_a_server_that_fails_is_told_once_and_offers_no_command(tmp_path: Path) -> None:
    table = Commands()
    warned: list[str] = []
    told = asyncio.Event()

    def warn(line: str) -> None:
        warned.append(line)
        told.set()

    broken = {"command": str(tmp_path / "no-such-program")}
    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=mcp_config(broken=broken)) as session:
            watch = McpWatch(table, say=warn, warn=warn)
            watch.attach(session)
            await asyncio.wait_for(told.wait(), 30)
            await watch.refreshed()
            assert watch.told(session.mcp_servers()[0])
            watch.close()
    assert len(warned) == 1 and warned[0].startswith("MCP server broken failed: ")
    assert [c.name for c in table.complete("/mcp__")] == []


# --- /context ---------------------------------------------------------------------------------


async def test_context_counts_tools_as_the_init_line_and_what_deferral_saves(
    tmp_path: Path,
) -> None:
    many = mcp_config(kitchen=kitchen("--tools", "200"))
    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=many, env=DEFER) as session:
            await until_connected(session, "kitchen")
            found = breakdown(session, 0)
            tools = next(part for part in found.parts if part.label == "Tools")
            assert tools.tokens == session.tool_tokens()
            assert found.deferral_saves == session.mcp_saved_tokens() > 5_000
            assert "saved per request" in render(found, 0)


# --- the question as the REPL opens -----------------------------------------------------------


async def test_the_question_names_each_server_with_its_command_line(tmp_path: Path) -> None:
    cwd = project(tmp_path / "repo")
    with FakeModelServer() as server:
        async with opened(server, cwd) as session:
            question = approval_question(session)
            assert question is not None
            assert f"kitchen: {sys.executable} {KITCHEN}" in question
            repl = RecordingRepl(session, picks=[1])  # "Not now"
            await ask_approval(repl)
            assert repl.picked[0][1] == [
                "Use these servers (remember for this project)",
                "Not now",
            ]
            assert not (cwd / ".stayer").exists()
            assert [s.status for s in session.mcp_servers()] == ["needs-approval"]
            table, said = Commands(), list[str]()
            watch = McpWatch(table, say=said.append, warn=said.append)
            watch.attach(session)
            repl = RecordingRepl(session, picks=[0])
            await ask_approval(repl)
            assert repl.said == ["Approved for this project; starting kitchen"]
            await until_connected(session, "kitchen")
            await watch.refreshed()
            assert said == ["MCP server kitchen connected: 12 tools"]
            assert table.find("mcp__kitchen__review") is not None
            watch.close()


async def test_no_question_without_a_waiting_server(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=mcp_config(kitchen=kitchen())) as session:
            assert approval_question(session) is None
            repl = RecordingRepl(session)
            await ask_approval(repl)
            assert repl.picked == []


async def test_a_servers_commands_go_while_it_restarts_and_come_back(tmp_path: Path) -> None:
    table = Commands()
    said: list[str] = []
    heard = asyncio.Event()

    def hear(line: str) -> None:
        said.append(line)
        heard.set()

    with FakeModelServer() as server:
        async with opened(server, tmp_path, mcp_config=mcp_config(kitchen=kitchen())) as session:
            watch = McpWatch(table, say=hear, warn=hear)
            watch.attach(session)
            await until_connected(session, "kitchen")
            await watch.refreshed()
            assert table.find("mcp__kitchen__review") is not None
            params = session.setup.params
            crash = params.tools.tools()["mcp__kitchen__crash"]
            with pytest.raises(ToolFailure, match="being restarted"):
                await crash.call({}, params.tool_context)
            await asyncio.wait_for(heard.wait(), 30)
            heard.clear()
            await watch.refreshed()
            assert said[0].startswith("MCP server kitchen is restarting after a crash")
            assert table.find("mcp__kitchen__review") is None
            await asyncio.wait_for(heard.wait(), 30)
            await watch.refreshed()
            assert said[1] == "MCP server kitchen connected: 12 tools"
            assert table.find("mcp__kitchen__review") is not None
            watch.close()


def _own_npx(cwd: Path) -> Path:
    """A repository that ships its own `npx` and puts it first on the server's PATH behind an
    ordinary-looking command line."""
    tools = cwd / ".tools"
    tools.mkdir()
    npx = tools / "npx"
    npx.write_text("#!/bin/sh\nexit 0\n")
    npx.chmod(0o755)
    (cwd / "sub").mkdir()
    entry = {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
        "env": {"PATH": f".tools:{os.defpath}", "NODE_OPTIONS": "--require ./x.js"},
        "cwd": ".",
    }
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"fs": entry}}))
    return npx


async def test_the_question_shows_the_env_folder_and_program_a_server_gets(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path / "repo")
    npx = _own_npx(cwd)
    with FakeModelServer() as server:
        async with opened(server, cwd) as session:
            question = approval_question(session)
    assert question is not None
    assert question.splitlines()[1:] == [
        "  fs: npx -y @modelcontextprotocol/server-filesystem .",
        f"    runs: {npx} (inside this project: the repository provides it)",
        f"    in folder: {cwd}",
        f"    sets: PATH=.tools:{os.defpath}",
        "    sets: NODE_OPTIONS='--require ./x.js'",
    ]


async def test_a_program_outside_the_project_is_not_marked(tmp_path: Path) -> None:
    cwd = project(tmp_path / "repo")
    with FakeModelServer() as server:
        async with opened(server, cwd) as session:
            question = approval_question(session)
    assert question is not None
    assert f"    runs: {sys.executable}\n" in question + "\n"
    assert "inside this project" not in question


async def test_no_word_of_an_entry_draws_a_line_of_its_own(tmp_path: Path) -> None:
    cwd = project(tmp_path / "repo")
    entry = {
        "command": "bash",
        "args": ["-c", "echo hi\n  c: npx harmless", "a\\nb"],
        "env": {"X\nY": "1\r\n    sets: SAFE=1", "TERM_TRICK": "\x1b[2K\u202e"},
        "cwd": "in\nthere",
    }
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"b": entry}}))
    with FakeModelServer() as server:
        async with opened(server, cwd) as session:
            question = approval_question(session)
    assert question is not None
    lines = question.splitlines()
    assert lines[2].startswith("    runs: ")
    assert lines[1:2] + lines[3:] == [  # as bash would read them back, no line of their own
        "  b: bash -c $'echo hi\\n  c: npx harmless' 'a\\nb'",
        f"    in folder: $'{cwd}/in\\nthere'",
        "    sets: $'X\\nY'=$'1\\r\\n    sets: SAFE=1'",
        "    sets: TERM_TRICK=$'\\x1b[2K\\u202e'",
    ]
    assert all(line.isprintable() for line in question.splitlines())


async def test_a_server_changed_since_it_was_shown_is_not_started(tmp_path: Path) -> None:
    cwd = project(tmp_path / "repo")
    with FakeModelServer() as server:
        async with opened(server, cwd) as session:
            assert approval_question(session) is not None
            edited = {"command": sys.executable, "args": [str(KITCHEN), "--tools", "1"]}
            (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"kitchen": edited}}))
            repl = RecordingRepl(session, picks=[0])
            await ask_approval(repl)
            assert repl.said == [
                "MCP server kitchen changed since it was shown, so it was not started; run "
                "/mcp again to see it as it is now (or restart stayer)"
            ]
            assert [s.status for s in session.mcp_servers()] == ["needs-approval"]
            assert not (cwd / ".stayer").exists()  # nor approved for the next session
