"""Plain tools standing in for a server's tools in the catalog tests (the catalog is what is
under test, not the MCP client): each brings its own JSON Schema, as an MCP tool does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stayer.messages import JSON, ToolSpec
from stayer.tools.base import Tool, ToolContext, ToolOutput
from stayer.tools.names import MCP_PREFIX


class ServerTool(Tool[Mapping[str, JSON]]):
    """A tool with its own name, description and schema; a call answers with its input."""

    def __init__(
        self,
        name: str,
        description: str,
        schema: Mapping[str, JSON] | None = None,
        *,
        always_load: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.schema: Mapping[str, JSON] = schema or {"type": "object", "properties": {}}
        self.always_load = always_load
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
