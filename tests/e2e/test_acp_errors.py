"""`stayer acp` given what an editor should not send: lines that are no JSON-RPC message,
unknown methods, bad params, sessions it never opened. Each gets a JSON-RPC error of one line,
standard error has no traceback, and the agent goes on serving; an editor that disconnects
mid-run leaves a transcript another process can load and go on with."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import AcpMcpServer, McpServerStdio, TextContentBlock

from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import stayer_acp, until_exists
from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, anthropic_error, reply
from tests.process_table import family_command, gone_within, read_pids


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


class RawEditor:
    """An editor writing raw lines to `stayer acp` and reading its replies."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, line: str) -> dict[str, Any]:
        """Write one line and return the next reply (notifications are skipped)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            async with asyncio.timeout(20):
                raw = await self.process.stdout.readline()
            assert raw, "stayer acp closed its output"
            reply: dict[str, Any] = json.loads(raw)
            if "method" not in reply:
                return reply


def _request(number: int, method: str, params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})


async def test_malformed_requests_get_json_rpc_errors_and_the_agent_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "stayer", "acp",
        cwd=tmp_path, env=clean_env(server.env()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    editor = RawEditor(process)
    try:
        init = await editor.send(_request(0, "initialize", {"protocolVersion": 1}))
        assert init["result"]["protocolVersion"] == 1
        replies = [
            await editor.send("this is not json"),
            await editor.send("[1, 2]"),
            await editor.send(_request(1, "no/such/method", {})),
            await editor.send(_request(2, "session/new", {"cwd": 5})),
            await editor.send(_request(3, "session/new", {"cwd": "relative", "mcpServers": []})),
            await editor.send(_request(4, "session/prompt", {"sessionId": "nope", "prompt": []})),
        ]
        opened = await editor.send(
            _request(5, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        )
    finally:
        assert process.stdin is not None
        process.stdin.close()
        async with asyncio.timeout(20):
            _, stderr = await process.communicate()

    codes = [(reply.get("id"), reply["error"]["code"]) for reply in replies]
    assert codes == [(None, -32700), (None, -32600), (1, -32601), (2, -32602), (3, -32602),
                     (4, -32602)]  # fmt: skip
    assert "cwd must be absolute" in replies[4]["error"]["data"]["details"]
    assert "no open session 'nope'" in replies[5]["error"]["data"]["details"]
    assert opened["result"]["sessionId"]
    assert process.returncode == 0
    assert b"Traceback" not in stderr


async def test_an_acp_mcp_server_is_refused_in_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        try:
            await conn.new_session(
                cwd=str(tmp_path),
                mcp_servers=[AcpMcpServer(type="acp", name="inside", server_id="s1")],
            )
        except acp.RequestError as error:
            refused = error
        else:
            raise AssertionError("a server of type acp was accepted")
    assert refused.code == -32602
    assert "'inside' is of type acp" in str(refused.data)


@pytest.mark.parametrize("leaving", ["disconnect", "sigterm"])
async def test_an_editor_leaving_mid_run_ends_the_run_and_the_session_loads_again(
    server: FakeModelServer, tmp_path: Path, leaving: str
) -> None:
    pids_file = tmp_path / "pids"
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": family_command(pids_file)})),
        reply("Back again."),
    )
    async with stayer_acp(server, tmp_path, "--allowedTools", "Bash") as (conn, process, _):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        running = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=_text("run it"))
        )
        await until_exists(pids_file)
        pids = read_pids(pids_file)
        assert process.stdin is not None
        if leaving == "disconnect":
            process.stdin.close()  # the editor goes away
        else:
            process.send_signal(signal.SIGTERM)  # the editor stops its agent
        async with asyncio.timeout(20):
            status = await process.wait()
        await gone_within(pids, 10)
        with contextlib.suppress(ConnectionError):  # the editor left before the answer
            await running
    assert status == 0

    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
        again = await conn.prompt(session_id=session.session_id, prompt=_text("go on"))

    assert again.stop_reason == "end_turn"
    ended = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == "toolu_1"]
    assert ended and ended[0].status == "failed"  # the interrupted call, answered in history
    assert server.violations == []


async def test_the_editors_stdio_mcp_server_is_started_and_its_tools_offered(
    server: FakeModelServer, tmp_path: Path
) -> None:
    kitchen = Path(__file__).parents[1] / "mcp_servers" / "kitchen.py"
    server.enqueue(reply("ok"))
    wait = {"MCP_CONNECTION_NONBLOCKING": "0"}  # the first request waits for the server
    async with stayer_acp(server, tmp_path, env=wait) as (conn, _, _editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.agent_capabilities is not None
        mcp = init.agent_capabilities.mcp_capabilities
        assert mcp is not None and (mcp.http, mcp.sse) == (True, True)
        given = McpServerStdio(name="kitchen", command=sys.executable, args=[str(kitchen)], env=[])
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[given])
        await conn.prompt(session_id=session.session_id, prompt=_text("hi"))

    body = server.requests[0].body
    assert isinstance(body, dict) and isinstance(body["tools"], list)
    names = [tool["name"] for tool in body["tools"] if isinstance(tool, dict)]
    assert "mcp__kitchen__add" in names


async def test_a_run_that_fails_answers_the_prompt_with_its_error_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        anthropic_error(400, "invalid_request_error", "this request cannot be served"),
        reply("Fine now."),
    )
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=_text("first"))
        again = await conn.prompt(session_id=session.session_id, prompt=_text("second"))

    assert failed.value.code == -32603
    assert "this request cannot be served" in str(failed.value.data)
    assert again.stop_reason == "end_turn" and editor.text() == "Fine now."
