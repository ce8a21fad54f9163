"""stayer started as claude-agent-sdk starts it, but driven by hand: for tests that send what
the SDK would never send, or watch every line it prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer

SDK_ARGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")


def start(cwd: Path, server: FakeModelServer, *args: str) -> subprocess.Popen[str]:
    """stayer as the SDK starts it, its three streams piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "stayer", *SDK_ARGS, *args],
        cwd=cwd,
        env=clean_env(server.env()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def session(
    cwd: Path, server: FakeModelServer, lines: list[str], *args: str
) -> tuple[int, list[dict[str, Any]], str]:
    """Send `lines`, close standard input, and return the exit status, the frames printed and
    standard error."""
    process = start(cwd, server, *args)
    out, err = process.communicate("".join(line + "\n" for line in lines), timeout=60)
    return process.returncode, [json.loads(line) for line in out.splitlines()], err


def initialize(request_id: str = "req_1") -> str:
    """The SDK's first line."""
    request = {"subtype": "initialize", "hooks": None}
    return json.dumps({"type": "control_request", "request_id": request_id, "request": request})


def user(content: Any) -> str:
    """A user message line."""
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})
