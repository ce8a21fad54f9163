"""The catalog decides which MCP tool definitions the model sees: all of them while they are
cheap, names behind ToolSearch once they would take too much of the window, never an
always-load tool's, never a hidden tool's; and what that costs or saves.

The tools standing in for a server's here are plain ones (the catalog is under test, not the
MCP client); each brings its own JSON Schema, as an MCP tool does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stayer.errors import ConfigError
from stayer.mcp.catalog import (
    MAX_SERVER_PINNED_TOKENS,
    McpCatalog,
    ToolSearchMode,
    parse_tool_search,
)
from stayer.mcp.tokens import spec_tokens
from stayer.messages import JSON, ToolSpec
from stayer.tools.base import Tool, Toolbox, ToolContext, ToolOutput
from stayer.tools.names import MCP_PREFIX, TOOL_SEARCH


class ServerTool(Tool[Mapping[str, JSON]]):
    """A tool with its own name, description and schema; a call answers with its input."""

    def __init__(
        self,
        name: str,
        description: str,
        schema: Mapping[str, JSON] | None = None,
        *,
        always_load: bool = False,
        server_always_load: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.schema: Mapping[str, JSON] = schema or {"type": "object", "properties": {}}
        self.always_load = always_load
        self.server_always_load = server_always_load
        self.specs_made = 0

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return self.schema

    def parse_input(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        return dict(raw)

    def spec(self) -> ToolSpec:
        self.specs_made += 1
        return super().spec()

    async def call(self, tool_input: Mapping[str, JSON], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"{self.name} ran with {dict(tool_input)}")


def mcp_name(server: str, tool: str) -> str:
    return f"{MCP_PREFIX}{server}__{tool}"


def many_tools(count: int, *, server: str = "big") -> tuple[ServerTool, ...]:
    """`count` tools with schemas of a realistic size (a few hundred tokens each)."""
    return tuple(
        ServerTool(
            mcp_name(server, f"op_{index:03}"),
            f"Operation number {index} of the {server} server.\nIt takes a few options.",
            _schema(index),
        )
        for index in range(count)
    )


def _schema(index: int) -> dict[str, Any]:
    properties = {
        f"option_{n}": {
            "type": "string",
            "description": f"Option {n} of operation {index}, which changes how it behaves.",
        }
        for n in range(8)
    }
    return {"type": "object", "properties": properties, "required": ["option_0"]}


WINDOW = 200_000


def catalog(
    tools: Sequence[Tool[Any]],
    *,
    setting: str | None = None,
    hidden: frozenset[str] = frozenset(),
    window: int = WINDOW,
) -> McpCatalog:
    return McpCatalog(
        tools=lambda: tools,
        hides=lambda name: name in hidden,
        context_window=window,
        mode=parse_tool_search(setting),
    )


def names(specs: Sequence[ToolSpec]) -> list[str]:
    return [spec.name for spec in specs]


def test_parse_tool_search_reads_each_form_claude_code_takes() -> None:
    assert parse_tool_search(None) == ToolSearchMode("auto", 10)
    assert parse_tool_search("") == ToolSearchMode("auto", 10)
    assert parse_tool_search("auto") == ToolSearchMode("auto", 10)
    assert parse_tool_search(" TRUE ") == ToolSearchMode("always")
    assert parse_tool_search("false") == ToolSearchMode("never")
    assert parse_tool_search("auto:5") == ToolSearchMode("auto", 5)
    assert parse_tool_search("auto:2.5%") == ToolSearchMode("auto", 2.5)
    assert parse_tool_search("auto:0") == ToolSearchMode("auto", 0)


@pytest.mark.parametrize("value", ["ture", "auto:", "auto:x", "auto:150", "auto:-1", "1"])
def test_a_value_it_does_not_know_is_one_line_saying_what_to_use(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_tool_search(value)
    assert str(caught.value) == (
        f"ENABLE_TOOL_SEARCH={value} is not a value stayer knows: use true, false, auto or "
        "auto:N (N the percent of the context window, 0 to 100), or unset it"
    )


def test_two_hundred_tools_are_deferred_under_auto() -> None:
    tools = many_tools(200)
    assert spec_tokens(tool.spec() for tool in tools) > WINDOW // 10
    source = catalog(tools)

    [search] = source.specs()
    assert search.name == TOOL_SEARCH
    for tool in tools:
        assert f"- {tool.name}: Operation number {tool.name[-3:].lstrip('0') or '0'} " in (
            search.description
        )
    assert "It takes a few options" not in search.description  # only the first line
    assert set(source.tools()) == {tool.name for tool in tools} | {TOOL_SEARCH}
    assert source.deferring


def test_two_hundred_tools_are_shown_whole_when_deferral_is_off() -> None:
    tools = many_tools(200)
    source = catalog(tools, setting="false")

    assert source.specs() == tuple(tool.spec() for tool in tools)
    assert set(source.tools()) == {tool.name for tool in tools}
    assert source.saved_tokens() == 0


def test_a_few_cheap_tools_are_shown_whole_under_auto_and_deferred_under_true() -> None:
    tools = many_tools(3)

    assert names(catalog(tools).specs()) == [tool.name for tool in tools]
    assert names(catalog(tools, setting="true").specs()) == [TOOL_SEARCH]


def test_auto_n_sets_the_share_of_the_window_that_defers() -> None:
    tools = many_tools(10)
    cost = spec_tokens(tool.spec() for tool in tools)
    window = cost * 100 // 7  # the tools take a little over 7% of it

    assert not catalog(tools, window=window).deferring
    assert not catalog(tools, window=window, setting="auto:8").deferring
    assert catalog(tools, window=window, setting="auto:7").deferring
    assert catalog(tools, window=window, setting="auto:0").deferring


def test_an_always_load_tool_is_never_deferred_nor_listed() -> None:
    pinned = ServerTool(mcp_name("core", "status"), "Says how the core is.", always_load=True)
    tools = (*many_tools(3), pinned)
    source = catalog(tools, setting="true")

    specs = source.specs()
    assert names(specs) == [pinned.name, TOOL_SEARCH]
    assert pinned.name not in specs[-1].description
    assert pinned not in source.deferred()


def test_a_server_may_pin_a_small_tool_but_not_a_large_one() -> None:
    small = ServerTool(mcp_name("s", "small"), "Small.", server_always_load=True)
    fat_schema: dict[str, JSON] = {
        "type": "object",
        "properties": {f"p{n}": {"type": "string", "description": "z" * 200} for n in range(100)},
    }
    fat = ServerTool(mcp_name("s", "fat"), "Fat.", fat_schema, server_always_load=True)
    assert spec_tokens([small.spec()]) <= MAX_SERVER_PINNED_TOKENS < spec_tokens([fat.spec()])
    source = catalog((*many_tools(200), small, fat))

    assert names(source.specs()) == [small.name, TOOL_SEARCH]
    assert fat in source.waiting() and fat.name in source.specs()[-1].description
    # The user's own alwaysLoad is absolute, however large.
    users = ServerTool(mcp_name("s", "fat"), "Fat.", fat_schema, always_load=True)
    assert names(catalog((*many_tools(200), users)).specs()) == [users.name, TOOL_SEARCH]


def test_only_always_load_tools_need_no_tool_search() -> None:
    pinned = ServerTool(mcp_name("core", "status"), "Says how the core is.", always_load=True)
    source = catalog([pinned], setting="true")

    assert names(source.specs()) == [pinned.name]
    assert set(source.tools()) == {pinned.name}


def test_a_hidden_tool_is_neither_shown_nor_callable_nor_found() -> None:
    tools = many_tools(200)
    secret = tools[7].name
    source = catalog(tools, hidden=frozenset({secret}))

    assert secret not in source.specs()[0].description
    assert secret not in source.tools()
    assert tools[7] not in source.deferred()
    shown_whole = catalog(tools, hidden=frozenset({secret}), setting="false")
    assert secret not in names(shown_whole.specs())


def test_with_tool_search_denied_every_tool_is_shown_whole() -> None:
    tools = many_tools(200)
    source = catalog(tools, hidden=frozenset({TOOL_SEARCH}))

    assert names(source.specs()) == [tool.name for tool in tools]
    assert TOOL_SEARCH not in source.tools()


def test_loading_adds_the_full_definition_from_the_next_call_on() -> None:
    tools = many_tools(200)
    source = catalog(tools)
    before = source.specs()[0].description

    source.load([tools[4].name, "mcp__gone__tool"])

    specs = source.specs()
    assert names(specs) == [tools[4].name, TOOL_SEARCH]
    assert specs[0] == tools[4].spec()
    assert tools[4].name in before
    assert tools[4].name not in specs[-1].description  # listed only while it waits
    assert source.loaded == {tools[4].name, "mcp__gone__tool"}


def test_the_tokens_saved_are_what_the_whole_definitions_would_have_added() -> None:
    tools = many_tools(200)
    source = catalog(tools)
    whole = spec_tokens(tool.spec() for tool in tools)
    builtins = (ToolSpec("Builtin", "A built-in tool.", {"type": "object"}),)

    saved = source.saved_tokens()
    assert saved == whole - spec_tokens(source.specs())
    assert saved > whole * 0.8  # a name and a line instead of a schema
    assert source.tool_tokens(builtins) == spec_tokens(builtins) + spec_tokens(source.specs())
    off = catalog(tools, setting="false")
    assert off.tool_tokens(builtins) == spec_tokens(builtins) + whole


def test_a_model_call_that_changes_nothing_rebuilds_nothing() -> None:
    tools = many_tools(200)
    source = catalog(tools)
    first = source.specs()
    made = sum(tool.specs_made for tool in tools)

    for _ in range(50):
        assert source.specs() is first
        source.tools()
    assert sum(tool.specs_made for tool in tools) == made


def test_a_new_tool_set_or_rule_is_seen_at_the_next_call() -> None:
    current: list[Sequence[Tool[Any]]] = [many_tools(2)]
    hidden: set[str] = set()
    source = McpCatalog(
        tools=lambda: current[0],
        hides=lambda name: name in hidden,
        context_window=WINDOW,
    )
    assert len(source.specs()) == 2

    current[0] = (*current[0], *many_tools(200, server="late"))
    assert names(source.specs()) == [TOOL_SEARCH]
    hidden.add(TOOL_SEARCH)
    assert len(source.specs()) == 202


async def test_a_toolbox_shows_the_catalog_and_calls_a_deferred_tool(tmp_path: Path) -> None:
    tools = many_tools(200)
    builtin = ServerTool("Builtin", "A built-in tool.")
    box = Toolbox.of([builtin]).with_source(catalog(tools))

    assert names(box.specs) == ["Builtin", TOOL_SEARCH]
    deferred = box.tools()[tools[9].name]
    output = await deferred.call(deferred.parse_input({"option_0": "x"}), ToolContext(cwd=tmp_path))
    assert output.content == f"{tools[9].name} ran with {{'option_0': 'x'}}"
