"""The records the files become: an agent, a skill (or command), a plugin, and the catalog of
all a session found, with one line for each file it could not use."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from msgspec import Struct

Scope = Literal["built-in", "user", "project", "flag", "plugin"]
"""Where a definition came from: stayer itself, the user's home folders, the project (walking
up to the repository root), `--agents`, or a plugin."""


RESERVED_COMMANDS = frozenset(
    {
        "help", "clear", "compact", "cost", "context", "model", "resume", "permissions",
        "memory", "init", "status", "exit", "quit", "mcp", "agents", "config", "doctor",
    }
)  # fmt: skip
"""The REPL's own slash commands: a skill or command file may not take one of these names
(in any case); it is left out with a problem line."""


class AgentDefinition(Struct, frozen=True, kw_only=True):
    """A kind of subagent: what the model names as `subagent_type`, and what a child of that
    kind runs with. `prompt` is its whole system prompt (a file's body). `tools` None means
    every tool its parent has; `disallowed_tools` are taken away after (both in rule form,
    `Bash` or `mcp__server`). `model` is an alias, an id, or None (`inherit`: the parent's).
    `memory` says whether the memory files (CLAUDE.md and the rest) join its prompt."""

    name: str
    description: str
    prompt: str
    scope: Scope
    source: str
    """The file it was read from, `--agents`, or `built-in`."""
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    permission_mode: str | None = None
    max_turns: int | None = None
    skills: tuple[str, ...] = ()
    """Skills whose whole body is preloaded into its first message."""
    effort: str | None = None
    isolation: Literal["worktree"] | None = None
    background: bool | None = None
    memory: bool = True
    plugin: str | None = None


class Skill(Struct, frozen=True, kw_only=True):
    """A skill (a folder's `SKILL.md`) or a custom command (a Markdown file): both run as
    `/name args` and, unless `disable_model_invocation`, the model may load them with the Skill
    tool. `name` is what invokes it (`plugin:name` for a plugin's); `body` is the file without
    its front matter; `base_dir` the folder its supporting files are in."""

    name: str
    description: str
    body: str
    kind: Literal["skill", "command"]
    scope: Scope
    source: Path
    base_dir: Path
    when_to_use: str = ""
    argument_hint: str = ""
    arguments: tuple[str, ...] = ()
    """Names of the positional arguments, for `$name` in the body."""
    allowed_tools: tuple[str, ...] = ()
    """Permission rules allowed without asking for the turn that invokes it."""
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    effort: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    context: Literal["fork"] | None = None
    agent: str | None = None
    """The agent type a forked skill runs as (default `general-purpose`)."""
    background: bool | None = None
    """For a forked skill: whether the invoking turn goes on without waiting for it (Claude
    Code's default since 2.1.218) or waits (`false`); None when the file does not say."""
    plugin: str | None = None


class Plugin(Struct, frozen=True, kw_only=True):
    """A plugin on disk: its `plugin.json` name and where its parts are."""

    name: str
    root: Path
    source: Literal["--plugin-dir", "enabledPlugins"]
    version: str | None = None
    description: str = ""
    hooks_file: Path | None = None
    """`hooks/hooks.json` (or the manifest's `hooks`), if it has one."""
    mcp_file: Path | None = None
    """`.mcp.json` (or the manifest's `mcpServers`), if it has one."""


class Catalog(Struct, frozen=True, kw_only=True):
    """Everything a session found: one agent and one skill per name (see `catalog` for which
    wins), the plugins they came with, and `problems`, one clean line each, for every file
    left out and why (and a notice for a project's agent replacing one the user relies on)."""

    agents: tuple[AgentDefinition, ...] = ()
    skills: tuple[Skill, ...] = ()
    plugins: tuple[Plugin, ...] = ()
    problems: tuple[str, ...] = ()

    def agent(self, name: str) -> AgentDefinition | None:
        """The agent called `name`, if there is one."""
        return next((agent for agent in self.agents if agent.name == name), None)

    def skill(self, name: str) -> Skill | None:
        """The skill or command called `name` (a leading `/` is ignored), if there is one."""
        wanted = name.removeprefix("/")
        return next((skill for skill in self.skills if skill.name == wanted), None)
