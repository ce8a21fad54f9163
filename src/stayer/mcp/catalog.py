"""The MCP tools a session offers, and which of them the model sees in full (context economy).

`McpCatalog` is the toolbox's source (`stayer.tools.base.ToolSource`) for every MCP tool that
is up. When their definitions would take more of the context window than `ENABLE_TOOL_SEARCH`
allows (10% unless told), it defers them: the model sees only their names and one-line
descriptions, in the description of a `ToolSearch` tool (`stayer.mcp.tool_search`) that loads
full definitions on demand. A deferred tool stays callable; loading only shows its schema, and
a loaded tool is shown in full from the next model call on. A tool the user's config says
`alwaysLoad` is never deferred, nor one whose server asks so for a small definition (a large
one is deferred like the rest); a tool a whole-tool deny rule names is neither shown nor
callable, as a built-in is not.

The toolbox asks at each model call, so both answers are cached by what they depend on: the
tools sequence (by identity: whoever supplies it hands back the same one until something
changes), which of them the rules hide (asked afresh, since rules may change mid-session), and
what has been loaded. With 200 tools a call that changes nothing costs one pass over the names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeGuard

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.messages import Message, ToolResultBlock, ToolSpec, ToolUseBlock
from stayer.tools.base import Tool
from stayer.tools.names import MCP_PREFIX, TOOL_SEARCH

from .tokens import spec_tokens
from .tool_search import ToolSearch, loaded_names, search_spec

DEFAULT_SHARE = 10.0
"""The percent of the context window MCP tool definitions may take before they are deferred."""

SETTING = "ENABLE_TOOL_SEARCH"


class ToolSearchMode(Struct, frozen=True):
    """When MCP tools are deferred: `always`, `never`, or `auto` once their definitions would
    pass `percent` of the context window."""

    kind: Literal["always", "never", "auto"] = "auto"
    percent: float = DEFAULT_SHARE


def parse_tool_search(value: str | None) -> ToolSearchMode:
    """`ENABLE_TOOL_SEARCH` read as Claude Code reads it: true, false, auto (the default when
    unset or empty) or auto:N, N a percent of the context window.

    Anything else is a ConfigError, not a warning: the setting decides how much of every
    request tool definitions take, and a typo that quietly meant `auto` would spend the
    window the user meant to save (or hide the schemas they meant to send)."""
    text = (value or "").strip().lower()
    if text in ("", "auto"):
        return ToolSearchMode()
    if text == "true":
        return ToolSearchMode("always")
    if text == "false":
        return ToolSearchMode("never")
    if text.startswith("auto:"):
        share = _percent(text.removeprefix("auto:"))
        if share is not None:
            return ToolSearchMode("auto", share)
    raise ConfigError(
        f"{SETTING}={value} is not a value stayer knows: use true, false, auto or auto:N "
        "(N the percent of the context window, 0 to 100), or unset it"
    )


def _percent(text: str) -> float | None:
    try:
        share = float(text.strip().removesuffix("%"))
    except ValueError:
        return None
    return share if 0 <= share <= 100 else None  # also refuses nan


MAX_SERVER_PINNED_TOKENS = 1_000
"""The largest definition (in tokens) a server may ask to have shown in every request
(`_meta["anthropic/alwaysLoad"]`); a larger one is deferred like the rest. The user's own
`alwaysLoad` knows no such bound."""


def always_loads(tool: Tool[Any], spec: ToolSpec) -> bool:
    """Whether `tool`, whose definition is `spec`, is never deferred: the user's config says
    so (`always_load`), or its server asked (`server_always_load`) for a small definition."""
    if getattr(tool, "always_load", False):
        return True
    asked = bool(getattr(tool, "server_always_load", False))
    return asked and spec_tokens((spec,)) <= MAX_SERVER_PINNED_TOKENS


class _Offer(Struct, frozen=True):
    """What one set of tools and rules gives, whatever has been loaded."""

    source: Sequence[Tool[Any]]
    """The sequence this was made from, compared by identity (and kept, so its id stays its)."""
    hidden: tuple[bool, ...]
    """Whether the rules hide each tool of `source`, then ToolSearch."""
    visible: tuple[Tool[Any], ...]
    full: tuple[ToolSpec, ...]
    """Each visible tool's whole definition."""
    full_tokens: int
    pinned: tuple[bool, ...]
    """Whether each visible tool is never deferred (`always_loads`)."""
    defer: bool
    callable: Mapping[str, Tool[Any]]


class _View(Struct, frozen=True):
    """What the model is shown for one `_Offer` and one state of what is loaded."""

    offer: _Offer
    version: int
    specs: tuple[ToolSpec, ...]
    deferred: tuple[Tool[Any], ...]
    waiting: tuple[Tool[Any], ...]
    shown_tokens: int


class McpCatalog:
    """MCP tools as a toolbox source, deferred behind ToolSearch when they would cost too much.

    `tools` gives the MCP tools up now, `hides` says whether a whole-tool deny rule names a
    tool, `context_window` is the model's window in tokens, and `mode` comes from
    `parse_tool_search` (auto at 10% when None)."""

    def __init__(
        self,
        *,
        tools: Callable[[], Sequence[Tool[Any]]],
        hides: Callable[[str], bool],
        context_window: int,
        mode: ToolSearchMode | None = None,
        on_begin: Callable[[], None] | None = None,
    ) -> None:
        self._on_begin = on_begin
        self._tools_now = tools
        self._hides = hides
        self._mode = mode or ToolSearchMode()
        self._budget = context_window * self._mode.percent / 100
        self._loaded: dict[str, None] = {}
        self._version = 0
        self._search = ToolSearch(self)
        self._offer: _Offer | None = None
        self._view: _View | None = None

    def begin(self) -> None:
        """A run's first request is on its way (`on_begin`: the session starts the servers)."""
        if self._on_begin is not None:
            self._on_begin()

    def specs(self) -> tuple[ToolSpec, ...]:
        """The definitions the model is shown now: full ones for the tools not deferred (and
        those loaded), then ToolSearch listing the others when any are deferred."""
        return self._current().specs

    def tools(self) -> Mapping[str, Tool[Any]]:
        """Every MCP tool the rules do not hide, deferred or not, and ToolSearch if needed."""
        return self._current_offer().callable

    def deferred(self) -> tuple[Tool[Any], ...]:
        """The tools whose definitions are deferred now, loaded since or not."""
        return self._current().deferred

    def waiting(self) -> tuple[Tool[Any], ...]:
        """The deferred tools not loaded yet (ToolSearch lists them)."""
        return self._current().waiting

    @property
    def deferring(self) -> bool:
        """Whether some tools are shown by name only now."""
        return self._current_offer().defer

    def load(self, names: Iterable[str]) -> None:
        """Show `names` in full from the next model call on, and whenever they are deferred
        later (a resumed session loads before its servers are up)."""
        before = len(self._loaded)
        self._loaded.update(dict.fromkeys(names))
        if len(self._loaded) != before:
            self._version += 1

    @property
    def loaded(self) -> frozenset[str]:
        """The tools loaded so far (by ToolSearch, or again on resume)."""
        return frozenset(self._loaded)

    def tool_tokens(self, builtin_specs: Sequence[ToolSpec]) -> int:
        """About how many tokens every tool definition of a request takes now, the built-ins'
        (`builtin_specs`) and these."""
        return spec_tokens(builtin_specs) + self._current().shown_tokens

    def saved_tokens(self) -> int:
        """About how many tokens deferral keeps out of each request now."""
        view = self._current()
        if not view.offer.defer:
            return 0
        return max(0, view.offer.full_tokens - view.shown_tokens)

    def _current_offer(self) -> _Offer:
        tools = self._tools_now()
        hidden = (*(self._hides(tool.name) for tool in tools), self._hides(TOOL_SEARCH))
        offer = self._offer
        if offer is None or offer.source is not tools or offer.hidden != hidden:
            offer = self._offer = self._make_offer(tools, hidden)
        return offer

    def _current(self) -> _View:
        offer = self._current_offer()
        view = self._view
        if view is None or view.offer is not offer or view.version != self._version:
            view = self._view = self._make_view(offer)
        return view

    def _make_offer(self, tools: Sequence[Tool[Any]], hidden: tuple[bool, ...]) -> _Offer:
        visible = tuple(tool for tool, hide in zip(tools, hidden, strict=False) if not hide)
        full = tuple(tool.spec() for tool in visible)
        full_tokens = spec_tokens(full)
        pinned = tuple(always_loads(tool, spec) for tool, spec in zip(visible, full, strict=True))
        defer = self._defers(pinned, full_tokens, search_hidden=hidden[-1])
        callable_ = {tool.name: tool for tool in visible}
        if defer:
            callable_[TOOL_SEARCH] = self._search
        return _Offer(tools, hidden, visible, full, full_tokens, pinned, defer, callable_)

    def _defers(self, pinned: Sequence[bool], tokens: int, *, search_hidden: bool) -> bool:
        # With ToolSearch denied, a deferred schema could never be loaded: show them all.
        if search_hidden or all(pinned):
            return False
        if self._mode.kind == "auto":
            return tokens > self._budget
        return self._mode.kind == "always"

    def _make_view(self, offer: _Offer) -> _View:
        version = self._version
        if not offer.defer:
            return _View(offer, version, offer.full, (), (), offer.full_tokens)
        shown: list[ToolSpec] = []
        deferred: list[Tool[Any]] = []
        waiting: list[Tool[Any]] = []
        for tool, spec, pinned in zip(offer.visible, offer.full, offer.pinned, strict=True):
            if pinned:
                shown.append(spec)
                continue
            deferred.append(tool)
            if tool.name in self._loaded:
                shown.append(spec)
            else:
                waiting.append(tool)
        specs = (*shown, search_spec(waiting))
        return _View(offer, version, specs, tuple(deferred), tuple(waiting), spec_tokens(specs))


def used_mcp_tools(messages: Iterable[Message]) -> set[str]:
    """The MCP tools a conversation called or ToolSearch loaded, for a resumed session to
    load again (the model goes on calling them with the schemas it was shown)."""
    used: set[str] = set()
    searches: set[str] = set()
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                if block.name.startswith(MCP_PREFIX):
                    used.add(block.name)
                elif block.name == TOOL_SEARCH:
                    searches.add(block.id)
            elif _answers(block, searches):
                used.update(loaded_names(block.text))
    return used


def _answers(block: object, searches: set[str]) -> TypeGuard[ToolResultBlock]:
    """Whether `block` is a ToolSearch call's answer that loaded something (not an error)."""
    return (
        isinstance(block, ToolResultBlock) and block.tool_use_id in searches and not block.is_error
    )
