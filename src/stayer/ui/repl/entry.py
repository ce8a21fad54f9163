"""What a line the person entered is: a slash command (`/name ...`), a shell command for the
terminal itself (`!command`), or a prompt for the model. `//text` and a lone `!` are prompts."""

from __future__ import annotations

from typing import Literal

Entered = Literal["command", "shell", "prompt"]


def entered(text: str) -> Entered:
    stripped = text.lstrip()
    if stripped.startswith("/") and not stripped.startswith("//") and stripped[1:2].strip():
        return "command"
    if stripped.startswith("!") and stripped[1:].strip():
        return "shell"
    return "prompt"
