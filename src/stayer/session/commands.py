"""`/name args` prompts: a custom command (or a skill the user may invoke) as a user message.

As Claude Code sends one, the message has two text blocks: first the command's name and
arguments in its tags, then the rendered body (arguments put in, `!` commands run, each judged
by the permission policy and none asked about). A `/word` that names no command is sent as
typed: it may be a path, or plain text. The same expansion serves `-p` and the REPL, which both
submit the text to the Session. A command's `model` answers its turn only: the session goes
back to its own model at the next prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

from stayer.agents.model import Catalog
from stayer.errors import ConfigError
from stayer.messages import ContentBlock, TextBlock
from stayer.tools.base import ToolFailure

from .skill_host import SessionSkills

_COMMAND = re.compile(r"/(?P<name>[^\s/][^\s]*)(?:\s+(?P<args>.*))?", re.DOTALL)


def command_header(name: str, args: str) -> str:
    """The first block of a command's message: what runs, and with what."""
    return (
        f"<command-message>{name} is running…</command-message>\n"
        f"<command-name>/{name}</command-name>\n"
        f"<command-args>{args}</command-args>"
    )


def parsed(prompt: str | Sequence[ContentBlock]) -> tuple[str, str] | None:
    """The command name and arguments a prompt that is only `/name args` gives, else None."""
    if not isinstance(prompt, str):
        blocks = list(prompt)
        if len(blocks) != 1 or not isinstance(blocks[0], TextBlock):
            return None
        prompt = blocks[0].text
    match = _COMMAND.fullmatch(prompt.strip())
    if match is None:
        return None
    return match.group("name"), (match.group("args") or "").strip()


class Expansion(Struct, frozen=True):
    """What a command prompt becomes: the message's content, and the model its turn asks for
    (None: the session's)."""

    content: tuple[ContentBlock, ...]
    model: str | None = None


async def expanded(
    prompt: str | Sequence[ContentBlock], catalog: Catalog, skills: SessionSkills
) -> Expansion | None:
    """The message a `/name args` prompt becomes when `name` is a command the user may
    invoke; None when the prompt is no such command (it is sent as typed). Raises
    `ConfigError` in one line when one of its `!` commands may not run or fails: then
    nothing is sent."""
    found = parsed(prompt)
    skill = None if found is None else catalog.skill(found[0])
    if found is None or skill is None or not skill.user_invocable:
        return None
    name, args = skill.name, found[1]
    try:
        body = await skills.rendered(skill, args)
    except ToolFailure as failure:
        raise ConfigError(str(failure)) from None
    if skill.kind == "skill":
        body = f"Base directory for this skill: {skill.base_dir}\n\n{body}"
        skills.remember(name, body)  # shown again after a summary; a command's output is not
    content = (TextBlock(command_header(name, args)), TextBlock(body))
    return Expansion(content, None if skill.model in (None, "inherit") else skill.model)
