"""ToolSearch finds deferred tools by exact name or by keywords, answers with their schemas,
and loads them into the catalog; a resumed conversation's tools can be loaded again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from stayer.mcp.catalog import McpCatalog, parse_tool_search, used_mcp_tools
from stayer.mcp.tool_search import loaded_names, summary
from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.tools.base import Tool, Toolbox, ToolContext, ToolInputError, ToolOutput
from stayer.tools.names import TOOL_SEARCH
from tests.fakes.loop_harness import finished, make_params, results_in, run

from .test_catalog import ServerTool, many_tools, mcp_name

WEATHER = ServerTool(
    mcp_name("sky", "forecast"),
    "Weather forecast for a city, day by day.\nUses the national service.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ServerTool(
    mcp_name("time", "get_current_time"),
    "The current time in a time zone.",
    {"type": "object", "properties": {"timezone": {"type": "string"}}},
)
CONVERT = ServerTool(
    mcp_name("time", "convert_time"),
    "Convert a time between zones.",
    {"type": "object", "properties": {"time": {"type": "string"}}},
)
TOOLS = (*many_tools(50), WEATHER, TIME, CONVERT)


@pytest.fixture
def source() -> McpCatalog:
    return McpCatalog(
        tools=lambda: TOOLS,
        hides=lambda name: name == mcp_name("big", "op_001"),
        context_window=200_000,
        mode=parse_tool_search("true"),
    )


async def search(source: McpCatalog, tmp_path: Path, **tool_input: Any) -> ToolOutput:
    tool = source.tools()[TOOL_SEARCH]
    return await tool.call(tool.parse_input(tool_input), ToolContext(cwd=tmp_path))


def schema_of(tool: ServerTool) -> str:
    return json.dumps(dict(tool.schema), separators=(",", ":"))


async def test_keywords_find_the_best_match_first_and_load_its_schema(
    source: McpCatalog, tmp_path: Path
) -> None:
    output = await search(source, tmp_path, query="time zone", max_results=2)

    assert output.content == (
        f"Loaded 2 tools: {TIME.name}, {CONVERT.name}. Call them with these input schemas.\n\n"
        f"### {TIME.name}\nThe current time in a time zone.\n"
        f"Input schema: {schema_of(TIME)}\n\n"
        f"### {CONVERT.name}\nConvert a time between zones.\n"
        f"Input schema: {schema_of(CONVERT)}"
    )
    assert source.loaded == {TIME.name, CONVERT.name}
    assert [spec.name for spec in source.specs()] == [TIME.name, CONVERT.name, TOOL_SEARCH]
    assert source.specs()[0] == TIME.spec()


async def test_a_word_of_the_description_finds_a_tool(source: McpCatalog, tmp_path: Path) -> None:
    output = await search(source, tmp_path, query="weather")

    assert isinstance(output.content, str)
    assert output.content.startswith(f"Loaded 1 tool: {WEATHER.name}. ")
    assert output.data == {"loaded": [WEATHER.name]}
    assert WEATHER.spec() in source.specs()


async def test_select_loads_exactly_the_tools_named_and_says_which_are_not_there(
    source: McpCatalog, tmp_path: Path
) -> None:
    query = f"select:{WEATHER.name}, mcp__sky__nothing ,{TIME.name}"
    output = await search(source, tmp_path, query=query)

    assert isinstance(output.content, str)
    assert output.content.startswith(f"Loaded 2 tools: {WEATHER.name}, {TIME.name}. ")
    assert output.content.endswith("No deferred tool is named mcp__sky__nothing.")
    assert f"Input schema: {schema_of(WEATHER)}" in output.content
    assert source.loaded == {WEATHER.name, TIME.name}


async def test_a_bare_tool_name_loads_that_tool(source: McpCatalog, tmp_path: Path) -> None:
    output = await search(source, tmp_path, query=CONVERT.name)

    assert loaded_names(str(output.content)) == (CONVERT.name,)


async def test_no_match_is_one_line_naming_a_few_tools(source: McpCatalog, tmp_path: Path) -> None:
    output = await search(source, tmp_path, query="kubernetes")

    assert output.content == (
        "No tool matches 'kubernetes'; tools you can load include mcp__big__op_000, "
        "mcp__big__op_002, mcp__big__op_003, mcp__big__op_004, mcp__big__op_005, "
        "mcp__big__op_006, mcp__big__op_007, mcp__big__op_008 and 44 more."
    )
    assert source.loaded == frozenset()


async def test_a_hidden_tool_cannot_be_selected(source: McpCatalog, tmp_path: Path) -> None:
    output = await search(source, tmp_path, query="select:mcp__big__op_001")

    assert output.content == (
        "No tool matches 'select:mcp__big__op_001'; tools you can load include "
        "mcp__big__op_000, mcp__big__op_002, mcp__big__op_003, mcp__big__op_004, "
        "mcp__big__op_005, mcp__big__op_006, mcp__big__op_007, mcp__big__op_008 and 44 more."
    )


def test_bad_input_is_one_line(source: McpCatalog) -> None:
    tool = source.tools()[TOOL_SEARCH]
    with pytest.raises(ToolInputError, match=r"^Expected `int` >= 1 - at `\$.max_results`$"):
        tool.parse_input({"query": "x", "max_results": 0})
    with pytest.raises(ToolInputError, match="query"):
        tool.parse_input({})


def test_tool_search_reads_only_and_runs_beside_others(source: McpCatalog) -> None:
    tool: Tool[Any] = source.tools()[TOOL_SEARCH]
    parsed = tool.parse_input({"query": "time"})

    assert tool.is_read_only(parsed)
    assert tool.is_concurrency_safe(parsed)
    assert tool.subject_kind == "none"
    assert tool.permission_subject(parsed) is None


async def test_a_toolbox_sees_what_tool_search_loaded_at_its_next_read(
    source: McpCatalog, tmp_path: Path
) -> None:
    box = Toolbox.of([ServerTool("Builtin", "A built-in tool.")]).with_source(source)
    assert [spec.name for spec in box.specs] == ["Builtin", TOOL_SEARCH]

    await search(source, tmp_path, query="weather forecast")

    assert [spec.name for spec in box.specs] == ["Builtin", WEATHER.name, TOOL_SEARCH]
    assert box.tools()[WEATHER.name] is WEATHER


def test_the_listing_keeps_one_short_line_per_tool() -> None:
    assert summary("\n\n  First   line here.  \nSecond.") == "First line here."
    long = summary("word " * 60)
    assert len(long) == 100
    assert long.endswith("…")


def test_a_resumed_conversation_names_the_tools_it_called_and_loaded() -> None:
    messages: list[Message] = [
        UserMessage.of_text("what time is it?"),
        AssistantMessage(
            (
                ToolUseBlock("a", TOOL_SEARCH, {"query": "time"}),
                ToolUseBlock("b", TOOL_SEARCH, {"query": "nothing"}),
                ToolUseBlock("c", WEATHER.name, {"city": "Oslo"}),
                ToolUseBlock("d", "Read", {"file_path": "x"}),
            )
        ),
        UserMessage(
            (
                ToolResultBlock(
                    "a", (TextBlock(f"Loaded 2 tools: {TIME.name}, {CONVERT.name}. Call …"),)
                ),
                ToolResultBlock("b", (TextBlock("Loaded 1 tool: mcp__x__y. "),), is_error=True),
                ToolResultBlock("c", (TextBlock("Loaded 1 tool: mcp__x__z. "),)),
                ToolResultBlock("d", (TextBlock("Loaded 1 tool: mcp__x__w. "),)),
            )
        ),
    ]

    assert used_mcp_tools(messages) == {TIME.name, CONVERT.name, WEATHER.name}


async def test_through_the_loop_a_search_shows_the_schema_at_the_next_model_call(
    source: McpCatalog, tmp_path: Path
) -> None:
    model = ScriptedProvider(
        [
            tool_call(TOOL_SEARCH, {"query": f"select:{WEATHER.name}"}),
            tool_call(WEATHER.name, {"city": "Oslo"}),
            text("done"),
        ]
    )
    params = make_params(model, [ServerTool("Builtin", "A built-in tool.")], tmp_path)
    params = replace(params, tools=params.tools.with_source(source))

    events = await run(params)

    shown = [[spec.name for spec in request.tools] for request in model.requests]
    assert shown == [
        ["Builtin", TOOL_SEARCH],
        ["Builtin", WEATHER.name, TOOL_SEARCH],
        ["Builtin", WEATHER.name, TOOL_SEARCH],
    ]
    assert WEATHER.spec() in model.requests[1].tools
    result = results_in(finished(events).messages[-2])[0]
    assert result.text == f"{WEATHER.name} ran with {{'city': 'Oslo'}}"
    assert used_mcp_tools(finished(events).messages) == {WEATHER.name}
