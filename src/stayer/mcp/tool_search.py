"""The ToolSearch tool: how the model gets the full definitions of MCP tools sent by name only.

When MCP tool definitions would take too much of the context window, the catalog
(`stayer.mcp.catalog`) shows the model only their names and one-line descriptions, listed in
this tool's description. The model then asks for what it needs, by exact names
(``select:a,b``) or by keywords matched against names and descriptions; the tool answers with
each match's description and input schema, and the catalog shows those tools in full from the
next model call on. Deferred tools are callable all along: loading only shows their schemas.

The first line of an answer names the tools it loaded (`loaded_names` reads it back), so a
resumed session can load again what its conversation loaded, from the transcript alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Protocol

import msgspec

from stayer.messages import JSON, ToolSpec
from stayer.tools.base import (
    MAX_RESULT_CHARS,
    Tool,
    ToolContext,
    ToolFailure,
    ToolInputError,
    ToolOutput,
)
from stayer.tools.names import MCP_PREFIX, TOOL_SEARCH

from .tokens import schema_json

DEFAULT_RESULTS = 5
MOST_RESULTS = 50
SUMMARY_CHARS = 100
"""How much of a deferred tool's description the listing shows (its first line, cut)."""
NAMES_SHOWN = 8
"""How many tool names an answer with no match suggests."""
SELECT = "select:"

_LOADED = re.compile(r"\ALoaded \d+ tools?: ([^\n]*?)\. ")
_WORD = re.compile(r"[a-z0-9]+")

_PURPOSE = (
    "Load the full definitions of tools that are available but were left out of this "
    "request to save context. You know only their names and what they are for (listed "
    "below); load one before calling it, so you call it with its real input schema.\n"
    f'- "{SELECT}name1,name2" loads exactly the tools named.\n'
    "- Any other query is keywords, matched against tool names and descriptions; the best "
    "matches are loaded (max_results, 5 unless you say).\n"
    "The answer gives each loaded tool's description and input schema; from then on you "
    "call it like any other tool."
)

_SCHEMA: Mapping[str, JSON] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": f'"{SELECT}name1,name2" for exact tools, or keywords to search for',
        },
        "max_results": {
            "type": "integer",
            "minimum": 1,
            "maximum": MOST_RESULTS,
            "default": DEFAULT_RESULTS,
            "description": "The most tools a keyword search loads",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class Deferred(Protocol):
    """What ToolSearch needs of the catalog (`stayer.mcp.catalog.McpCatalog`)."""

    def deferred(self) -> tuple[Tool[Any], ...]:
        """The tools whose schemas are deferred now (loaded since or not), in order."""
        ...

    def waiting(self) -> tuple[Tool[Any], ...]:
        """The deferred tools not loaded yet, which the listing names."""
        ...

    def load(self, names: Iterable[str]) -> None:
        """Show the full definitions of `names` from the next model call on."""
        ...


class ToolSearchInput(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    query: str
    max_results: Annotated[int, msgspec.Meta(ge=1, le=MOST_RESULTS)] = DEFAULT_RESULTS


class ToolSearch(Tool[ToolSearchInput]):
    """Finds deferred MCP tools and loads their schemas into the catalog."""

    name = TOOL_SEARCH
    description = _PURPOSE
    read_only = True
    max_result_chars = MAX_RESULT_CHARS  # five big schemas come back whole, not as a saved file

    def __init__(self, catalog: Deferred) -> None:
        self._catalog = catalog

    def is_concurrency_safe(self, tool_input: ToolSearchInput) -> bool:
        return True

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return _SCHEMA

    def parse_input(self, raw: Mapping[str, JSON]) -> ToolSearchInput:
        try:
            return msgspec.convert(dict(raw), ToolSearchInput)
        except msgspec.ValidationError as exc:
            raise ToolInputError(str(exc)) from None

    def spec(self) -> ToolSpec:
        """The tool as the model sees it: its purpose, then every tool it can load."""
        return search_spec(self._catalog.waiting())

    async def call(self, tool_input: ToolSearchInput, ctx: ToolContext) -> ToolOutput:
        query = tool_input.query.strip()
        if not query or query == SELECT:
            raise ToolFailure(f'The query is empty: give keywords, or "{SELECT}" and tool names.')
        deferred = self._catalog.deferred()
        if query.startswith(SELECT):
            wanted = [name.strip() for name in query[len(SELECT) :].split(",") if name.strip()]
            found, missing = _selected(deferred, wanted)
        else:
            found, missing = _ranked(deferred, query, tool_input.max_results), []
        if not found:
            return ToolOutput(_nothing(query, self._catalog.waiting()))
        self._catalog.load(tool.name for tool in found)
        return ToolOutput(_answer(found, missing), data={"loaded": [tool.name for tool in found]})


def search_spec(waiting: Sequence[Tool[Any]]) -> ToolSpec:
    """ToolSearch's definition, listing the tools in `waiting` by name and purpose."""
    if waiting:
        listing = "\n".join(f"- {tool.name}: {summary(tool.description)}" for tool in waiting)
        text = f"{_PURPOSE}\n\nTools you can load:\n{listing}"
    else:
        text = f"{_PURPOSE}\n\nEvery deferred tool is loaded already."
    return ToolSpec(TOOL_SEARCH, text, _SCHEMA)


def summary(description: str) -> str:
    """A description's first line that has words, cut to about `SUMMARY_CHARS`."""
    line = next((line.strip() for line in description.splitlines() if line.strip()), "")
    line = " ".join(line.split())
    if len(line) <= SUMMARY_CHARS:
        return line
    return line[: SUMMARY_CHARS - 1].rstrip() + "…"


def loaded_names(result_text: str) -> tuple[str, ...]:
    """The tools a ToolSearch answer says it loaded (none for any other text)."""
    match = _LOADED.match(result_text)
    if match is None:
        return ()
    return tuple(name for name in match.group(1).split(", ") if name)


def _selected(
    deferred: Sequence[Tool[Any]], wanted: Sequence[str]
) -> tuple[list[Tool[Any]], list[str]]:
    by_name = {tool.name: tool for tool in deferred}
    found = [by_name[name] for name in dict.fromkeys(wanted) if name in by_name]
    return found, [name for name in wanted if name not in by_name]


def _ranked(deferred: Sequence[Tool[Any]], query: str, limit: int) -> list[Tool[Any]]:
    exact = [tool for tool in deferred if tool.name.lower() == query.lower()]
    if exact:  # a bare tool name is a select the model forgot to mark
        return exact
    terms = list(dict.fromkeys(_WORD.findall(query.lower())))
    scored = [(_score(tool, terms), index, tool) for index, tool in enumerate(deferred)]
    best = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
    return [tool for _, _, tool in best[:limit]]


def _score(tool: Tool[Any], terms: Sequence[str]) -> int:
    """How well `tool` answers `terms`: a word of the tool's own name counts most, then part
    of it, then its server's name, then a word of its description, then part of one."""
    server, short = _parts(tool.name)
    short_words = set(_WORD.findall(short))
    server_words = set(_WORD.findall(server))
    text = tool.description.lower()
    text_words = set(_WORD.findall(text))
    score = 0
    for term in terms:
        if term in short_words:
            score += 10
        elif term in short:
            score += 6
        elif term in server_words or (len(term) > 2 and term in server):
            score += 4
        elif term in text_words:
            score += 2
        elif len(term) > 2 and term in text:
            score += 1
    return score


def _parts(name: str) -> tuple[str, str]:
    """The server's and the tool's own part of `mcp__server__tool`, lower case."""
    lowered = name.lower()
    if not lowered.startswith(MCP_PREFIX):
        return "", lowered
    server, _, short = lowered[len(MCP_PREFIX) :].partition("__")
    return server, short or server


def _answer(found: Sequence[Tool[Any]], missing: Sequence[str]) -> str:
    names = ", ".join(tool.name for tool in found)
    plural = "tool" if len(found) == 1 else "tools"
    parts = [f"Loaded {len(found)} {plural}: {names}. Call them with these input schemas."]
    for tool in found:
        schema = schema_json(tool.input_schema)
        parts.append(f"### {tool.name}\n{tool.description.strip()}\nInput schema: {schema}")
    if missing:
        parts.append(f"No deferred tool is named {', '.join(missing)}.")
    return "\n\n".join(parts)


def _nothing(query: str, waiting: Sequence[Tool[Any]]) -> str:
    if not waiting:
        return f"No tool matches {query!r}, and no tool is waiting to be loaded."
    names = ", ".join(tool.name for tool in waiting[:NAMES_SHOWN])
    more = f" and {len(waiting) - NAMES_SHOWN} more" if len(waiting) > NAMES_SHOWN else ""
    return f"No tool matches {query!r}; tools you can load include {names}{more}."
