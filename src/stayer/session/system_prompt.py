"""The run's system prompt from its options and the environment, and the memory files behind it.

The user's folders are stayer's own (`STAYER_CONFIG_DIR`, else `~/.stayer`) and Claude Code's
(`CLAUDE_CONFIG_DIR`, else `~/.claude`, whose `CLAUDE.md` alone is read; see
`context.memory`). Two of Claude Code's switches are read as it reads them:
`CLAUDE_CODE_DISABLE_CLAUDE_MDS` loads no memory file, and `CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS`
takes no git snapshot.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from msgspec import Struct
from msgspec.structs import replace

from stayer.config.dirs import claude_config_dir, config_root
from stayer.context.memory import (
    USER_NAMES,
    Memory,
    load_memory,
    memory_candidates,
    project_root,
)
from stayer.context.prompt import Environment, Sandbox, build_system_prompt
from stayer.exec.child_env import child_env
from stayer.switches import env_flag

from .options import QueryOptions


class Render(Protocol):
    """The same prompt for another token budget (a `+500k` in a later prompt of the session),
    or naming another model (a fallback that took over)."""

    def __call__(self, budget: int | None, model: str | None = None) -> str: ...


class SystemPrompt(Struct, frozen=True):
    """The prompt's text and the memory files it holds."""

    text: str
    memory: Memory
    render: Render


def discover_memory(cwd: Path, env: Mapping[str, str]) -> Memory:
    """The memory files for a session in `cwd` (none when `CLAUDE_CODE_DISABLE_CLAUDE_MDS`)."""
    if env_flag(env, "CLAUDE_CODE_DISABLE_CLAUDE_MDS"):
        return Memory()
    user_dirs = ((claude_config_dir(env), ("CLAUDE.md",)), (config_root(env), USER_NAMES))
    home = Path.home()
    candidates = memory_candidates(cwd, user_dirs=user_dirs, root=project_root(cwd), home=home)
    return load_memory(candidates, home=home)


def system_prompt(
    options: QueryOptions,
    env: Mapping[str, str],
    *,
    cwd: Path,
    model: str,
    tool_names: Sequence[str],
    token_budget: int | None,
    pins: Sequence[str],
) -> SystemPrompt:
    """Assemble the run's system prompt (see `context.prompt` for its parts and their order)."""
    memory = discover_memory(cwd, env)
    environment = Environment.detect(
        cwd,
        model,
        env=child_env({**os.environ, **env}),  # git may run commands the repo config names
        git=not env_flag(env, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS"),
    )

    sandbox: Sandbox | None = None
    if options.sandbox:
        sandbox = "online" if options.sandbox_network else "offline"

    def render(budget: int | None, model: str | None = None) -> str:
        return build_system_prompt(
            environment if model is None else replace(environment, model=model),
            tool_names=tool_names,
            custom=options.system_prompt,
            append=options.append_system_prompt,
            token_budget=budget,
            pins=pins,
            memory=memory,
            sandbox=sandbox,
        )

    return SystemPrompt(render(token_budget), memory, render)
