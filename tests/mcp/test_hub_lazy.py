"""The MCP client costs nothing until a server is configured: importing it does not import the
`mcp` SDK (nor pydantic); the hub imports it in a worker thread once it starts."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import stayer.mcp.hub, stayer.mcp.server
print(sorted(m for m in ("mcp", "mcp_types", "pydantic", "httpx2") if m in sys.modules))
"""


def test_importing_the_client_leaves_the_sdk_alone() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
