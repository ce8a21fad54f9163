"""An MCP server whose one tool, `decide`, answers permission questions as Claude Code's
`--permission-prompt-tool` expects: a command with `rm` in it is denied, `touch a` is allowed
as `touch b`, `say garbage` gets an answer that is not JSON, and anything else is allowed as
it is.

    python approver.py
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer


def main() -> None:
    server = MCPServer("approver")

    @server.tool(description="Answer whether a tool call may run.")
    def decide(tool_name: str, input: dict[str, Any], tool_use_id: str = "") -> str:
        command = str(input.get("command", ""))
        if "rm" in command.split():
            return json.dumps({"behavior": "deny", "message": f"no removing ({tool_use_id})"})
        if command == "touch a":
            return json.dumps({"behavior": "allow", "updatedInput": {"command": "touch b"}})
        if command == "say garbage":
            return "sure, why not"
        return json.dumps({"behavior": "allow", "updatedInput": input})

    server.run()


if __name__ == "__main__":
    main()
