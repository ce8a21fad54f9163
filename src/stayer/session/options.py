"""What a caller may set for one run: the same knobs as the CLI flags, as keyword options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import Struct, field

from stayer.errors import ConfigError
from stayer.loop.abort import AbortSignal
from stayer.loop.state import Decide, RetryPolicy
from stayer.messages import Message
from stayer.providers.base import Provider
from stayer.tools.base import EditorFiles, Tool

if TYPE_CHECKING:
    from stayer.hooks.callbacks import CallbackMatcher
    from stayer.mcp.tunnel import McpTunnel


class QueryOptions(Struct, frozen=True, kw_only=True):
    """Options of `stayer.query()`; every field has a working default.

    `provider` injects a model client (the scripted model, say) instead of choosing one from
    `model` and the environment. `abort` lets the caller interrupt the run; an aborted signal
    stays aborted, so give each run its own. Tool lists accept a name, a comma-separated
    string, or a sequence of them. `add_dirs` are further working directories (`--add-dir`);
    `betas` are Anthropic beta names sent with every request (`--betas`). `done_when` is a shell
    command that must succeed before the run may end as completed (`--done-when`).
    `fallback_models` are the models to go on with, in order, when the model keeps answering
    overloaded (`--fallback-model`): a name, a comma-separated chain, or a sequence of them;
    each run starts again from `model`. `pins` are notes every compaction keeps word for word
    (`--pin`); `autocompact_window` and `autocompact_percent` make compaction come earlier
    (`--autocompact`, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`). `repeat_nudge_after` and
    `repeat_stop_after` are the rounds in a row of the same calls failing the same way after
    which the model is told to change course, and the run ends. `sandbox` runs Bash
    commands under bubblewrap (`--sandbox`): only the working directories and a private /tmp
    writable, and no network unless `sandbox_network` (`--sandbox-network`); a session that
    asks for it where bubblewrap cannot run does not start.

    The settings files (`.stayer/` and Claude Code's `.claude/`: see `stayer.config`) fill in
    what these options leave unset, and add their permission rules to these.
    """

    model: str | None = None
    fallback_models: str | Sequence[str] = ()
    cwd: Path | str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    tools: str | Sequence[str] | None = None
    allowed_tools: str | Sequence[str] = ()
    disallowed_tools: str | Sequence[str] = ()
    extra_tools: Sequence[Tool[Any]] = ()
    """The caller's own tools (`stayer.Tool` instances), offered after the built-ins whatever
    `tools` selects; a name clash with a built-in or another is refused."""
    permission_mode: str | None = None
    """The permission mode; None: the settings' `permissions.defaultMode`, else `default`."""
    allow_dangerously_skip_permissions: bool = False
    """Let the session switch into bypassPermissions later (a front end's mode switch, an
    answer's `setMode`) without starting in it; otherwise only a session started in it may."""
    can_use_tool: Decide | None = None
    """Answers the calls the permission policy asks about, as claude-agent-sdk's callback of
    this name does: given the `PermissionRequested` (tool name, input, tool_use_id, why it
    asks, rules that would allow it), return a `Decision`: ``Decision("allow")``, optionally
    with ``updated_input`` (checked against the tool's schema) or ``mode`` (the permission mode
    to switch to), or ``Decision("deny", "why")``. Without one, what would ask is denied, and
    the model reads which rule would allow it. A callback that raises denies the call."""
    add_dirs: Sequence[Path | str] = ()
    betas: Sequence[str] = ()
    done_when: str | None = None
    max_budget_usd: float | None = None
    token_budget: int | None = None
    """Output tokens the run should produce at least; a `+500k` in the prompt sets it too."""
    pins: Sequence[str] = ()
    autocompact_window: int | Literal["auto"] | None = None
    autocompact_percent: int | None = None
    repeat_nudge_after: int = 3
    repeat_stop_after: int = 5
    resume: str | None = None
    """A session to go on with: its id (in this folder's saved sessions) or a transcript's path
    (stayer's or Claude Code's; the latter is imported as a new session)."""
    continue_session: bool = False
    """Go on with the latest session saved for this folder (`--continue`)."""
    fork_session: bool = False
    """With `resume` or `continue_session`: go on under a new session id, leaving the old one."""
    persist_session: bool = True
    """Write the transcript (`--no-session-persistence` turns it off)."""
    sessions_dir: Path | str | None = None
    """The folder that keeps this session's transcript (`<session-id>.jsonl`) and its files
    (`<session-id>/`: saved prompts, large tool results), and where `resume` and
    `continue_session` look; relative to `cwd`. None: `~/.stayer/projects/<cwd's slug>/`,
    shared by every session run in that directory (`stayer batch` gives each task its own)."""
    sandbox: bool = False
    sandbox_network: bool = False
    """Inside the sandbox, let commands use the network (it has none otherwise)."""
    provider: Provider | None = None
    env: Mapping[str, str] | None = None
    abort: AbortSignal = field(default_factory=AbortSignal)
    session_id: str | None = None
    history: Sequence[Message] = ()
    retry: RetryPolicy | None = None
    max_tokens: int | None = None
    settings: str | Path | Mapping[str, Any] | None = None
    """More settings over the files' (`--settings`): a file's path, a JSON object as text, or a
    mapping. A broken one stops the run (`ConfigError`)."""
    setting_sources: str | Sequence[str] | None = None
    """Which settings files to read (`--setting-sources`): any of `user`, `project`, `local`,
    comma-separated or as a sequence; None reads all three, an empty value none of them."""
    mcp_config: Sequence[str | Mapping[str, Any]] = ()
    """MCP servers to start (`--mcp-config`): each a file's path, JSON text, or a mapping with
    `mcpServers`, in Claude Code's format; the settings' and the project's `.mcp.json` are
    added unless `strict_mcp_config`."""
    strict_mcp_config: bool = False
    sdk_mcp: McpTunnel | None = None
    """How the in-process MCP servers of the claude-agent-sdk program running stayer are
    reached (`mcp_message`; the SDK front end sets it): given a server's name and one JSON-RPC
    message, it returns the reply. Without it, `"type": "sdk"` servers are refused."""
    agents: str | Mapping[str, Mapping[str, Any]] | None = None
    """Custom agents over the files' (`--agents`): JSON text or a mapping of name to Claude
    Code's fields (`description` and `prompt` required; `tools`, `model`, ...)."""
    agent: str | None = None
    """Run the session as this agent (`--agent`, or `agent` in settings): its prompt, tools,
    model and mode."""
    plugin_dirs: Sequence[str | Path] = ()
    """Plugin folders to load for this session (`--plugin-dir`), besides the settings'
    `enabledPlugins`."""
    editor: EditorFiles | None = None
    """The editor's view of files (ACP's client `fs` methods): Read, Write and Edit go through
    it for text files, so the model sees unsaved buffers; None reads and writes the disk."""
    max_concurrent_tools: int | None = None
    """How many concurrency-safe tool calls may run at once (default 10, or
    `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`)."""
    thinking: Literal["enabled", "adaptive", "disabled"] | None = None
    """Extended thinking (`--thinking`): `adaptive` lets the model decide how much, `enabled`
    thinks up to `max_thinking_tokens` (else as much as the output limit allows), `disabled`
    turns it off; None: the model's default, unless `max_thinking_tokens` is given."""
    max_thinking_tokens: int | None = None
    """The thinking budget in tokens (`--max-thinking-tokens`; 0 turns thinking off); the
    Messages API takes at least 1024 and fewer than the output limit, so it is kept to that."""
    thinking_display: Literal["summarized", "omitted"] | None = None
    """How thinking comes back (`--thinking-display`), when thinking is on."""
    json_schema: str | Mapping[str, Any] | None = None
    """A JSON Schema the run's final answer must match (`--json-schema`, claude-agent-sdk's
    `output_format`): the model gives it through the StructuredOutput tool, is sent back to
    give it when it stops without, and the result carries it as `structured_output`."""
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    """How hard the model works at its answers (`--effort`): Anthropic's `output_config.effort`,
    OpenAI's `reasoning_effort` (whose highest level, `high`, stands for `xhigh` and `max`)."""
    hooks: Mapping[str, Sequence[CallbackMatcher]] = field(default_factory=dict)
    """The caller's own hooks, event name (`PreToolUse`, `Stop`, ...) → `CallbackMatcher`s of
    async callables, run after the settings' hooks for the same events and answered as theirs
    are (`stayer.hooks.callbacks`)."""

    def to_spec(self) -> dict[str, Any]:
        """The options as plain JSON data, for a worker process to turn back into options
        (`from_spec`): every field set to something other than its default, except the live
        objects (`OBJECT_FIELDS`), which the worker supplies itself."""
        default = QueryOptions()
        return {
            name: _plain(getattr(self, name))
            for name in self.__struct_fields__
            if name not in OBJECT_FIELDS and getattr(self, name) != getattr(default, name)
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], **objects: Any) -> QueryOptions:
        """Options from `to_spec`'s data, with the live objects given as keywords; raises
        `ConfigError` in one line for a field options do not have."""
        unknown = sorted(set(spec) - (set(cls.__struct_fields__) - OBJECT_FIELDS))
        if unknown:
            raise ConfigError(
                f"options spec: no such option(s) {', '.join(unknown)}; give only the fields "
                "QueryOptions.to_spec writes"
            )
        values = dict(spec)
        try:
            if isinstance(values.get("retry"), Mapping):
                values["retry"] = RetryPolicy(**values["retry"])
            return cls(**values, **objects)
        except TypeError as error:  # a key given twice, or a retry field there is none of
            raise ConfigError(f"options spec: {error}; give each field once, as written") from None


OBJECT_FIELDS = frozenset(
    {
        "extra_tools",
        "can_use_tool",
        "provider",
        "abort",
        "history",
        "editor",
        "hooks",
        "sdk_mcp",
    }
)
"""Fields that hold live objects (tools, callables, a model client, an abort signal, messages):
never in a spec."""


def _plain(value: Any) -> Any:
    """`value` as JSON data: paths as text, sequences as lists, structs as objects."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, RetryPolicy):
        return msgspec.structs.asdict(value)
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
