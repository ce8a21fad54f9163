"""claude-agent-sdk driving the real `stayer` command: a `cli_path` script that runs stayer from
this checkout, and the options that point the SDK at it and at a fake model server.

The SDK (a test dependency) bundles Claude Code's own CLI; `cli_path` is always given, so that
CLI is never run.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer


def cli_script(folder: Path) -> Path:
    """An executable that runs this checkout's stayer with the arguments the SDK gives."""
    script = folder / "stayer-cli"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m stayer "$@"\n')
    script.chmod(0o755)
    return script


def sdk_options(
    server: FakeModelServer, cwd: Path, *, stderr: list[str] | None = None, **given: Any
) -> ClaudeAgentOptions:
    """Options for `query()` / `ClaudeSDKClient`: stayer as the CLI, run in `cwd` against
    `server`; `stderr` collects what stayer says there; `given` are more options."""
    scripts = cwd.parent / f".{cwd.name}-cli"
    scripts.mkdir(exist_ok=True)
    env = {**clean_env(server.env()), **given.pop("env", {})}
    # the SDK merges `env` over its own environment: drop what points at a real model
    for name in set(os.environ) - set(env):
        env.setdefault(name, "")
    return ClaudeAgentOptions(
        cli_path=cli_script(scripts),
        cwd=cwd,
        env=env,
        stderr=stderr.append if stderr is not None else None,
        **given,
    )
