"""A session's MCP servers: the hub that runs them and the catalog that offers their tools.

The servers start on the session's event loop all at once: as a run's first request leaves
(`McpCatalog.begin`), as a front end asks (`start`: the REPL, while the person types), or
before the first call when `MCP_CONNECTION_NONBLOCKING` is off, the only case a model call
waits for them. A server that comes up joins the next call with its tools. Their status
changes are events of whichever run is going on; one that happens between runs is told at
the start of the next. A server's `instructions` join the system prompt from
the next prompt on, capped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.messages import Message
from stayer.tools.base import Tool
from stayer.tools.names import MCP_PREFIX

if TYPE_CHECKING:
    from stayer.config.mcp_servers import McpServerConfig, McpServers
    from stayer.mcp.catalog import McpCatalog
    from stayer.mcp.hub import McpHub
    from stayer.mcp.server import McpServer
    from stayer.mcp.tunnel import McpTunnel


class McpPromptArgument(Struct, frozen=True):
    """One argument an MCP prompt takes."""

    name: str
    description: str = ""
    required: bool = False


class McpPrompt(Struct, frozen=True):
    """A prompt a server offers, as a slash command (`command` is its name without the
    slash)."""

    command: str
    server: str
    name: str
    description: str = ""
    arguments: tuple[McpPromptArgument, ...] = ()


class McpToolInfo(Struct, frozen=True):
    """One tool a server lists: its name there, what it says it does, its hints."""

    name: str
    description: str = ""
    annotations: Mapping[str, Any] | None = None


class McpServerDetail(Struct, frozen=True):
    """One server as a status request shows it: where it stands, who it said it is (name,
    version), and its tools while connected."""

    status: McpServerStatus
    server_info: tuple[str, str] | None = None
    tools: tuple[McpToolInfo, ...] = ()


INSTRUCTIONS_CAP = 2_000
"""The most characters one server's instructions put in the system prompt."""
INSTRUCTIONS_HEAD = "# MCP server instructions"


def initial_statuses(servers: McpServers) -> tuple[McpServerStatus, ...]:
    """The servers that will not start, as the init line lists them."""
    waiting = tuple(
        McpServerStatus(config.name, "needs-approval", scope=config.scope)
        for config in servers.needs_approval
    )
    off = tuple(
        McpServerStatus(config.name, "disabled", scope=config.scope) for config in servers.disabled
    )
    broken = tuple(McpServerStatus(name, "failed", error=why) for name, why in servers.failed)
    return (*broken, *waiting, *off)


_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")


def blocking(env: Mapping[str, str]) -> bool:
    """Whether the first model call waits for every server (`MCP_CONNECTION_NONBLOCKING=0`);
    raises `ConfigError` for a value that is neither on nor off (a typo would otherwise pick
    one unseen)."""
    raw = env.get("MCP_CONNECTION_NONBLOCKING", "").strip()
    if raw.lower() in _OFF:
        return True
    if raw.lower() in _ON:
        return False
    raise ConfigError(
        f"MCP_CONNECTION_NONBLOCKING={raw!r} is neither on nor off; set it to 0 to wait for "
        "the MCP servers before the first model call, or 1 (the default) not to"
    )


class McpLink:
    """The servers of one session (a child shares its parent's)."""

    def __init__(
        self,
        servers: McpServers,
        *,
        env: Mapping[str, str],
        session_dir: Path | None,
        context_window: int,
        hides: Callable[[str], bool],
        tunnel: McpTunnel | None = None,
    ) -> None:
        from stayer.mcp.catalog import McpCatalog, parse_tool_search
        from stayer.mcp.hub import McpHub, connect_timeout_from
        from stayer.mcp.limits import result_chars, tool_timeout_from

        self.env = env
        self.wait = blocking(env)
        self.timeout_s = connect_timeout_from(env)
        # Read once, here: a bad value is one line as the session opens, not a failed call.
        self._result_chars = result_chars(env)
        self._tool_timeout_s = tool_timeout_from(env)
        self.log_dir = _log_dir(session_dir)
        """Where each stdio server's stderr goes (`<name>.log`)."""
        self.waiting = tuple(config.name for config in servers.needs_approval)
        """The servers that wait for the person's approval (`mcp_approval`)."""
        self.hub: McpHub = McpHub(
            servers.start,
            env=env,
            log_dir=self.log_dir,
            connect_timeout_s=self.timeout_s,
            initial=initial_statuses(servers),
            tunnel=tunnel,
        )
        self.catalog: McpCatalog = McpCatalog(
            tools=self._tools,
            hides=hides,
            context_window=context_window,
            mode=parse_tool_search(env.get("ENABLE_TOOL_SEARCH")),
            on_begin=self.start,
        )
        self._hides = hides
        self._started = False
        self._made: tuple[int, tuple[Tool[Any], ...]] = (-1, ())

    def start(self) -> None:
        """Start every server on the running event loop, once; returns at once."""
        if not self._started:
            self._started = True
            self.hub.start()

    async def ready(self) -> None:
        """Start the servers and wait for them when the session was told to (`blocking`);
        else they start once the first request is on its way (`McpCatalog.begin`): five
        servers starting at once, and the SDK's import, would compete with it for the
        processor and hold it back (`benchmarks/mcp_start.py`). The in-process servers of
        a claude-agent-sdk program are waited for always: the program gave them to be used
        from its first prompt on, and they cost no process to start."""
        if self.wait:
            self.start()
            await self.hub.wait_started(self.timeout_s)
            return
        self.hub.start(only=_in_process)
        await self.hub.wait_started(self.timeout_s, only=_in_process)

    def add(self, configs: Sequence[McpServerConfig]) -> None:
        """Start `configs` now (servers just approved); their status changes follow."""
        for config in configs:
            self.hub.add(config)
        added = {config.name for config in configs}
        self.waiting = tuple(name for name in self.waiting if name not in added)

    def running(self) -> frozenset[str]:
        """The names of the servers the hub runs (in any state)."""
        return frozenset(server.config.name for server in self.hub.servers())

    def saved_tokens(self) -> int:
        """About how many tokens ToolSearch deferral keeps out of each request now."""
        return self.catalog.saved_tokens()

    def statuses(self) -> tuple[McpServerStatus, ...]:
        """Every server, as it stands now."""
        return self.hub.statuses()

    def details(self) -> tuple[McpServerDetail, ...]:
        """Every server as it stands now, with who it is and its tools."""
        running = {server.config.name: server for server in self.hub.servers()}
        found: list[McpServerDetail] = []
        for status in self.hub.statuses():
            server = running.get(status.name)
            if server is None:
                found.append(McpServerDetail(status))
                continue
            tools = tuple(
                McpToolInfo(
                    tool.name,
                    tool.description or "",
                    tool.annotations.model_dump(by_alias=True, exclude_none=True)
                    if tool.annotations is not None
                    else None,
                )
                for tool in server.tool_defs
            )
            found.append(McpServerDetail(status, server.server_info, tools))
        return tuple(found)

    async def reconnect(self, name: str) -> McpServerStatus:
        """Start server `name` again and wait (as long as connecting may take) until it has
        connected or failed; its status then. `ConfigError` for a server not running here."""
        server = await self.hub.restart(name)
        await self.hub.wait_started(self.timeout_s, only=lambda s: s is server)
        return server.status

    async def toggle(self, name: str, *, enabled: bool) -> None:
        """Turn server `name` off (its tools no longer offered), or on again (started again
        unless it is connected or starting)."""
        if not enabled:
            await self.hub.disable(name)
            return
        current = next((s for s in self.hub.statuses() if s.name == name), None)
        if current is not None and current.status in ("connected", "pending"):
            return
        await self.reconnect(name)

    def drain(self) -> list[McpServerStatus]:
        """The status changes not yet told."""
        return self.hub.drain()

    def watch(self, listener: Callable[[], None]) -> None:
        """Call `listener` whenever a server's state or tools change."""
        self.hub.watch(listener)

    def load_used(self, messages: Sequence[Message]) -> None:
        """Load the deferred tools a resumed conversation used, so the model sees them again."""
        from stayer.mcp.catalog import used_mcp_tools

        self.catalog.load(used_mcp_tools(messages))

    def instructions(self) -> str:
        """The connected servers' instructions as a system prompt section ("" when none)."""
        parts = []
        for server in self.hub.connected():
            text = (server.instructions or "").strip()
            if not text:
                continue
            if len(text) > INSTRUCTIONS_CAP:
                text = text[:INSTRUCTIONS_CAP].rstrip() + "\n[cut: the server's instructions go on]"
            parts.append(f"## {server.config.name}\n{text}")
        return f"\n\n{INSTRUCTIONS_HEAD}\n\n" + "\n\n".join(parts) if parts else ""

    async def prompts(self) -> tuple[McpPrompt, ...]:
        """The prompts of every connected server that offers some, in server order."""
        found: list[McpPrompt] = []
        for server in self.hub.connected():
            found.extend(await _prompts_of(server))
        return tuple(found)

    async def prompt_text(self, command: str, arguments: Sequence[str]) -> str:
        """The text of the prompt `command` names, with `arguments` given in order."""
        from stayer.mcp.server import McpUnavailable

        prompt = next((p for p in await self.prompts() if p.command == command), None)
        if prompt is None:
            raise ConfigError(f"no MCP prompt /{command}; /mcp lists the servers")
        values = _arguments(prompt, arguments)
        server = next(s for s in self.hub.connected() if s.config.name == prompt.server)
        try:
            result = await server.get_prompt(prompt.name, values)
        except McpUnavailable as error:
            raise ConfigError(str(error)) from None
        except Exception as error:  # the server answered with an error of its own
            raise ConfigError(f"MCP server {prompt.server!r}: {_one_line(error)}") from None
        return _prompt_messages(result)

    async def aclose(self) -> None:
        """Stop every server."""
        await self.hub.aclose()

    def _tools(self) -> tuple[Tool[Any], ...]:
        """The tools of the connected servers, made again only when the hub changed."""
        generation = self.hub.generation
        if self._made[0] != generation:
            self._made = (generation, self._made_tools())
        return self._made[1]

    def _made_tools(self) -> tuple[Tool[Any], ...]:
        """One tool per tool each server lists (a server restarting after a crash keeps its
        tools: a call says to try again), and the resource tools when a connected one offers
        resources (reaching only servers no deny rule hides)."""
        servers = self.hub.servers()
        if not any(server.tool_defs for server in servers):
            return ()  # none is up yet: the tools' module (pydantic) need not load for that
        from stayer.mcp.tools import server_tools

        listed = server_tools(
            servers,
            max_result_chars=self._result_chars,
            default_timeout_s=self._tool_timeout_s,
        )
        tools: list[Tool[Any]] = list(listed)
        if any(server.offers_resources for server in self._readable()):
            from stayer.mcp.resources import ListMcpResourcesTool, ReadMcpResourceTool

            tools += [ListMcpResourcesTool(self._readable), ReadMcpResourceTool(self._readable)]
        return tuple(tools)

    def _readable(self) -> tuple[McpServer, ...]:
        """The connected servers whose resources the model may reach: a rule denying the
        whole server (`mcp__<server>` or `mcp__<server>__*`) hides its resources as it hides
        its tools."""
        hides = self._hides
        return tuple(
            server
            for server in self.hub.connected()
            if not hides(f"{MCP_PREFIX}{server.config.name}__*")
        )


def _in_process(server: McpServer) -> bool:
    return server.config.transport == "sdk"


def _log_dir(session_dir: Path | None) -> Path:
    """Where the servers' stderr goes: the session's folder, or a folder of its own for a
    session that is not kept."""
    if session_dir is not None:
        return session_dir / "mcp-logs"
    return Path(tempfile.mkdtemp(prefix="stayer-mcp-logs-"))


def configured(servers: McpServers | None) -> bool:
    """Whether a session has any MCP server to start or to report."""
    if servers is None:
        return False
    return bool(servers.start or servers.needs_approval or servers.disabled or servers.failed)


async def _prompts_of(server: Any) -> list[McpPrompt]:
    from stayer.mcp.naming import tool_name

    try:
        listed = await server.list_prompts()
    except Exception:  # a server that offers no prompts, or cannot list them now
        return []
    return [
        McpPrompt(
            command=tool_name(server.config.name, prompt.name),
            server=server.config.name,
            name=prompt.name,
            description=(prompt.description or "").strip().splitlines()[0][:120]
            if prompt.description
            else "",
            arguments=tuple(
                McpPromptArgument(arg.name, arg.description or "", bool(arg.required))
                for arg in prompt.arguments or ()
            ),
        )
        for prompt in listed
    ]


def _arguments(prompt: McpPrompt, given: Sequence[str]) -> dict[str, str]:
    """The prompt's arguments by name, from the words given in order; the last takes the rest."""
    names = [argument.name for argument in prompt.arguments]
    if len(given) > len(names) and names:
        given = [*given[: len(names) - 1], " ".join(given[len(names) - 1 :])]
    values = dict(zip(names, given, strict=False))
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
        raise ConfigError(
            f"/{prompt.command} needs {', '.join(missing)}; usage: /{prompt.command} {usage}"
        )
    return values


def _prompt_messages(result: Any) -> str:
    """A prompt's messages as one text: each message's text, resources by their text."""
    parts: list[str] = []
    for message in result.messages:
        content = message.content
        text = getattr(content, "text", None)
        if text is None:
            resource = getattr(content, "resource", None)
            text = getattr(resource, "text", None)
        if text:
            parts.append(text)
    if not parts:
        raise ConfigError("the MCP prompt came back with no text to send")
    return "\n\n".join(parts)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__
