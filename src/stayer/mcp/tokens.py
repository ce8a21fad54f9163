"""What tool definitions cost in a request, estimated without a tokenizer.

The figure decides whether MCP tools are deferred and is what the init line and `/context`
report, so it has to be cheap enough to take at every change of the tool set (a server with 200
tools) and steady from one run to the next; it need not be exact. It counts characters as
`stayer.context.compact` does (about four to a token), which this layer cannot import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from stayer.messages import JSON, ToolSpec

CHARS_PER_TOKEN = 4
"""Characters of English text or JSON per token, roughly (as `stayer.context.compact` counts)."""

SPEC_OVERHEAD_CHARS = 40
"""What the request spends on each tool besides its words: the keys and quotes around them."""


def spec_tokens(specs: Iterable[ToolSpec]) -> int:
    """About how many tokens the definitions of `specs` (name, description, schema) take."""
    chars = sum(spec_chars(spec) for spec in specs)
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def spec_chars(spec: ToolSpec) -> int:
    """How many characters one tool's definition takes on the wire, about."""
    schema = schema_json(spec.input_schema)
    return len(spec.name) + len(spec.description) + len(schema) + SPEC_OVERHEAD_CHARS


def schema_json(schema: Mapping[str, JSON]) -> str:
    """A tool's input schema as compact JSON text."""
    return msgspec.json.encode(schema, enc_hook=_plain).decode()


def _plain(value: Any) -> Any:
    # A schema may hold read-only mappings or tuples a server's library made; JSON sees
    # them as objects and arrays, and anything stranger as its text.
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
