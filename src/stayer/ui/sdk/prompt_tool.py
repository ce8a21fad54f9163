"""`--permission-prompt-tool`: who answers the permission questions a person would. `stdio` is
claude-agent-sdk's callback (`PermissionPrompt.over` its control channel); `mcp__<server>__<tool>`
is a tool of one of the session's MCP servers, as in Claude Code.

The tool is called with the call in question (`tool_name`, `input`, `tool_use_id`) and answers
with text holding one JSON object, the same answer an SDK callback gives (`behavior` allow with
`updatedInput` and `updatedPermissions`, or deny with `message` and `interrupt`), which the
`PermissionPrompt` acts on. The call to it is stayer's own, not the model's, so it asks nobody.
A tool that is not there (its server failed or has not connected yet), fails, or answers
anything else denies the call in question, saying why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from stayer.driver import Driver
from stayer.errors import ConfigError
from stayer.messages import TextBlock
from stayer.tools.base import ToolFailure, ToolInputError, ToolOutput

from .control import ControlChannel, ControlError
from .permission_prompt import Ask, PermissionPrompt

STDIO = "stdio"
"""The prompt tool that is claude-agent-sdk's `can_use_tool` callback, over its control
protocol."""
PREFIX = "mcp__"
"""How the name of an MCP server's tool begins (`mcp__server__tool`)."""


def tool_asker(name: str) -> Ask:
    """Puts each question to the session's MCP tool `name`."""

    async def ask(fields: Mapping[str, Any], driver: Driver) -> Mapping[str, Any]:
        params = driver.session.setup.params
        tool = params.tools.tools().get(name)
        if tool is None:
            raise ControlError(
                f"the permission prompt tool {name} is not among the session's tools (is its "
                "server in --mcp-config, and connected?)"
            )
        given = {key: fields[key] for key in ("tool_name", "input", "tool_use_id")}
        ctx = replace(params.tool_context, tool_use_id=str(fields["tool_use_id"]))
        try:
            output = await tool.call(tool.parse_input(given), ctx)
        except (ToolInputError, ToolFailure) as error:
            raise ControlError(f"the permission prompt tool {name} failed: {error}") from None
        return _answer(name, output)

    return ask


def _answer(name: str, output: ToolOutput) -> Mapping[str, Any]:
    """The JSON object the tool's text holds."""
    content = output.content
    text = content if isinstance(content, str) else ""
    if not isinstance(content, str):
        text = "".join(block.text for block in content if isinstance(block, TextBlock))
    if output.is_error:
        raise ControlError(f"the permission prompt tool {name} failed: {text.strip()[:200]}")
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ControlError(
            f"the permission prompt tool {name} answered {text.strip()[:200]!r}, not a JSON "
            "object with a behavior"
        )
    return answer


def prompt_for(name: str, channel: ControlChannel | None = None) -> PermissionPrompt:
    """The decider `--permission-prompt-tool name` asks for: the SDK over `channel` for
    `stdio`, else the MCP tool `name`."""
    if name == STDIO:
        if channel is None:
            raise ConfigError(
                "--permission-prompt-tool stdio asks over claude-agent-sdk's control protocol, "
                "which needs --input-format stream-json --output-format stream-json"
            )
        return PermissionPrompt.over(channel)
    if not name.startswith(PREFIX):
        raise ConfigError(
            f"--permission-prompt-tool {name}: give stdio (claude-agent-sdk) or an MCP tool "
            f"of a server in --mcp-config ({PREFIX}<server>__<tool>)"
        )
    return PermissionPrompt(tool_asker(name))
