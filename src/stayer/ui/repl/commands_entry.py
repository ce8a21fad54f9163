"""One entry of the slash-command table (`commands.Commands`), apart from the table so the
modules of the built-in commands can make theirs without importing the table."""

from __future__ import annotations

from msgspec import Struct

from .surface import CommandHandler


class Command(Struct, frozen=True):
    """One slash command."""

    name: str
    """Without the slash."""
    summary: str
    """One line, for /help and completion."""
    handler: CommandHandler
    argument_hint: str = ""
    """What may follow the name, e.g. `[instructions]`."""
    aliases: tuple[str, ...] = ()
    while_running: bool = False
    """Whether it may run while a run is going (/cost may, /clear may not)."""
    origin: str = ""
    """Where a custom command or skill comes from ("the project's command"); "" for the
    REPL's own."""
