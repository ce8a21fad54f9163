"""`stayer acp` when something goes wrong on stayer's side or the editor's edge: a run a bug of
stayer's breaks still answers its prompt (an error of one line) and the session goes on."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp.schema import ImageContentBlock, McpServerStdio, TextContentBlock

from stayer.session.options import QueryOptions
from stayer.ui.acp.agent import StayerAgent
from stayer.ui.acp.lines import LINE_LIMIT
from stayer.ui.acp.link import Link
from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import stayer_acp
from tests.e2e.cli import clean_env
from tests.fakes.faulty_stayer import MARKER
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.process_table import gone_within

CHECKOUT = Path(__file__).parents[2]


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


async def test_a_run_broken_by_a_bug_answers_its_prompt_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(f"and then {MARKER}"), reply("all well again"))
    faulty = {"module": "tests.fakes.faulty_stayer", "env": {"PYTHONPATH": str(CHECKOUT)}}
    async with stayer_acp(server, tmp_path, **faulty) as (conn, _, editor):  # type: ignore[arg-type]
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as broken:
            async with asyncio.timeout(20):  # before the fix: never answered
                await conn.prompt(session_id=session.session_id, prompt=_text("one"))
        assert "a planted fault" in str(broken.value.data)
        async with asyncio.timeout(20):
            again = await conn.prompt(session_id=session.session_id, prompt=_text("two"))
        assert again.stop_reason == "end_turn"
        assert "all well again" in editor.text()
    assert server.violations == []
    last = server.requests[-1].body["messages"]
    assert last[0]["role"] == "user" and "two" in str(last[-1]["content"])


async def test_a_session_open_here_is_not_loaded_again_in_other_folders(
    server: FakeModelServer, tmp_path: Path
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    server.enqueue(reply("hello"))
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(here), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("hi"))
        for elsewhere in (
            {"cwd": str(there)},
            {"cwd": str(here), "additional_directories": [str(there)]},
        ):
            with pytest.raises(acp.RequestError) as refused:
                await conn.load_session(session_id=session.session_id, mcp_servers=[], **elsewhere)
            assert f"open in {here}" in str(refused.value.data)
            with pytest.raises(acp.RequestError):
                await conn.resume_session(
                    session_id=session.session_id, mcp_servers=[], **elsewhere
                )
        loaded = await conn.load_session(
            cwd=str(here), session_id=session.session_id, mcp_servers=[]
        )
        assert loaded is not None and loaded.modes is not None


async def test_two_loads_of_one_session_open_it_once_and_close_leaves_nothing_running(
    server: FakeModelServer, tmp_path: Path
) -> None:
    kitchen = Path(__file__).parents[1] / "mcp_servers" / "kitchen.py"
    pids = tmp_path / "mcp_pids"
    server.enqueue(reply("hello"), reply("again"))
    given = McpServerStdio(
        name="kitchen",
        command="sh",
        args=["-c", f'echo $$ >> "{pids}"; exec "{sys.executable}" "{kitchen}"'],
        env=[],
    )
    wait = {"MCP_CONNECTION_NONBLOCKING": "0"}  # a prompt waits for the servers to be up
    async with stayer_acp(server, tmp_path, env=wait) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("hi"))
        await conn.close_session(session_id=session.session_id)
        load = {"cwd": str(tmp_path), "session_id": session.session_id, "mcp_servers": [given]}
        await asyncio.gather(conn.load_session(**load), conn.load_session(**load))  # type: ignore[arg-type]
        await conn.prompt(session_id=session.session_id, prompt=_text("go on"))
        started = [int(word) for word in pids.read_text().split()]
        assert len(started) == 1  # before: two sessions opened, one never closed
        await conn.close_session(session_id=session.session_id)
        await gone_within(started, 15)


class _Quiet:
    """An editor that takes updates and nothing else (the agent in this process)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass


async def test_two_loads_at_once_open_the_session_once_and_shutdown_closes_every_one(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    server.enqueue(reply("hello"))
    opened: list[Link] = []
    closed: list[Link] = []
    real_open, real_close = Link.open, Link.close

    async def opening(client: Any, options: Any) -> Link:
        link = await real_open(client, options)
        opened.append(link)
        return link

    async def closing(link: Link) -> None:
        closed.append(link)
        await real_close(link)

    monkeypatch.setattr(Link, "open", staticmethod(opening))
    monkeypatch.setattr(Link, "close", closing)
    agent = StayerAgent(QueryOptions())
    agent.on_connect(cast(Any, _Quiet()))
    session = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
    await agent.prompt(session.session_id, _text("hi"))
    await agent.close_session(session.session_id)
    load = {"cwd": str(tmp_path), "session_id": session.session_id, "mcp_servers": []}
    await asyncio.gather(agent.load_session(**load), agent.load_session(**load))  # type: ignore[arg-type]
    assert len(opened) == 2  # the new one, and the saved one once: before, twice
    await agent.aclose()
    assert set(map(id, closed)) == set(map(id, opened))


async def test_the_editors_stdio_mcp_server_runs_in_the_sessions_folder(
    server: FakeModelServer, tmp_path: Path
) -> None:
    kitchen = Path(__file__).parents[1] / "mcp_servers" / "kitchen.py"
    launched, project = tmp_path / "editor_home", tmp_path / "project"
    launched.mkdir()
    project.mkdir()
    where = tmp_path / "where"
    server.enqueue(reply("ok"))
    given = McpServerStdio(
        name="kitchen",
        command="sh",
        args=["-c", f'pwd > "{where}"; exec "{sys.executable}" "{kitchen}"'],
        env=[],
    )
    wait = {"MCP_CONNECTION_NONBLOCKING": "0"}  # the first request waits for the server
    async with stayer_acp(server, launched, env=wait) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[given])
        await conn.prompt(session_id=session.session_id, prompt=_text("hi"))
    assert Path(where.read_text().strip()).resolve() == project.resolve()


async def test_an_image_the_model_cannot_take_is_refused_and_never_sent(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("plain answer"))
    bad = [
        ImageContentBlock(type="image", mime_type="image/x-evil", data="aGVsbG8="),
        ImageContentBlock(type="image", mime_type="image/png", data="!!!not base64!!!"),
        ImageContentBlock(type="image", mime_type="image/png", data=""),
    ]
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        for image in bad:
            with pytest.raises(acp.RequestError) as refused:
                await conn.prompt(session_id=session.session_id, prompt=[image])
            assert refused.value.code == -32602
            assert "\n" not in str(refused.value.data)
        result = await conn.prompt(session_id=session.session_id, prompt=_text("plain"))
        assert result.stop_reason == "end_turn"
    assert len(server.requests) == 1
    assert '"image"' not in json.dumps(server.requests[0].body["messages"])


def _request(number: int, method: str, params: Any) -> bytes:
    line = json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
    return line.encode() + b"\n"


async def test_an_over_long_line_gets_one_error_and_its_tail_is_not_read_as_a_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pad = "A" * (LINE_LIMIT + 1024 * 1024)
    giant = _request(7, "initialize", {"protocolVersion": 1, "pad": pad})
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "stayer", "acp",
        cwd=tmp_path, env=clean_env(server.env()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(giant + _request(1, "initialize", {"protocolVersion": 1}))
    await process.stdin.drain()
    replies: list[dict[str, Any]] = []
    async with asyncio.timeout(60):
        while not replies or replies[-1].get("id") != 1:
            raw = await process.stdout.readline()
            assert raw, "stayer acp closed its output"
            replies.append(json.loads(raw))
    process.stdin.close()
    await process.wait()
    assert [reply.get("error", {}).get("code") for reply in replies] == [-32600, None]
    assert "longer than" in replies[0]["error"]["data"]["details"]


async def test_odd_ids_and_a_relative_list_folder_are_refused(
    server: FakeModelServer, tmp_path: Path
) -> None:
    odd: list[Any] = [{"x": 1}, [1], 1.5, True]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": number, "method": "initialize", "params": {}}).encode()
        + b"\n"
        for number in odd
    ]
    lines.append(_request(1, "session/list", {"cwd": "relative/folder"}))
    lines.append(_request(2, "initialize", {"protocolVersion": 1}))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "stayer", "acp",
        cwd=tmp_path, env=clean_env(server.env()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"".join(lines))
    await process.stdin.drain()
    replies: list[dict[str, Any]] = []
    async with asyncio.timeout(30):
        while not replies or replies[-1].get("id") != 2:
            raw = await process.stdout.readline()
            assert raw, "stayer acp closed its output"
            replies.append(json.loads(raw))
    process.stdin.close()
    await process.wait()
    codes = [(reply["id"], reply.get("error", {}).get("code")) for reply in replies]
    assert codes == [(None, -32600)] * 4 + [(1, -32602), (2, None)]
    assert "absolute" in replies[4]["error"]["data"]["details"]


async def test_a_prompt_a_hook_refuses_tells_the_editor_why(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / ".claude").mkdir()
    hook = {"type": "command", "command": "echo blocked by policy >&2; exit 2"}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=_text("go"))
        assert result.stop_reason == "end_turn"
        assert "blocked by policy" in editor.text()
    assert server.requests == []


async def test_an_unknown_notification_is_a_plain_note_not_a_crash_report(
    server: FakeModelServer, tmp_path: Path
) -> None:
    note = json.dumps({"jsonrpc": "2.0", "method": "nope/notify", "params": {}}).encode() + b"\n"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "stayer", "acp",
        cwd=tmp_path, env=clean_env(server.env()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(note + _request(1, "initialize", {"protocolVersion": 1}))
    await process.stdin.drain()
    async with asyncio.timeout(30):
        reply = json.loads(await process.stdout.readline())
        assert reply["id"] == 1 and "result" in reply  # the notification got no answer
        process.stdin.close()
        _, err = await process.communicate()
    said = err.decode().splitlines()
    assert said == [
        "stayer acp: ignored the notification 'nope/notify', which stayer does not know"
    ]
