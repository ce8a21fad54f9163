"""The session's own commands a prompt may be, for every front end that takes prompts as text
(stream-json input, ACP): `/clear` starts the conversation over, `/compact [instructions]`
summarises it; both are the driver's `Clear` and `Compact`, never text for the model. Any
other `/name args` goes to the session, which expands custom commands and skills.
"""

from __future__ import annotations

from collections.abc import Sequence

from stayer.driver import Clear, Compact
from stayer.messages import ContentBlock, TextBlock

SessionCommand = Clear | Compact

BUILT_INS: tuple[tuple[str, str, str], ...] = (
    ("compact", "Summarise the conversation so far to free context", "optional instructions"),
    ("clear", "Start the conversation over, forgetting what was said", ""),
)
"""The commands above as a menu lists them: name, description, argument hint ("": none)."""


def session_command(prompt: str | Sequence[ContentBlock]) -> SessionCommand | None:
    """The command `prompt` is (`/clear`, `/compact ...`), or None for any other prompt."""
    if not isinstance(prompt, str):
        if len(prompt) != 1 or not isinstance(prompt[0], TextBlock):
            return None
        prompt = prompt[0].text
    name, _, rest = prompt.strip().partition(" ")
    if name == "/clear" and not rest.strip():
        return Clear()
    if name == "/compact":
        return Compact(rest.strip() or None)
    return None
