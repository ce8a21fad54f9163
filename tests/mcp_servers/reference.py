"""Where the reference MCP server `mcp-server-time` is: `scripts/bootstrap.py` (which `./test`
runs first) installs it into a virtual environment of its own. Its tests must run, not skip:
when it is missing they fail, saying why it could not be installed."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIME_SERVER = ROOT / ".cache" / "mcp-server-time" / "bin" / "mcp-server-time"
FAILED = ROOT / ".cache" / "mcp-server-time-failed"


def time_server() -> Path:
    """The reference server's program; fails the test, saying why, when it is not there."""
    if TIME_SERVER.exists():
        return TIME_SERVER
    why = (
        FAILED.read_text().strip()
        if FAILED.exists()
        else "python3 scripts/bootstrap.py was not run"
    )
    pytest.fail(
        f"mcp-server-time is not installed ({why}); delete {FAILED.relative_to(ROOT)} and run "
        "python3 scripts/bootstrap.py"
    )
