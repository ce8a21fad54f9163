"""McpServer over stdio, against the test server written with the `mcp` SDK: connecting,
listing, calling, what fails and how it is said, restarts after a crash, cancelling and
timing out a call."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp_types import (
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from stayer.config.mcp_servers import McpServerConfig
from stayer.events import McpServerStatus
from stayer.mcp.server import MAX_CRASHES, McpServer, McpUnavailable
from stayer.mcp.tools import server_tools
from stayer.tools.base import ToolContext, ToolFailure
from tests.mcp.conftest import FAST, KITCHEN, Recorder, appears, stdio_config


@asynccontextmanager
async def running(
    config: McpServerConfig,
    log_dir: Path,
    recorder: Recorder,
    *,
    timeout_s: float = 30,
    env: dict[str, str] | None = None,
    delays: tuple[float, ...] = FAST,
) -> AsyncIterator[McpServer]:
    server = McpServer(
        config,
        env=env if env is not None else {"PATH": os.environ["PATH"]},
        log_dir=log_dir,
        connect_timeout_s=timeout_s,
        on_change=recorder,
        restart_delays_s=delays,
    )
    server.start()
    try:
        yield server
    finally:
        await server.aclose()


def text_of(content: object) -> str:
    assert isinstance(content, TextContent)
    return content.text


async def test_connects_lists_and_calls(tmp_path: Path, recorder: Recorder) -> None:
    config = stdio_config("kitchen", "--instructions", "Use echo to echo.")
    async with running(config, tmp_path, recorder) as server:
        status = await recorder.until("connected")
        tools = {tool.name for tool in server.tool_defs}
        assert status == McpServerStatus("kitchen", "connected", None, len(tools), "flag")
        assert {"echo", "add", "image", "embedded", "weather", "fails", "big", "wait"} <= tools
        assert server.instructions == "Use echo to echo."
        assert server.offers_resources

        echoed = await server.call_tool("echo", {"text": "hi"}, timeout_s=10)
        assert [text_of(c) for c in echoed.content] == ["hi"]
        assert not echoed.is_error
        added = await server.call_tool("add", {"a": 2, "b": 3}, timeout_s=None)
        assert text_of(added.content[0]) == "5"


async def test_results_of_every_kind_come_back_whole(tmp_path: Path, recorder: Recorder) -> None:
    async with running(stdio_config("k"), tmp_path, recorder) as server:
        await recorder.until("connected")
        image = (await server.call_tool("image", {}, timeout_s=10)).content[0]
        assert isinstance(image, ImageContent)
        assert image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG")

        embedded = (await server.call_tool("embedded", {}, timeout_s=10)).content[0]
        assert isinstance(embedded, EmbeddedResource)
        assert isinstance(embedded.resource, TextResourceContents)
        assert embedded.resource.text == "memo"

        weather = await server.call_tool("weather", {"city": "Oslo"}, timeout_s=10)
        assert weather.structured_content == {"city": "Oslo", "celsius": 21}

        failed = await server.call_tool("fails", {}, timeout_s=10)
        assert failed.is_error
        assert text_of(failed.content[0]) == "it broke"

        big = await server.call_tool("big", {}, timeout_s=30)
        assert len(text_of(big.content[0])) == 5 * 1024 * 1024


async def test_resources_and_prompts(tmp_path: Path, recorder: Recorder) -> None:
    async with running(stdio_config("k"), tmp_path, recorder) as server:
        await recorder.until("connected")
        resources = await server.list_resources()
        assert [str(r.uri) for r in resources] == ["memo://greeting"]
        read = await server.read_resource("memo://greeting")
        contents = read.contents[0]
        assert isinstance(contents, TextResourceContents)
        assert contents.text == "hello there"
        prompts = await server.list_prompts()
        assert [p.name for p in prompts] == ["review"]
        prompt = await server.get_prompt("review", {"code": "x = 1"})
        assert text_of(prompt.messages[0].content) == "Please review: x = 1"


@pytest.mark.parametrize("page", ["0", "7"])
async def test_two_hundred_tools_are_all_listed(
    tmp_path: Path, recorder: Recorder, page: str
) -> None:
    config = stdio_config("many", "--tools", "200", "--page", page)
    async with running(config, tmp_path, recorder) as server:
        status = await recorder.until("connected")
        names = [tool.name for tool in server.tool_defs]
        assert len([n for n in names if n.startswith("tool_")]) == 200
        assert status.tools == len(names)


async def test_the_server_gets_the_session_environment_less_credentials_and_its_own(
    tmp_path: Path, recorder: Recorder
) -> None:
    config = stdio_config("env", env={"OWN": "mine", "SHARED": "server's", "OPENAI_API_KEY": "o"})
    env = {
        "PATH": os.environ["PATH"],
        "FROM_SESSION": "yes",
        "SHARED": "session's",
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "OPENAI_API_KEY": "sk-session",
    }
    async with running(config, tmp_path, recorder, env=env) as server:
        await recorder.until("connected")

        async def getenv(name: str) -> str:
            result = await server.call_tool("getenv", {"name": name}, timeout_s=10)
            return text_of(result.content[0])

        names = ("FROM_SESSION", "OWN", "SHARED", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
        assert [await getenv(n) for n in names] == ["yes", "mine", "server's", "<unset>", "o"]


async def test_stderr_goes_to_the_log_file(tmp_path: Path, recorder: Recorder) -> None:
    async with running(stdio_config("noisy", "--stderr", "warming up"), tmp_path, recorder):
        await recorder.until("connected")
    log = (tmp_path / "noisy.log").read_text()
    assert "warming up" in log


async def test_the_log_names_the_program_but_never_its_arguments(
    tmp_path: Path, recorder: Recorder
) -> None:
    # The arguments are the config's with ${VAR} expanded: a token may be one of them.
    config = stdio_config("secretive", "--instructions", "token-sk-0123456789")
    async with running(config, tmp_path, recorder):
        await recorder.until("connected")
    log = (tmp_path / "secretive.log").read_text()
    program = Path(sys.executable).name
    assert (
        log.splitlines()[0] == f"--- stayer starts MCP server 'secretive': {program} (3 arguments)"
    )
    assert "token-sk" not in log and str(KITCHEN) not in log


async def test_a_command_that_does_not_exist(tmp_path: Path, recorder: Recorder) -> None:
    config = McpServerConfig(
        name="ghost", transport="stdio", scope="project", origin="x", command="no-such-mcp-xyz"
    )
    async with running(config, tmp_path, recorder) as server:
        status = await recorder.until("failed")
        assert status == McpServerStatus(
            "ghost", "failed", "command not found: no-such-mcp-xyz", 0, "project"
        )
        with pytest.raises(McpUnavailable) as caught:
            await server.call_tool("echo", {}, timeout_s=1)
        assert str(caught.value) == (
            "MCP server 'ghost' failed: command not found: no-such-mcp-xyz"
        )


async def test_a_working_directory_that_does_not_exist(tmp_path: Path, recorder: Recorder) -> None:
    config = McpServerConfig(
        name="lost",
        transport="stdio",
        scope="user",
        origin="x",
        command="python3",
        cwd=str(tmp_path / "nowhere"),
    )
    async with running(config, tmp_path, recorder):
        status = await recorder.until("failed")
    assert status.error == f"working directory not found: {tmp_path / 'nowhere'}"


async def test_a_server_that_exits_before_it_answers(tmp_path: Path, recorder: Recorder) -> None:
    config = stdio_config("quits", "--stderr", "missing API key", "--exit", "1")
    async with running(config, tmp_path, recorder):
        status = await recorder.until("failed")
    log = tmp_path / "quits.log"
    assert status.error == f"exited before it answered: missing API key (see {log})"
    assert "missing API key" in log.read_text()


async def test_a_server_too_slow_to_start_times_out(tmp_path: Path, recorder: Recorder) -> None:
    config = stdio_config("slow", "--wait-file", str(tmp_path / "never"))
    async with running(config, tmp_path, recorder, timeout_s=0.5) as server:
        status = await recorder.until("failed")
        assert status.error == "timed out after 0.5 s connecting"
        assert server.tool_defs == ()


async def test_a_crashed_server_is_restarted_and_its_tools_come_back(
    tmp_path: Path, recorder: Recorder
) -> None:
    config = stdio_config("fragile")
    async with running(config, tmp_path, recorder, delays=(0.5,)) as server:
        await recorder.until("connected")
        listed = server.tool_defs
        first_pid = text_of((await server.call_tool("pid", {}, timeout_s=10)).content[0])
        with pytest.raises(McpUnavailable) as caught:
            await server.call_tool("crash", {}, timeout_s=10)
        assert "closed the connection during the call" in str(caught.value)
        pending = await recorder.until("pending")
        assert pending.error is not None
        assert pending.error.startswith("restarting after a crash")
        # Its tools stay listed while it restarts (the model is told to try again, not that
        # there is no such tool), and a call through one says so.
        assert server.status.status == "pending" and server.tool_defs == listed
        (echo,) = [
            each for each in server_tools([server], max_result_chars=1) if each.tool_name == "echo"
        ]
        with pytest.raises(ToolFailure) as failed:
            await echo.call({"text": "x"}, ToolContext(cwd=tmp_path))
        assert str(failed.value) == (
            "MCP server 'fragile' is restarting after a crash; try again in a moment"
        )
        connected = await recorder.until("connected")
        assert connected.tools == len(server.tool_defs) > 0
        second_pid = text_of((await server.call_tool("pid", {}, timeout_s=10)).content[0])
        assert second_pid != first_pid


async def test_a_server_that_keeps_crashing_is_left_failed(
    tmp_path: Path, recorder: Recorder
) -> None:
    async with running(stdio_config("doomed"), tmp_path, recorder) as server:
        for _ in range(MAX_CRASHES):
            await recorder.until("connected")
            with pytest.raises(McpUnavailable):
                await server.call_tool("crash", {}, timeout_s=10)
        failed = await recorder.until("failed")
        assert server.tool_defs == ()
    log = tmp_path / "doomed.log"
    assert failed.error == (
        f"crashed 3 times (last: the server process exited (see {log})); not restarted again"
    )
    assert log.read_text().count("--- stayer starts MCP server 'doomed'") == 3


async def test_cancelling_a_call_cancels_it_at_the_server(
    tmp_path: Path, recorder: Recorder
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    async with running(stdio_config("w", "--markers", str(markers)), tmp_path, recorder) as server:
        await recorder.until("connected")
        call = asyncio.ensure_future(server.call_tool("wait", {}, timeout_s=None))
        await appears(markers / "started")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await appears(markers / "cancelled")
        # The server is still there for the next call.
        echoed = await server.call_tool("echo", {"text": "still here"}, timeout_s=10)
        assert text_of(echoed.content[0]) == "still here"


async def test_a_call_that_takes_too_long_times_out(tmp_path: Path, recorder: Recorder) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    async with running(stdio_config("w", "--markers", str(markers)), tmp_path, recorder) as server:
        await recorder.until("connected")
        with pytest.raises(McpUnavailable) as caught:
            await server.call_tool("wait", {}, timeout_s=0.5)
        assert str(caught.value) == "MCP server 'w' did not answer within 0.5 s"
        await appears(markers / "cancelled")


async def test_closing_ends_the_process(tmp_path: Path, recorder: Recorder) -> None:
    async with running(stdio_config("p"), tmp_path, recorder) as server:
        await recorder.until("connected")
        pid = int(text_of((await server.call_tool("pid", {}, timeout_s=10)).content[0]))
        await server.aclose()
        await server.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_call_before_the_server_is_up(tmp_path: Path, recorder: Recorder) -> None:
    config = stdio_config("slow", "--wait-file", str(tmp_path / "go"))
    async with running(config, tmp_path, recorder) as server:
        assert server.status.status == "pending"
        with pytest.raises(McpUnavailable) as caught:
            await server.call_tool("echo", {"text": "x"}, timeout_s=1)
        assert str(caught.value) == "MCP server 'slow' is still starting; try again in a moment"
        (tmp_path / "go").touch()
        await recorder.until("connected")


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_both_protocol_eras(tmp_path: Path, recorder: Recorder, era: str) -> None:
    args = ("--legacy",) if era == "legacy" else ()
    async with running(stdio_config("era", *args), tmp_path, recorder) as server:
        await recorder.until("connected")
        added = await server.call_tool("add", {"a": 1, "b": 1}, timeout_s=10)
        assert text_of(added.content[0]) == "2"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_changed_tool_list_is_listed_again(
    tmp_path: Path, recorder: Recorder, era: str
) -> None:
    args = ("--legacy",) if era == "legacy" else ()
    async with running(stdio_config("grows", *args), tmp_path, recorder) as server:
        before = (await recorder.until("connected")).tools
        await server.call_tool("grow", {"name": "sprout"}, timeout_s=10)
        after = await recorder.until("connected")
        assert after.tools == before + 1
        assert "sprout" in {tool.name for tool in server.tool_defs}
        sprouted = await server.call_tool("sprout", {}, timeout_s=10)
        assert text_of(sprouted.content[0]) == "grown"


async def test_a_listing_that_is_not_mcp_fails_the_server_in_one_short_line(
    tmp_path: Path, recorder: Recorder
) -> None:
    config = stdio_config("lister", "--hand-written", "bad-listing")
    async with running(config, tmp_path, recorder):
        failed = await recorder.until("failed")
    assert failed.error == (
        "its answer (ListToolsResult) is not valid MCP: "
        "tools.0.inputSchema.properties: Input should be a valid dictionary"
    )


async def test_content_of_an_unknown_kind_is_one_short_line(
    tmp_path: Path, recorder: Recorder
) -> None:
    config = stdio_config("odd", "--hand-written", "odd-content")
    async with running(config, tmp_path, recorder) as server:
        await recorder.until("connected")
        (odd,) = server_tools([server], max_result_chars=4_000)
        with pytest.raises(ToolFailure) as failed:
            await odd.call({}, ToolContext(cwd=tmp_path))
    assert str(failed.value) == (
        "MCP server 'odd': its answer (CallToolResult) is not valid MCP: "
        "content.0: no kind MCP knows ('weird')"
    )
