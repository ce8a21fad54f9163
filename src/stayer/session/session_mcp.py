"""A session's MCP servers as its public methods show them (`McpFacet`, a part of `Session`).

Everything a front end asks of a session's MCP servers (their states, prompts, approvals, what
deferral saves, where they log) and the two things the session itself needs of them (the
link it makes as it opens, and their instructions in a run's system prompt) are here, so the
session's own module keeps to the conversation. Each method reaches the servers through the
session's `McpLink`, and answers as "none configured" when there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.loop.state import LoopParams

from .assemble import Setup
from .options import QueryOptions

if TYPE_CHECKING:
    from stayer.events import McpServerStatus
    from stayer.tools.base import ToolSource

    from .mcp_link import McpLink, McpPrompt, McpServerDetail


class McpFacet:
    """The MCP part of a `Session` (it sets `setup`, `options` and `_mcp`)."""

    setup: Setup
    options: QueryOptions
    _mcp: McpLink | None

    def _link(self, setup: Setup) -> McpLink | None:
        """The session's MCP servers, when any is configured (none: nothing of MCP loads)."""
        resolved = setup.resolved
        if resolved is None or resolved.mcp is None:
            return None
        from .mcp_link import McpLink, configured

        if not configured(resolved.mcp):
            return None

        permissions = setup.permissions
        return McpLink(
            resolved.mcp,
            env=resolved.env,
            session_dir=setup.params.tool_context.session_dir,
            context_window=setup.params.context_window,
            hides=lambda name: permissions.policy.hides(name),
            tunnel=self.options.sdk_mcp,
        )

    def mcp_servers(self) -> tuple[McpServerStatus, ...]:
        """Every MCP server of the session, as it stands now (none configured: empty)."""
        return () if self._mcp is None else self._mcp.statuses()

    def mcp_details(self) -> tuple[McpServerDetail, ...]:
        """Every MCP server as it stands now, with the name and version it gave and its
        tools while connected (none configured: empty)."""
        return () if self._mcp is None else self._mcp.details()

    async def reconnect_mcp(self, name: str) -> McpServerStatus:
        """Start MCP server `name` again and return its status once it connected or failed;
        raises `ConfigError` in one line for a server that is not running here."""
        return await self._linked().reconnect(name)

    async def toggle_mcp(self, name: str, *, enabled: bool) -> None:
        """Turn MCP server `name` off (its tools are no longer offered) or on again; raises
        `ConfigError` in one line for a server that is not running here."""
        await self._linked().toggle(name, enabled=enabled)

    def _linked(self) -> McpLink:
        if self._mcp is None:
            raise ConfigError("no MCP server is configured in this session")
        return self._mcp

    async def mcp_prompts(self) -> tuple[McpPrompt, ...]:
        """The prompts the connected MCP servers offer (a front end makes each a slash
        command, `/mcp__<server>__<prompt>`); a server that cannot list them offers none."""
        return () if self._mcp is None else await self._mcp.prompts()

    async def mcp_prompt(self, command: str, arguments: Sequence[str]) -> str:
        """The text of the MCP prompt `command` names (`mcp__<server>__<prompt>`), its
        arguments given in order, to send as a prompt; raises `ConfigError` in one line when
        there is no such prompt, an argument it requires is missing, or the server fails."""
        if self._mcp is None:
            raise ConfigError("no MCP server is configured in this session")
        return await self._mcp.prompt_text(command, arguments)

    async def approve_mcp(self, names: Sequence[str]) -> tuple[str, ...]:
        """Approve the project's MCP servers `names` (as `stayer mcp approve` does) and start
        at once those that may start now; their names (see `mcp_approval`)."""
        from .mcp_approval import approve_mcp

        return await approve_mcp(self._mcp, self.options, self.setup, names)

    def mcp_saved_tokens(self) -> int:
        """About how many tokens ToolSearch deferral keeps out of each request now (0 when
        nothing is deferred)."""
        return 0 if self._mcp is None else self._mcp.saved_tokens()

    def mcp_log_dir(self) -> Path | None:
        """Where the MCP servers' stderr logs go (None: no server configured)."""
        return None if self._mcp is None else self._mcp.log_dir

    def start_mcp(self) -> None:
        """Start the MCP servers now, on the running loop, once (they connect in the
        background): a front end where a person types first (the REPL) calls it as it opens.
        Otherwise they start as the first request leaves, or before it when told to wait
        for them (`MCP_CONNECTION_NONBLOCKING=0`)."""
        if self._mcp is not None:
            self._mcp.start()

    def tool_tokens(self) -> int:
        """About how many tokens the tool definitions sent with each request cost now."""
        from stayer.mcp.tokens import spec_tokens

        tools = self.setup.params.tools
        return spec_tokens(tools.specs)

    def watch_mcp(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on the event loop) each time an MCP server's state or tools
        change, between runs too (a front end refreshes its commands and footer)."""
        if self._mcp is not None:
            self._mcp.watch(listener)

    def mcp_source(self) -> ToolSource | None:
        """The MCP servers' tools, as a source a child's toolbox can draw on."""
        return None if self._mcp is None else self._mcp.catalog

    def _mcp_params(self, params: LoopParams) -> LoopParams:
        """The run's parameters with the connected MCP servers' instructions in its system
        prompt, whoever serves."""
        assert self._mcp is not None
        section = self._mcp.instructions()
        if not section:
            return params
        serving = params.model_prompt
        return replace(
            params,
            system_prompt=params.system_prompt + section,
            model_prompt=None if serving is None else (lambda model: serving(model) + section),
        )
