"""An MCP server's tool as a stayer tool: its name, description, schema and input checks, what
its server's hints may change (only when the server is trusted), its limits, and its calls,
against real SDK servers connected in-process."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

from stayer.errors import ConfigError
from stayer.mcp.server import McpUnavailable
from stayer.mcp.tools import (
    MAX_DESCRIPTION_CHARS,
    McpTool,
    ServerHandle,
    result_chars,
    server_tools,
    tool_timeout_from,
)
from stayer.messages import TextBlock
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.base import (
    DEFAULT_TIMEOUT_S,
    MAX_RESULT_CHARS,
    ToolContext,
    ToolFailure,
    ToolInputError,
)
from stayer.tools.saved import RESULTS_DIR
from tests.fakes.loop_harness import make_params, results_in, run
from tests.mcp.inproc import connected


class Point(BaseModel):
    x: int
    y: int


def demo_server() -> MCPServer:
    server = MCPServer("demo")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @server.tool()
    def move(point: Point, mode: str = "walk") -> str:
        """Move to a point."""
        return f"{mode} to {point.x},{point.y}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False))
    def shout(words: str) -> str:
        return words.upper()

    @server.tool(description="w" * 5_000, meta={"anthropic/alwaysLoad": True})
    def wordy() -> str:
        return "ok"

    @server.tool()
    def big() -> str:
        return "".join(f"{n:08d} " + "m" * 90 + "\n" for n in range(50_000))  # 5 MB

    @server.tool()
    def fails() -> str:
        raise ToolError("the tool broke")

    return server


def tool(handle: ServerHandle, name: str, **options: Any) -> McpTool:
    (definition,) = [d for d in handle.tool_defs if d.name == name]
    return McpTool(handle, definition, **options)


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_the_tool_shows_the_servers_name_description_and_schema() -> None:
    async with connected(demo_server(), name="my calc") as handle:
        add = tool(handle, "add")
        spec = add.spec()
    assert spec.name == "mcp__my_calc__add"
    assert spec.description == "Add two whole numbers."
    assert spec.input_schema["type"] == "object"
    assert spec.input_schema["required"] == ["a", "b"]
    assert add.subject_kind == "none"
    assert add.permission_subject({"a": 1, "b": 2}) is None
    assert add.bounds_own_results is False


async def test_a_long_description_is_capped_with_a_note_and_a_missing_one_is_made_up() -> None:
    async with connected(demo_server()) as handle:
        wordy = tool(handle, "wordy")
        shout = tool(handle, "shout")
    assert len(wordy.description) == MAX_DESCRIPTION_CHARS
    assert wordy.description.endswith("\n[description cut at 2000 characters]")
    assert shout.description == "A tool of the MCP server 'demo' (it gave no description)."


async def test_input_is_checked_against_the_servers_schema_with_one_line_per_problem() -> None:
    async with connected(demo_server()) as handle:
        add = tool(handle, "add")
        move = tool(handle, "move")
    assert add.parse_input({"a": 1, "b": 2}) == {"a": 1, "b": 2}
    with pytest.raises(ToolInputError) as missing:
        add.parse_input({"a": 1})
    assert str(missing.value) == "input: 'b' is a required property"
    with pytest.raises(ToolInputError) as wrong:
        add.parse_input({"a": "one", "b": 2})
    assert str(wrong.value) == "a: 'one' is not of type 'integer'"
    with pytest.raises(ToolInputError) as nested:
        move.parse_input({"point": {"x": 1, "y": [2]}, "mode": 3})
    assert str(nested.value) == (
        "mode: 3 is not of type 'string'; point.y: [2] is not of type 'integer'"
    )
    assert "\n" not in str(nested.value)


async def test_a_bad_input_reaches_the_model_as_one_line_and_never_the_server(
    tmp_path: Path,
) -> None:
    async with connected(demo_server()) as handle:
        add = tool(handle, "add")
        model = ScriptedProvider([tool_call(add.name, {"a": 1}, id="toolu_1"), text("ok")])
        await run(make_params(model, [add], tmp_path))
    (answer,) = results_in(model.requests[1].messages[-1])
    assert answer.is_error
    assert answer.text == "InputValidationError: input: 'b' is a required property"
    assert handle.calls == []


def regex_server() -> Server[Any]:
    """A low-level server whose one tool's schema holds a pattern that backtracks for ever on
    a long run of a's ending otherwise (as a hostile server might send)."""
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": "^(a+)+$", "format": "email"}},
        "patternProperties": {"^(b+)+$": {"type": "integer"}},
        "additionalProperties": False,
    }

    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name="q", input_schema=schema)])

    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(text=f"got {params.arguments}")])

    return Server("regex", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_servers_regular_expressions_are_left_to_the_server(tmp_path: Path) -> None:
    hostile: dict[str, object] = {"q": "a" * 40 + "!"}
    async with connected(regex_server()) as handle:
        q = tool(handle, "q")
        started = time.monotonic()
        assert q.parse_input(hostile) == hostile
        assert q.parse_input({"b" * 40 + "!": 1}) == {"b" * 40 + "!": 1}
        assert time.monotonic() - started < 1.0
        with pytest.raises(ToolInputError):  # the rest of the schema still holds
            q.parse_input({"q": 5})
        model = ScriptedProvider([tool_call(q.name, hostile, id="toolu_q"), text("ok")])
        await run(make_params(model, [q], tmp_path))
    assert handle.calls == [("q", hostile, None)]
    assert time.monotonic() - started < 5.0


async def test_read_only_hint_counts_only_when_the_server_is_trusted() -> None:
    async with connected(demo_server(), trusted=True) as trusted:
        add, shout, move = (tool(trusted, name) for name in ("add", "shout", "move"))
    assert add.is_read_only({}) and add.is_concurrency_safe({})
    assert not shout.is_read_only({}) and not shout.is_concurrency_safe({})
    assert not move.is_read_only({}) and not move.is_concurrency_safe({})
    async with connected(demo_server(), trusted=False) as untrusted:
        add = tool(untrusted, "add")
    assert not add.is_read_only({}) and not add.is_concurrency_safe({})


async def test_always_load_from_the_config_is_kept_apart_from_the_servers_request() -> None:
    async with connected(demo_server()) as handle:
        wordy, add = tool(handle, "wordy"), tool(handle, "add")
        assert (wordy.always_load, wordy.server_always_load) == (False, True)
        assert (add.always_load, add.server_always_load) == (False, False)
    async with connected(demo_server(), always_load=True) as handle:
        add = tool(handle, "add")
        assert (add.always_load, add.server_always_load) == (True, False)


def test_the_result_limit_follows_max_mcp_output_tokens() -> None:
    assert result_chars({}) == min(25_000 * 4, MAX_RESULT_CHARS)
    assert result_chars({"MAX_MCP_OUTPUT_TOKENS": ""}) == 100_000
    assert result_chars({"MAX_MCP_OUTPUT_TOKENS": "1000"}) == 4_000
    assert result_chars({"MAX_MCP_OUTPUT_TOKENS": " 2000 "}) == 8_000
    assert result_chars({"MAX_MCP_OUTPUT_TOKENS": "1000000"}) == MAX_RESULT_CHARS


@pytest.mark.parametrize("junk", ["lots", "0", "-5", "1e3", "2.5"])
def test_a_max_mcp_output_tokens_that_is_no_count_is_one_line(junk: str) -> None:
    with pytest.raises(ConfigError) as bad:
        result_chars({"MAX_MCP_OUTPUT_TOKENS": junk})
    assert str(bad.value) == (
        f"MAX_MCP_OUTPUT_TOKENS={junk!r} is not a number of tokens above 0; "
        "set it like MAX_MCP_OUTPUT_TOKENS=25000, or unset it"
    )


def test_mcp_tool_timeout_is_read_in_milliseconds() -> None:
    assert tool_timeout_from({}) is None
    assert tool_timeout_from({"MCP_TOOL_TIMEOUT": " "}) is None
    assert tool_timeout_from({"MCP_TOOL_TIMEOUT": "1500"}) == 1.5
    for junk in ("soon", "0", "-1", "inf", "nan"):
        with pytest.raises(ConfigError) as bad:
            tool_timeout_from({"MCP_TOOL_TIMEOUT": junk})
        assert str(bad.value) == (
            f"MCP_TOOL_TIMEOUT={junk!r} is not a number of milliseconds above 0; "
            "set it like MCP_TOOL_TIMEOUT=60000, or unset it"
        )


async def test_mcp_tool_timeout_is_the_default_a_servers_own_timeout_overrides(
    tmp_path: Path,
) -> None:
    default_s = tool_timeout_from({"MCP_TOOL_TIMEOUT": "2500"})
    async with connected(demo_server()) as handle:
        (add,) = [
            t
            for t in server_tools([handle], max_result_chars=4_000, default_timeout_s=default_s)
            if t.tool_name == "add"
        ]
        await add.call({"a": 1, "b": 1}, ctx(tmp_path))
    assert add.timeout_s == 2.5
    assert handle.calls == [("add", {"a": 1, "b": 1}, 2.5)]
    async with connected(demo_server(), timeout_s=7.0) as handle:
        (add,) = [
            t
            for t in server_tools([handle], max_result_chars=4_000, default_timeout_s=default_s)
            if t.tool_name == "add"
        ]
        await add.call({"a": 1, "b": 1}, ctx(tmp_path))
    assert add.timeout_s == 7.0
    assert handle.calls == [("add", {"a": 1, "b": 1}, 7.0)]


async def test_the_tool_keeps_the_limit_it_is_given_within_the_overall_one() -> None:
    async with connected(demo_server()) as handle:
        assert tool(handle, "add", max_result_chars=4_000).max_result_chars == 4_000
        assert tool(handle, "add", max_result_chars=10**9).max_result_chars == MAX_RESULT_CHARS


async def test_a_calls_timeout_is_the_servers_and_is_passed_to_the_call(tmp_path: Path) -> None:
    async with connected(demo_server(), timeout_s=5.0) as handle:
        add = tool(handle, "add")
        output = await add.call({"a": 2, "b": 3}, ctx(tmp_path))
    assert add.timeout_s == 5.0
    assert handle.calls == [("add", {"a": 2, "b": 3}, 5.0)]
    assert output.content == (TextBlock("5"),)
    assert output.data == {"structuredContent": {"result": 5}}
    async with connected(demo_server()) as handle:
        add = tool(handle, "add")
        await add.call({"a": 2, "b": 3}, ctx(tmp_path))
    assert add.timeout_s == DEFAULT_TIMEOUT_S
    assert handle.calls == [("add", {"a": 2, "b": 3}, None)]


async def test_a_server_that_is_not_there_gives_its_one_line(tmp_path: Path) -> None:
    async with connected(demo_server()) as handle:
        add = tool(handle, "add")
        handle.down = "MCP server 'demo' is restarting after a crash; try again in a moment"
        with pytest.raises(ToolFailure) as failure:
            await add.call({"a": 1, "b": 2}, ctx(tmp_path))
    assert str(failure.value) == handle.down
    assert isinstance(failure.value.__context__, McpUnavailable)


async def test_an_error_in_the_tool_comes_back_as_an_error_result(tmp_path: Path) -> None:
    async with connected(demo_server()) as handle:
        output = await tool(handle, "fails").call({}, ctx(tmp_path))
    assert output.is_error
    assert isinstance(output.content, tuple)
    assert output.content == (TextBlock("Error executing tool fails: the tool broke"),)


def refusing_server() -> Server[Any]:
    """A low-level server whose one tool the server refuses with a protocol error."""

    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return ListToolsResult(tools=[Tool(name="locked", input_schema=schema)])

    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        raise MCPError(code=-32602, message="the vault\nis locked")

    return Server("refusing", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_protocol_error_from_the_server_is_one_line_naming_it(tmp_path: Path) -> None:
    async with connected(refusing_server(), name="vault") as handle:
        locked = tool(handle, "locked")
        with pytest.raises(ToolFailure) as failure:
            await locked.call({}, ctx(tmp_path))
    assert str(failure.value) == (
        "MCP server 'vault' refused the call to 'locked': the vault is locked"
    )


async def test_a_5_mb_result_is_saved_whole_and_the_model_sees_its_ends(tmp_path: Path) -> None:
    session = tmp_path / "session"
    async with connected(demo_server()) as handle:
        big = tool(handle, "big", max_result_chars=result_chars({}))
        model = ScriptedProvider([tool_call(big.name, {}, id="toolu_big"), text("ok")])
        await run(make_params(model, [big], tmp_path, session_dir=session))
    (answer,) = results_in(model.requests[1].messages[-1])
    saved = session / RESULTS_DIR / "toolu_big.txt"
    whole = saved.read_text(encoding="utf-8")
    assert len(whole) == 50_000 * 100
    assert whole.startswith("00000000 m") and whole.endswith("00049999 " + "m" * 90 + "\n")
    assert answer.text.startswith(
        f"[This result has {len(whole)} characters (50000 lines), more than the 100000 one "
        f"result may hold here, so it was saved to {saved}."
    )
    assert len(answer.text) < 4_000
    assert re.search(r"^00000000 m+$", answer.text, re.MULTILINE)
    assert "00049999 " in answer.text


async def test_the_tool_runs_through_the_executor_beside_others_when_read_only(
    tmp_path: Path,
) -> None:
    async with connected(demo_server(), trusted=True) as handle:
        add = tool(handle, "add")
        calls = [tool_call(add.name, {"a": 1, "b": n}, id=f"toolu_{n}") for n in range(2)]
        reply = Reply((*calls[0].content, *calls[1].content))
        model = ScriptedProvider([reply, text("ok")])
        await run(make_params(model, [add], tmp_path))
    results = results_in(model.requests[1].messages[-1])
    assert [result.text for result in results] == ["1", "2"]
    assert [call[1] for call in handle.calls] == [{"a": 1, "b": 0}, {"a": 1, "b": 1}]


def named_server(answer: str) -> MCPServer:
    server = MCPServer("named")

    @server.tool(name="t")
    def whoami() -> str:
        return answer

    return server


async def test_every_servers_tools_get_names_no_two_alike_and_call_their_own_server(
    tmp_path: Path,
) -> None:
    async with (
        connected(named_server("first"), "a.b") as first,
        connected(named_server("second"), "a_b") as second,
    ):
        made = server_tools([first, second], max_result_chars=4_000)
        outputs = [await each.call({}, ctx(tmp_path)) for each in made]
    assert made[0].name == "mcp__a_b__t"
    assert made[1].name == "mcp__a_b__t_98090cd0"
    assert [each.max_result_chars for each in made] == [4_000, 4_000]
    assert [output.content for output in outputs] == [(TextBlock("first"),), (TextBlock("second"),)]


def test_importing_the_mcp_tools_loads_neither_the_sdk_nor_jsonschema() -> None:
    code = (
        "import sys, stayer.mcp.tools, stayer.mcp.results, stayer.mcp.naming\n"
        "print(sorted(m for m in ('mcp', 'mcp_types', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
