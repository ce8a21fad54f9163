"""ListMcpResources and ReadMcpResource over real SDK servers: listing every server's resources
or one's, reading text and binary ones, a server that is not there or not known, and when the
tools count as read-only (only over trusted servers)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.types import ListToolsResult, PaginatedRequestParams

from stayer.mcp.resources import ListMcpResourcesTool, ReadMcpResourceTool
from stayer.mcp.tools import ServerHandle
from stayer.messages import TextBlock
from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.names import LIST_MCP_RESOURCES, READ_MCP_RESOURCE
from tests.mcp.inproc import InProcessServer, connected


def docs_server() -> MCPServer:
    server = MCPServer("docs")

    @server.resource("file:///guide.md", description="How to start")
    def guide() -> str:
        return "# Guide\nRun it."

    @server.resource("file:///logo.png", mime_type="image/png")
    def logo() -> bytes:
        return bytes(2_000)

    return server


def notes_server() -> MCPServer:
    server = MCPServer("notes")

    @server.resource("note://today")
    def today() -> str:
        return "buy milk"

    return server


def tools_only_server() -> Server[Any]:
    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[])

    return Server("plain", on_list_tools=list_tools)


@asynccontextmanager
async def three(
    *, docs_trusted: bool = True, notes_trusted: bool = True
) -> AsyncIterator[list[InProcessServer]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(connected(docs_server(), "docs", trusted=docs_trusted)),
            await stack.enter_async_context(
                connected(notes_server(), "notes", trusted=notes_trusted)
            ),
            await stack.enter_async_context(connected(tools_only_server(), "plain")),
        ]


def tools(handles: Sequence[ServerHandle]) -> tuple[ListMcpResourcesTool, ReadMcpResourceTool]:
    return ListMcpResourcesTool(lambda: handles), ReadMcpResourceTool(lambda: handles)


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_the_tools_have_claude_codes_names_and_no_subject() -> None:
    listing, reading = tools([])
    assert (listing.name, reading.name) == (LIST_MCP_RESOURCES, READ_MCP_RESOURCE)
    assert listing.subject_kind == reading.subject_kind == "none"


async def test_listing_every_servers_resources(tmp_path: Path) -> None:
    async with three() as handles:
        listing, _ = tools(handles)
        output = await listing.call(listing.parse_input({}), ctx(tmp_path))
    expected = [
        {"server": "docs", "uri": "file:///guide.md", "name": "guide", "mimeType": "text/plain",
         "description": "How to start"},
        {"server": "docs", "uri": "file:///logo.png", "name": "logo", "mimeType": "image/png"},
        {"server": "notes", "uri": "note://today", "name": "today", "mimeType": "text/plain"},
    ]  # fmt: skip
    assert output.data == {"resources": expected}
    assert isinstance(output.content, str) and json.loads(output.content) == expected


async def test_listing_one_servers_resources(tmp_path: Path) -> None:
    async with three() as handles:
        listing, _ = tools(handles)
        output = await listing.call(listing.parse_input({"server": "notes"}), ctx(tmp_path))
    assert output.data == {
        "resources": [
            {"server": "notes", "uri": "note://today", "name": "today", "mimeType": "text/plain"}
        ]
    }


async def test_an_unknown_server_is_one_line_naming_those_that_offer_resources(
    tmp_path: Path,
) -> None:
    async with three() as handles:
        listing, reading = tools(handles)
        with pytest.raises(ToolFailure) as listed:
            await listing.call(listing.parse_input({"server": "plain"}), ctx(tmp_path))
        with pytest.raises(ToolFailure) as read:
            await reading.call(reading.parse_input({"server": "nope", "uri": "x"}), ctx(tmp_path))
    assert str(listed.value) == (
        "MCP server 'plain' offers no resources; servers that do: 'docs', 'notes'."
    )
    assert str(read.value) == (
        "No MCP server named 'nope' offers resources; servers that do: 'docs', 'notes'."
    )


async def test_with_no_server_offering_resources_listing_says_so(tmp_path: Path) -> None:
    async with connected(tools_only_server(), "plain") as plain:
        listing, reading = tools([plain])
        output = await listing.call(listing.parse_input({}), ctx(tmp_path))
        with pytest.raises(ToolFailure) as read:
            await reading.call(reading.parse_input({"server": "plain", "uri": "x"}), ctx(tmp_path))
    assert output.content == "No connected MCP server offers resources."
    assert (
        str(read.value) == "MCP server 'plain' offers no resources; no connected server offers any."
    )


async def test_a_server_that_is_down_is_noted_and_the_others_still_listed(tmp_path: Path) -> None:
    async with three() as handles:
        handles[0].down = "exited with status 1"
        listing, reading = tools(handles)
        output = await listing.call(listing.parse_input({}), ctx(tmp_path))
        with pytest.raises(ToolFailure) as read:
            await reading.call(
                reading.parse_input({"server": "docs", "uri": "file:///guide.md"}), ctx(tmp_path)
            )
    assert output.content == json.dumps(
        [{"server": "notes", "uri": "note://today", "name": "today", "mimeType": "text/plain"}],
        indent=1,
    )
    assert str(read.value) == (
        "MCP server 'docs' failed (exited with status 1); servers that do: 'notes'."
    )


async def test_a_server_that_goes_away_mid_request_gives_its_one_line(tmp_path: Path) -> None:
    down = "MCP server 'docs' is restarting after a crash; try again in a moment"
    async with three() as handles:
        listing, reading = tools(handles)
        handles[0].gone_during_next = down
        with pytest.raises(ToolFailure) as read:
            await reading.call(
                reading.parse_input({"server": "docs", "uri": "file:///guide.md"}), ctx(tmp_path)
            )
        handles[0].gone_during_next = down
        with pytest.raises(ToolFailure) as listed:
            await listing.call(listing.parse_input({"server": "docs"}), ctx(tmp_path))
        handles[0].gone_during_next = down
        every = await listing.call(listing.parse_input({}), ctx(tmp_path))
    assert str(read.value) == str(listed.value) == down
    assert isinstance(every.content, str)
    assert every.content.endswith(f"\n[{down}]")
    assert [entry["server"] for entry in every.data["resources"]] == ["notes"]


async def test_a_server_refusing_a_read_is_one_line(tmp_path: Path) -> None:
    async with three() as handles:
        _, reading = tools(handles)
        given = reading.parse_input({"server": "docs", "uri": "file:///missing.md"})
        with pytest.raises(ToolFailure) as read:
            await reading.call(given, ctx(tmp_path))
    assert str(read.value).startswith("MCP server 'docs' refused: ")
    assert "\n" not in str(read.value)


async def test_reading_a_text_resource_gives_its_text(tmp_path: Path) -> None:
    async with three() as handles:
        _, reading = tools(handles)
        given = reading.parse_input({"server": "docs", "uri": "file:///guide.md"})
        output = await reading.call(given, ctx(tmp_path))
    assert output.content == (TextBlock("[resource file:///guide.md]\n# Guide\nRun it."),)
    assert output.data == {"server": "docs", "uri": "file:///guide.md"}


async def test_reading_a_binary_resource_describes_it(tmp_path: Path) -> None:
    async with three() as handles:
        _, reading = tools(handles)
        given = reading.parse_input({"server": "docs", "uri": "file:///logo.png"})
        output = await reading.call(given, ctx(tmp_path))
    assert output.content == (
        TextBlock("[resource file:///logo.png (image/png, 2000 bytes) is binary; not shown]"),
    )


async def test_read_only_only_over_trusted_servers() -> None:
    async with three(notes_trusted=False) as handles:
        listing, reading = tools(handles)
        every = listing.parse_input({})
        docs = listing.parse_input({"server": "docs"})
        notes = listing.parse_input({"server": "notes"})
        read_docs = reading.parse_input({"server": "docs", "uri": "file:///guide.md"})
        read_notes = reading.parse_input({"server": "notes", "uri": "note://today"})
        read_nowhere = reading.parse_input({"server": "nope", "uri": "x"})
        assert listing.is_read_only(docs) and listing.is_concurrency_safe(docs)
        assert not listing.is_read_only(notes) and not listing.is_concurrency_safe(notes)
        assert not listing.is_read_only(every)  # it reaches the untrusted one too
        assert reading.is_read_only(read_docs) and reading.is_concurrency_safe(read_docs)
        assert not reading.is_read_only(read_notes)
        assert not reading.is_read_only(read_nowhere)
    async with three() as handles:
        listing, _ = tools(handles)
        assert listing.is_read_only(listing.parse_input({}))


async def test_the_inputs_are_checked(tmp_path: Path) -> None:
    _, reading = tools([])
    with pytest.raises(ValueError) as problem:
        reading.parse_input({"server": "docs"})
    assert str(problem.value) == "uri: Field required"
