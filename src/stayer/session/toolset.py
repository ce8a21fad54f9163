"""Which tools a run offers: the built-ins the options select, then the caller's own tools.

A caller's tools (`QueryOptions.extra_tools`) are instances of `stayer.Tool`, already made, so
they join the built-ins' lazily loaded toolbox as they are. Their names must be ones the model
APIs accept and must not clash with a built-in's or each other's: a clash would make the
model's call, and every permission rule naming it, ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from stayer.errors import ConfigError
from stayer.permissions import PermissionPolicy
from stayer.tools.base import Tool, Toolbox
from stayer.tools.names import TOOL_ALIASES

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What both Anthropic's and OpenAI's APIs accept as a tool name."""


def run_toolbox(
    options_tools: Sequence[str] | None, extra: Sequence[object], policy: PermissionPolicy
) -> Toolbox:
    """The built-ins named in `options_tools` (all when None) plus the caller's `extra` tools,
    less those a whole-tool deny rule hides. Raises `ConfigError` for a bad name or a clash."""
    from stayer.tools.registry import BUILTIN_NAMES, builtin_toolbox

    own = checked_extra_tools(extra, BUILTIN_NAMES)
    names = set(BUILTIN_NAMES)
    if options_tools is not None:
        wanted = {name.strip() for item in options_tools for name in item.split(",")}
        wanted = {TOOL_ALIASES.get(name, name) for name in wanted}  # `Task` is Agent
        # A caller's tool is always offered; naming it here too is no mistake.
        wanted -= {"", *(tool.name for tool in own)}
        if wanted != {"default"}:
            unknown = wanted - names
            if unknown:
                known = ", ".join((*BUILTIN_NAMES, *(tool.name for tool in own)))
                raise ConfigError(f"unknown tool(s) {', '.join(sorted(unknown))}; known: {known}")
            names = wanted
    builtins = builtin_toolbox({name for name in names if not policy.hides(name)})
    return builtins.with_tools(tuple(tool for tool in own if not policy.hides(tool.name)))


def checked_extra_tools(extra: Sequence[object], taken: Sequence[str]) -> tuple[Tool[Any], ...]:
    """The caller's tools, each a `Tool` instance with a usable name of its own."""
    seen = set(taken)
    tools: list[Tool[Any]] = []
    for item in extra:
        if not isinstance(item, Tool):
            hint = f" (pass {item.__name__}(), not the class)" if isinstance(item, type) else ""
            raise ConfigError(f"extra_tools takes stayer.Tool instances, not {item!r}{hint}")
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise ConfigError(
                f"tool {type(item).__name__} has name {name!r}; a tool name is 1 to 64 letters, "
                "digits, '_' or '-'"
            )
        if name in seen:
            whose = "a built-in tool's" if name in taken else "another extra tool's"
            raise ConfigError(f"extra tool name {name!r} is {whose}; give each tool its own name")
        seen.add(name)
        tools.append(item)
    return tuple(tools)
