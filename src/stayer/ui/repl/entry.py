"""What a line the person entered is: a slash command (`/name ...`), a shell command for the
terminal itself (`!command`), or a prompt for the model. `//text` and a lone `!` are prompts,
and so is a line whose first word is a path (`/etc/passwd please`, `/usr/bin/x`): no command's
name holds a `/`, and `-p` sends such a line as typed too."""

from __future__ import annotations

from typing import Literal

Entered = Literal["command", "shell", "prompt"]


def entered(text: str) -> Entered:
    stripped = text.lstrip()
    first = stripped.split(maxsplit=1)[0] if stripped else ""
    if first.startswith("/") and "/" not in first[1:] and first[1:]:
        return "command"
    if stripped.startswith("!") and stripped[1:].strip():
        return "shell"
    return "prompt"
