"""The REPL keeps up with the session's MCP servers as they change, between runs too: a server
that fails (or waits, restarting) is told at once as one warning line, and the prompts of the
connected servers are slash commands in the open table, added as a server comes up and taken
out as it goes.

The session tells a change only by calling back (`Session.watch_mcp`, on the event loop, in
the middle of the change), so the line is said then, and the prompts are asked for in a task
of their own afterwards (a server round trip). Since every change is seen here as it happens,
the REPL says nothing more for the `McpServerStatus` events a run carries later (`told`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.session.session import Session
from stayer.ui.wording import mcp_line

from .commands import Commands
from .commands_mcp import prompt_command


class McpWatch:
    """The MCP side of one REPL (see the module); `attach` it to each session it drives."""

    def __init__(
        self,
        commands: Commands,
        *,
        say: Callable[[str], None],
        warn: Callable[[str], None],
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        self._commands = commands
        self._say, self._warn = say, warn
        self._table_changed = changed
        """Called after the table's MCP commands changed (a `/` being completed is again)."""
        self._session: Session | None = None
        self._told: dict[str, tuple[str, str | None]] = {}
        self._late: set[str] = set()
        """Servers to say are up once they connect: approved in the session, or restarting."""
        self._connected: frozenset[str] | None = None
        self._added: set[str] = set()
        self._stale = False
        self._task: asyncio.Task[None] | None = None

    def attach(self, session: Session) -> None:
        """Follow `session` from now on (a resumed one replaces the last: its prompts go)."""
        for name in self._added:
            self._commands.remove(name)
        self._added, self._told, self._connected, self._late = set(), {}, None, set()
        self._session = session
        session.watch_mcp(lambda: self._changed(session))
        self._changed(session)

    def told(self, event: McpServerStatus) -> bool:
        """Whether a run's status event was said already (every one is, while attached)."""
        return self._session is not None and event.name in self._told

    async def refreshed(self) -> None:
        """Until the prompt commands are those of the servers connected now."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    def close(self) -> None:
        """Stop asking for prompts (the REPL is leaving)."""
        self._session = None
        if self._task is not None:
            self._task.cancel()

    def _changed(self, session: Session) -> None:
        if session is not self._session:
            return  # a session left behind by /resume
        statuses = session.mcp_servers()
        for status in statuses:
            self._tell(status)
        connected = frozenset(s.name for s in statuses if s.status == "connected")
        if connected != self._connected:
            self._connected = connected
            self._refresh_soon()

    def _tell(self, status: McpServerStatus) -> None:
        state = (status.status, status.error)
        if self._told.get(status.name) == state:
            return
        self._told[status.name] = state
        if status.status == "needs-approval":
            self._late.add(status.name)  # the question as the REPL opens, and /mcp, say how
            return  # to approve it
        if status.status == "pending" and status.error:  # a crashed server being restarted
            self._late.add(status.name)
            self._warn(f"MCP server {status.name} is {' '.join(status.error.split())}")
            return
        if status.status == "connected" and status.name in self._late:
            self._late.discard(status.name)
            tools = f"{status.tools} tool" + ("" if status.tools == 1 else "s")
            self._say(f"MCP server {status.name} connected: {tools}")
            return
        line = mcp_line(status)
        if line is not None:
            self._warn(" ".join(line.split()))

    def _refresh_soon(self) -> None:
        self._stale = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._refresh())

    async def _refresh(self) -> None:
        """Make the table's MCP prompt commands those the connected servers offer now."""
        while self._stale and self._session is not None:
            self._stale = False
            session = self._session
            prompts = await session.mcp_prompts()
            if session is not self._session:
                continue
            offered = {prompt.command.lower() for prompt in prompts}
            for name in self._added - offered:
                self._commands.remove(name)
            self._added = set()
            for prompt in prompts:
                try:
                    self._commands.add(prompt_command(prompt))
                except ConfigError as error:  # a name a built-in command has
                    self._warn(f"MCP prompt /{prompt.command} is not offered: {error}")
                    continue
                self._added.add(prompt.command.lower())
            self._table_changed()
