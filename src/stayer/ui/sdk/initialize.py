"""The reply to the SDK's `initialize` request, in the fields Claude Code answers with and the
SDK hands its caller (`ClaudeSDKClient.get_server_info()`; protocols.md §1.5): the commands a
prompt may start with, the output style, the models `set_model` takes, the account, and the
fields each wiring (`wiring.WIRINGS`) adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stayer.providers.models import ALIASES, alias_model
from stayer.session.session import Session

OUTPUT_STYLE = "default"


def initialize_reply(
    session: Session, wired: Mapping[str, Any], *, api_key_source: str
) -> dict[str, Any]:
    """What `initialize` answers for `session`, opened from the wired options."""
    return {
        "commands": commands(session),
        "agents": agents(session),
        "output_style": OUTPUT_STYLE,
        "available_output_styles": [OUTPUT_STYLE],
        "models": models(session),
        "current_model": session.setup.started.model,
        "account": {"apiKeySource": api_key_source},
        **wired,
    }


def commands(session: Session) -> list[dict[str, str]]:
    """The commands (skills a user may invoke) as Claude Code lists them: name, description,
    argument hint."""
    resolved = session.setup.resolved
    if resolved is None:
        return []
    return [
        {"name": skill.name, "description": skill.description, "argumentHint": skill.argument_hint}
        for skill in resolved.catalog.skills
        if skill.user_invocable
    ]


def agents(session: Session) -> list[dict[str, str]]:
    """The agent types the session may delegate to: name and description."""
    resolved = session.setup.resolved
    if resolved is None:
        return []
    return [
        {"name": agent.name, "description": agent.description} for agent in resolved.catalog.agents
    ]


def models(session: Session) -> list[dict[str, str]]:
    """What `set_model` takes: the model in use first, then, on Anthropic's protocol, the
    Claude aliases with the model each stands for now."""
    current = session.setup.started.model
    offered = [{"value": current, "displayName": current, "description": "the model in use"}]
    resolved = session.setup.resolved
    if resolved is None or resolved.choice.provider != "anthropic":
        return offered
    for alias in ALIASES:
        model = alias_model(alias, resolved.env) or alias
        offered.append({"value": alias, "displayName": alias, "description": model})
    return offered
