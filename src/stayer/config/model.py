"""The settings a file may hold, typed: Claude Code's keys, camelCase as in its files, and
stayer's own.

Claude Code's: `permissions` (`allow`, `ask`, `deny`, `defaultMode`, `additionalDirectories`,
`disableBypassPermissionsMode`), `hooks` (run by `stayer.hooks`), `env`, `model`, `agent` (the
agent the main session runs as, as `--agent` names it) and `enabledPlugins` (`"name@marketplace":
true`, the installed plugins to load; `stayer.agents` finds them on disk).
stayer's: `autoCompactWindow` and `autoCompactPercent` (what `--autocompact` and
`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` set), `doneWhen` (`--done-when`) and `readClaudeSettings`
(false: leave `.claude/` files unread), and `batch` (`stayer batch`'s `rateLimits`, checked
strictly: an unknown key there is an error). Claude Code's `statusLine` is read for the REPL's
footer.
MCP: `mcpServers` (each entry is checked on its own by `mcp_servers`, so one bad server does not
cost the others) and the approval keys of a project's servers, `enableAllProjectMcpServers`,
`enabledMcpjsonServers` and `disabledMcpjsonServers` (which sources they count from is
`mcp_servers`' business).

Keys we do not know are ignored: Claude Code has many stayer has no use for
(`outputStyle`, `extraKnownMarketplaces`, …), and a project set up for it must load
unchanged. A key we know with a value of the wrong type is an error. Values are checked
strictly (JSON's own types: `"30"` is not a number, `"true"` not a boolean), since a settings
file is written by hand and a silent coercion would hide the mistake.

How bad an error is depends on the key (`UNGUARDED_KEYS`): most keys guard something (a rule,
the mode, a hook, which files are read, the done check), so a wrong one makes the whole file
unusable; a few cannot open anything when their bad value is dropped.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

ModeName = Literal["default", "manual", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""The permission modes stayer runs in (`manual` is newer Claude Code's name for `default`)."""

HookType = Literal["command", "prompt", "agent", "http"]

UNGUARDED_KEYS = frozenset(
    {
        "model",
        "env",
        "autoCompactWindow",
        "autoCompactPercent",
        "statusLine",
        "mcpServers",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "agent",
    }
)
"""Top-level keys whose bad value is only dropped, with a warning: without it the run uses
another model, the inherited environment (settings `env` never decides which settings files
are read), the model's own compaction threshold or the REPL's own footer, none of which lets
a call through that would otherwise be stopped. Without `mcpServers` or an approval
(`enableAllProjectMcpServers`, `enabledMcpjsonServers`) fewer MCP servers start, never more;
`disabledMcpjsonServers` is not among them, since dropping it would start a server someone
turned off. Without `agent` the session runs as itself. Every other key (`permissions`,
`hooks`, `enabledPlugins`, `readClaudeSettings`, `doneWhen`, and any added later) fails closed:
a bad value makes its file unusable. `enabledPlugins` is among them because dropping it could
start more, not fewer: a user's malformed `{"x@m": "false"}` dropped would let a project's
`true` load a plugin, and its hooks, that the user meant to keep off."""


class _Keys(Struct, frozen=True, kw_only=True, rename="camel"):
    """camelCase keys in the file, snake_case in Python; unknown keys ignored. Values are
    checked strictly by `msgspec.convert` (`parse`), which coerces nothing."""


class HookHandler(_Keys, frozen=True, kw_only=True, rename="camel"):
    """One thing to run for an event: a shell `command` (what stayer runs), or one of Claude
    Code's other kinds, kept so a project that uses them still loads."""

    type: HookType
    command: str | None = None
    timeout: Annotated[float, Meta(gt=0)] | None = None
    """Seconds; stayer's default is 60 (Claude Code's is 10 minutes; see `stayer.hooks`)."""

    def __post_init__(self) -> None:
        if self.type == "command" and not (self.command or "").strip():
            raise ValueError('a hook of type "command" needs a "command" to run')


class PluginHookHandler(HookHandler, frozen=True, kw_only=True, rename="camel"):
    """A handler from a plugin's hooks file: `plugin_root` is the plugin's folder, which its
    command gets as `CLAUDE_PLUGIN_ROOT` in its environment. Made by the plugin loader only
    (settings files are read as `HookHandler`, so none can set it)."""

    plugin_root: str


class HookMatcher(_Keys, frozen=True, kw_only=True, rename="camel"):
    """The handlers for the calls an event's `matcher` picks (empty or `*`: all of them)."""

    matcher: str = ""
    hooks: tuple[HookHandler, ...]

    def __post_init__(self) -> None:
        if (problem := matcher_problem(self.matcher)) is not None:
            raise ValueError(problem)


def matcher_problem(matcher: str) -> str | None:
    """Why a hook's `matcher` could never select anything (a pattern that does not compile),
    or None. Such a hook is refused where it is given, never loaded to be silently skipped: a
    guard that does not run would let through what it was meant to stop."""
    if matcher.strip() in ("", "*"):
        return None
    try:
        re.compile(matcher.strip())
    except re.error as error:
        return (
            f"the matcher {matcher[:80]!r} is not a valid regular expression ({error}); "
            "use tool names (Edit|Write) or a pattern that compiles (mcp__.*)"
        )
    return None


class Permissions(_Keys, frozen=True, kw_only=True, rename="camel"):
    """Rules (`Tool` or `Tool(specifier)`), the mode to start in, and more directories."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default_mode: ModeName | None = None
    additional_directories: tuple[str, ...] = ()
    disable_bypass_permissions_mode: Literal["disable"] | None = None


class StatusLineSetting(_Keys, frozen=True, kw_only=True, rename="camel"):
    """The REPL's footer replaced by a command's output (Claude Code's `statusLine`)."""

    type: Literal["command"]
    command: Annotated[str, Meta(min_length=1)]
    padding: Annotated[int, Meta(ge=0, le=100)] = 0
    refresh_interval: Annotated[float, Meta(ge=1)] | None = None
    """Seconds: also run this often, for a line that shows the time or the like."""


RATE_LIMITED_PROVIDERS = ("anthropic", "openai", "*")
"""What `batch.rateLimits` may name: a provider, or `*` for each one without its own entry."""


class RateLimitSetting(
    _Keys, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """What a whole batch may send one provider a minute. Unknown keys are refused here: a
    misspelled limit would silently be no limit."""

    requests_per_minute: Annotated[float, Meta(gt=0)] | None = None
    tokens_per_minute: Annotated[float, Meta(gt=0)] | None = None


class BatchSetting(_Keys, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """`stayer batch`'s settings: `rateLimits`, provider → its limits (its flags win)."""

    rate_limits: dict[str, RateLimitSetting] = {}

    def __post_init__(self) -> None:
        for name in self.rate_limits:
            if name not in RATE_LIMITED_PROVIDERS:
                raise ValueError(
                    f"no provider is called {name!r} in rateLimits; name anthropic, openai, "
                    "or * for every provider"
                )


class SandboxSetting(_Keys, frozen=True, kw_only=True, rename="camel"):
    """Claude Code's `sandbox`: `enabled: true` runs Bash commands sandboxed, as `--sandbox`
    does (offline: stayer's sandbox has no per-domain network allowance, so it is the stricter
    of the two). Its other keys are Claude Code's and are not read."""

    enabled: bool | None = None


class Settings(_Keys, frozen=True, kw_only=True, rename="camel"):
    """One settings file's content, or several merged (see `sources`)."""

    permissions: Permissions = Permissions()
    hooks: dict[str, tuple[HookMatcher, ...]] = {}
    """Event name → matchers. Any event name loads: Claude Code adds events from version to
    version, and a file written for a newer one should not be refused for it."""
    env: dict[str, str] = {}
    model: str | None = None
    auto_compact_window: Annotated[int, Meta(ge=100_000)] | None = None
    auto_compact_percent: Annotated[int, Meta(ge=1, le=100)] | None = None
    done_when: Annotated[str, Meta(min_length=1)] | None = None
    read_claude_settings: bool | None = None
    status_line: StatusLineSetting | None = None
    mcp_servers: dict[str, Any] = {}
    """Server name → its entry as written; `mcp_servers.load_mcp_servers` checks each one."""
    enable_all_project_mcp_servers: bool | None = None
    enabled_mcpjson_servers: tuple[str, ...] | None = None
    disabled_mcpjson_servers: tuple[str, ...] | None = None
    agent: Annotated[str, Meta(min_length=1)] | None = None
    """The agent the main session runs as (`--agent` wins over it)."""
    enabled_plugins: dict[str, bool] | None = None
    """Plugin id (`name@marketplace`) → whether to load it; the sources merge it key by key."""
    sandbox: SandboxSetting | None = None
    """On once any source turns it on: a project's file cannot turn off the user's sandbox."""
    batch: BatchSetting | None = None
    """`stayer batch`'s own; the sources merge its rate limits provider by provider."""
