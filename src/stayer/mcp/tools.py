"""One MCP server tool as a stayer tool (`McpTool`), and the server handle it calls through.

The tool brings the server's own name (made safe, `naming`), description and JSON Schema; its
input is checked against that schema here, with `jsonschema` (which the `mcp` SDK depends on),
so the model gets one line of what is wrong before anything reaches the server. Regular
expressions (`pattern`, `patternProperties`) and `format` are left to the server: a hostile
pattern would otherwise hang the session in the check (see `_without_regexes`).

What a server says of its tools is a hint from a program, not a fact: `readOnlyHint` makes a
tool read-only (asked less, run beside others) only when the user configured or approved the
server (`McpServerConfig.trusted`); otherwise the tool stays what every tool is by default,
one that may change things. MCP tools have no path or command for permission rules to judge,
so rules judge them as a whole tool (`mcp__server`, `mcp__server__tool`).

A call may take the server's `timeout`, else `MCP_TOOL_TIMEOUT` (Claude Code's variable, in
milliseconds), else what any tool may. Results are held to `MAX_MCP_OUTPUT_TOKENS` (Claude
Code's variable, 25,000 tokens unless set)
and not bounded here: the executor saves a longer one whole to the session's folder and shows
the model its start and end, as for every tool that does not bound its own results.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from stayer.config.mcp_servers import McpServerConfig
from stayer.events import McpServerStatus
from stayer.messages import JSON
from stayer.tools.base import (
    DEFAULT_TIMEOUT_S,
    MAX_RESULT_CHARS,
    Tool,
    ToolContext,
    ToolFailure,
    ToolInputError,
    ToolOutput,
)

from .limits import CHARS_PER_TOKEN, DEFAULT_OUTPUT_TOKENS
from .limits import result_chars as result_chars
from .limits import tool_timeout_from as tool_timeout_from
from .naming import tool_name, unique_names
from .results import to_output
from .server import McpUnavailable

if TYPE_CHECKING:
    from mcp.types import (
        CallToolResult,
        ReadResourceResult,
        Resource,
    )
    from mcp.types import (
        Tool as McpToolDef,
    )


MAX_DESCRIPTION_CHARS = 2_000
"""The most of a server's tool description the model is shown (some run to pages)."""

ALWAYS_LOAD_META = "anthropic/alwaysLoad"
"""The `_meta` key by which a server asks that a tool never be deferred (Claude Code's); the
catalog grants it only to a small definition (`stayer.mcp.catalog`)."""

_MAX_PROBLEMS = 3
_MAX_PROBLEM_CHARS = 200


class ServerHandle(Protocol):
    """What the MCP tools need of one configured server and its connection (`McpServer`)."""

    @property
    def config(self) -> McpServerConfig: ...

    @property
    def status(self) -> McpServerStatus: ...

    @property
    def tool_defs(self) -> tuple[McpToolDef, ...]: ...

    @property
    def offers_resources(self) -> bool: ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout_s: float | None
    ) -> CallToolResult: ...

    async def list_resources(self) -> list[Resource]: ...

    async def read_resource(self, uri: str) -> ReadResourceResult: ...


class McpTool(Tool[dict[str, Any]]):
    """One tool of one MCP server, called through the server's handle."""

    subject_kind = "none"
    bounds_own_results = False

    def __init__(
        self,
        server: ServerHandle,
        definition: McpToolDef,
        *,
        max_result_chars: int = DEFAULT_OUTPUT_TOKENS * CHARS_PER_TOKEN,
        default_timeout_s: float | None = None,
        name: str | None = None,
    ) -> None:
        config = server.config
        self._server = server
        self.server_name = config.name
        self.tool_name = definition.name
        self.name = name or tool_name(config.name, definition.name)
        self.description = _description(config.name, definition.description)
        self._schema = _object_schema(definition.input_schema)
        self._validator: Any = None
        hints = definition.annotations
        self.read_only = bool(hints and hints.read_only_hint is True and config.trusted)
        meta = definition.meta or {}
        # Kept apart: the user's word is absolute; the server's own is a request the catalog
        # grants only to a small definition (a hostile one could pin megabytes to every call).
        self.always_load = config.always_load
        self.server_always_load = meta.get(ALWAYS_LOAD_META) is True
        self.max_result_chars = min(max_result_chars, MAX_RESULT_CHARS)
        # The server's own `timeout`, else MCP_TOOL_TIMEOUT's (`default_timeout_s`).
        self._call_timeout_s = config.timeout_s or default_timeout_s
        self.timeout_s = self._call_timeout_s or DEFAULT_TIMEOUT_S

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return self._schema

    def is_concurrency_safe(self, tool_input: dict[str, Any]) -> bool:
        return self.read_only

    def parse_input(self, raw: Mapping[str, JSON]) -> dict[str, Any]:
        given = dict(raw)
        validator = self._get_validator()
        if validator is None:  # the server's schema is broken: let the server judge the input
            return given
        errors = sorted(validator.iter_errors(given), key=lambda error: list(error.path))
        if errors:
            raise ToolInputError("; ".join(_problem(error) for error in errors[:_MAX_PROBLEMS]))
        return given

    def _get_validator(self) -> Any:
        if self._validator is None:
            self._validator = _validator(self._schema) or False
        return self._validator or None

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from mcp import MCPError

        try:
            result = await self._server.call_tool(
                self.tool_name, dict(tool_input), timeout_s=self._call_timeout_s
            )
        except McpUnavailable as exc:
            raise ToolFailure(str(exc)) from None
        except MCPError as exc:
            raise ToolFailure(
                f"MCP server {self.server_name!r} refused the call to {self.tool_name!r}: "
                f"{one_line(exc.message)}"
            ) from None
        return to_output(result)


def server_tools(
    servers: Sequence[ServerHandle],
    *,
    max_result_chars: int,
    default_timeout_s: float | None = None,
) -> tuple[McpTool, ...]:
    """A tool for each tool the `servers` list now, in order, no two with one name; a call to
    a server with no `timeout` of its own may take `default_timeout_s` (`tool_timeout_from`)."""
    listed = [(server, definition) for server in servers for definition in server.tool_defs]
    names = unique_names((server.config.name, definition.name) for server, definition in listed)
    return tuple(
        McpTool(
            server,
            definition,
            max_result_chars=max_result_chars,
            default_timeout_s=default_timeout_s,
            name=name,
        )
        for (server, definition), name in zip(listed, names, strict=True)
    )


def _description(server: str, given: str | None) -> str:
    text = (given or "").strip() or f"A tool of the MCP server {server!r} (it gave no description)."
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    note = f"\n[description cut at {MAX_DESCRIPTION_CHARS} characters]"
    return text[: MAX_DESCRIPTION_CHARS - len(note)] + note


def _object_schema(schema: Mapping[str, Any]) -> dict[str, JSON]:
    """The server's schema with an object at its root, which every provider requires."""
    made: dict[str, JSON] = dict(schema)
    if made.get("type") != "object":
        made["type"] = "object"
    return made


def _validator(schema: Mapping[str, Any]) -> Any:
    """A validator for `schema` (of the draft it names) that leaves regular expressions and
    formats to the server, or None when it is no valid schema."""
    from jsonschema import exceptions, validators  # type: ignore[import-untyped]  # no stubs locked

    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError:
        return None
    return _without_regexes(cls)(schema)


@functools.cache
def _without_regexes(cls: Any) -> Any:
    """`cls` less every keyword that runs a server's regular expression on the model's input.

    Python's `re` backtracks: a pattern like ``^(a+)+$`` against forty a's and a ``!`` runs
    for minutes on the event loop, where Ctrl+C cannot reach it. The server runs its own
    patterns anyway, so here they are skipped (with `format`, which is as much the server's
    to judge), and so is `additionalProperties` where `patternProperties` decides which names
    it covers."""
    from jsonschema import validators

    additional = cls.VALIDATORS.get("additionalProperties")

    def additional_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if additional is None or "patternProperties" in schema:
            return None
        return additional(validator, value, instance, schema)

    skipped = dict.fromkeys(
        ("pattern", "format", "patternProperties", "unevaluatedProperties"), _skip
    )
    return validators.extend(cls, {**skipped, "additionalProperties": additional_properties})


def _skip(*_given: Any) -> None:
    """A keyword left to the server: it finds nothing wrong here."""


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.absolute_path) or "input"
    message = one_line(str(error.message))
    if len(message) > _MAX_PROBLEM_CHARS:
        message = message[: _MAX_PROBLEM_CHARS - 3] + "..."
    return f"{where}: {message}"


def one_line(text: str) -> str:
    """`text` with its line breaks and runs of spaces made single spaces."""
    return " ".join(text.split())
