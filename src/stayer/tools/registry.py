"""The set of tools one agent may use: lookup by name, specs for the model, filtered copies.

`builtin_tools()` makes fresh instances each call, because some tools keep per-agent state
(Bash remembers its working directory).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from stayer.messages import ToolSpec
from stayer.tools.base import Tool
from stayer.tools.builtin.bash import BashTool
from stayer.tools.builtin.edit import EditTool
from stayer.tools.builtin.glob import GlobTool
from stayer.tools.builtin.grep import GrepTool
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.write import WriteTool


def builtin_tools() -> tuple[Tool[Any], ...]:
    """New instances of the built-in tools, in the order the model sees them."""
    return (BashTool(), GlobTool(), GrepTool(), ReadTool(), EditTool(), WriteTool())


class ToolRegistry:
    """An ordered, immutable set of tools with unique names."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}; tool names must be unique")
            self._tools[tool.name] = tool

    @classmethod
    def builtin(cls) -> ToolRegistry:
        """A registry of fresh built-in tools."""
        return cls(builtin_tools())

    def get(self, name: str) -> Tool[Any] | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool[Any]:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in order."""
        return tuple(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Every tool as the model sees it, in order."""
        return tuple(tool.spec() for tool in self._tools.values())

    def filtered(
        self,
        *,
        allowed: Collection[str] | None = None,
        disallowed: Collection[str] = (),
    ) -> ToolRegistry:
        """A copy keeping tools named in `allowed` (all if None) and not named in `disallowed`.

        An entry with a rule in parentheses, such as ``Bash(git:*)``, limits how a tool may be
        used (the permission layer's business), not whether it exists: in `allowed` it keeps
        the tool, in `disallowed` it removes nothing. Unknown names are ignored.
        """
        keep = None if allowed is None else {name.split("(", 1)[0] for name in allowed}
        drop = {name for name in disallowed if "(" not in name}
        return ToolRegistry(
            tool
            for name, tool in self._tools.items()
            if (keep is None or name in keep) and name not in drop
        )

    def with_tools(self, tools: Iterable[Tool[Any]]) -> ToolRegistry:
        """A copy with `tools` added after the existing ones (names must stay unique)."""
        return ToolRegistry([*self._tools.values(), *tools])
