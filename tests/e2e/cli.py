"""Run the real `stayer` command as a subprocess, with a clean model environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CLAUDE_CODE_MAX_RETRIES",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "API_TIMEOUT_MS",
    "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS",
    "CLAUDE_STREAM_IDLE_TIMEOUT_MS",
)


@dataclass(frozen=True)
class Completed:
    status: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env["NO_COLOR"] = "1"
    env.update(extra or {})
    return env


def stayer(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: str = "",
    timeout: float = 60,
) -> Completed:
    done = subprocess.run(
        [sys.executable, "-m", "stayer", *args],
        cwd=cwd,
        env=clean_env(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Completed(done.returncode, done.stdout, done.stderr)


def start_streaming(
    cwd: Path, env: Mapping[str, str], prompt: str, session_id: str
) -> subprocess.Popen[str]:
    """Start `stayer -p PROMPT` with stream-json output, partial messages and every tool allowed,
    under `session_id`, its output piped: for the tests that stop it part-way."""
    return subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", prompt, "--output-format", "stream-json",
         "--verbose", "--include-partial-messages", "--dangerously-skip-permissions",
         "--session-id", session_id],
        cwd=cwd, env=clean_env(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def start_tool_run(
    cwd: Path, env: Mapping[str, str], started: Path
) -> tuple[subprocess.Popen[str], list[Any]]:
    """Start `stayer -p` with stream-json output and wait until its tool is running: until the
    command the test scripted has created the marker file `started`.

    Returns the process and the lines read so far; the caller signals it and collects the rest.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "wait", "--output-format", "stream-json",
         "--verbose", "--dangerously-skip-permissions"],
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stdout is not None
    lines: list[Any] = []
    for raw in process.stdout:
        lines.append(json.loads(raw))
        if lines[-1]["type"] == "assistant":
            break
    deadline = time.monotonic() + 20
    while not started.exists():  # the command says it runs: a signal, not a guess
        assert time.monotonic() < deadline, "the tool call never started"
        assert process.poll() is None, "stayer ended before its tool started"
        time.sleep(0.01)
    return process, lines
