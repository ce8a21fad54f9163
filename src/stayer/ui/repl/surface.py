"""What the REPL offers the code around its core: slash commands and later additions (custom
commands, skills) act on the session through this surface, never on the app's internals.

The app implements `Repl`; a command is an async function of it and the text after its name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

from msgspec import Struct

from stayer.driver import Operation
from stayer.session.session import Session


class Totals(Struct):
    """What the session has used so far, as the footer and `/cost` show it (kept by the app
    from the events; reset by `/clear` only for the context, never for the cost)."""

    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    runs: int = 0
    api_duration_ms: float = 0.0
    wall_duration_ms: float = 0.0
    context_tokens: int = 0
    """What the last model call was sent (its input, cached or not): the context in use."""
    context_window: int = 0


class Repl(Protocol):
    """The REPL as commands see it."""

    @property
    def session(self) -> Session:
        """The session now (a new one after `/resume`)."""

    @property
    def totals(self) -> Totals:
        """Cost, tokens and context used so far."""

    @property
    def running(self) -> bool:
        """Whether a run is going."""

    async def settle(self) -> None:
        """Wait for a run the person has already seen end (its `Finished` shown) to finish
        tidying up; return at once when a run is still going or none is."""

    def send(self, operation: Operation) -> None:
        """Hand an operation to the session's driver (Submit, SetModel, Clear, Compact, ...)."""

    def say(self, text: str) -> None:
        """Print `text` (plain, or ANSI-styled) into the conversation's scrollback, once."""

    async def pick(self, title: str, choices: Sequence[str]) -> int | None:
        """Let the person choose one of `choices` (Up/Down, Enter; Escape is None)."""

    async def edit(self, path: Path) -> None:
        """Open `path` in the person's editor ($VISUAL, $EDITOR, else vi), the terminal
        handed over until it exits."""

    async def resume(self, session_id: str) -> None:
        """Go on with a saved session instead of this one, its conversation shown."""

    def exit(self) -> None:
        """End the REPL (the session ends as on Ctrl+D)."""


CommandHandler = Callable[[Repl, str], Awaitable[None]]
"""A slash command: given the REPL and the text after its name (stripped, maybe empty)."""
