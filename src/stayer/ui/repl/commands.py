"""The table of slash commands: what `/name args` typed at the prompt runs.

The table is open: the built-in commands (`BUILT_IN`) are its first entries, and later sources
(custom commands, skills, an MCP server's prompts) `add` theirs without touching the REPL's
core, and `remove` them when their source goes. A command acts only
through the `Repl` surface. The built-ins' names are fixed: an entry that would take one (or
one of their aliases) is refused with one line, while an added entry replaces an added one of
the same name (a project's command over the user's, say).

`run` parses a line, refuses a command that may not run while the agent works, and turns a
`StayerError` from a handler into one line in the conversation; an unknown name gets the
closest known one suggested.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from contextvars import ContextVar

from stayer.errors import ConfigError, StayerError

from .commands_context import context_command
from .commands_custom import agents_command
from .commands_entry import Command
from .commands_info import cost_command, status_command
from .commands_mcp import mcp_command
from .commands_memory import init_command, memory_command
from .commands_permissions import permissions_command
from .commands_session import (
    clear_command,
    compact_command,
    exit_command,
    model_command,
    resume_command,
)
from .surface import Repl

__all__ = ["BUILT_IN", "Command", "Commands"]

RUNNING: ContextVar[Commands] = ContextVar("stayer_repl_commands")
"""The table whose `run` is carrying out a command: /help lists that table, custom entries
included, though a handler is given only the REPL."""


KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the message"),
    ("\\ then Enter, Alt+Enter", "start a new line"),
    ("Up, Down", "earlier messages (this project's)"),
    ("Ctrl+R", "search earlier messages"),
    ("Tab", "complete a /command or an @path"),
    ("Esc, Ctrl+C", "stop the agent; Esc also takes back a queued message"),
    ("Ctrl+C twice, Ctrl+D", "leave (on an empty prompt)"),
    ("Shift+Tab", "switch permission mode: default, acceptEdits, plan"),
    ("Ctrl+O", "show the last tool result in full"),
    ("!command", "run a shell command; its output joins the conversation"),
    ("@path", "mention a file"),
)
"""The keys and prefixes /help explains (the input's own; kept here beside the commands)."""


async def _help(repl: Repl, argument: str) -> None:
    table = RUNNING.get(None)
    commands = table.commands() if table is not None else list(BUILT_IN)
    usage = [(_usage(command), command.summary) for command in commands if not command.origin]
    lines = ["Commands:", *_columns(usage)]
    lines += _custom_lines(commands, table.shadowed if table is not None else {})
    lines += ["", "Keys:", *_columns(KEYS)]
    repl.say("\n".join(lines))


def _custom_lines(commands: Sequence[Command], shadowed: dict[str, str]) -> list[str]:
    """The custom commands and skills, each saying where it is from, and those a built-in
    command's name hides."""
    rows = [
        (_usage(command), f"{command.summary} ({command.origin})")
        for command in commands
        if command.origin
    ]
    rows += [
        (f"/{name}", f"({where}) not offered: the built-in /{name} wins; rename it")
        for name, where in sorted(shadowed.items())
    ]
    return ["", "Custom commands and skills (sent to the model):", *_columns(rows)] if rows else []


def _columns(rows: Sequence[tuple[str, str]], most: int = 24) -> list[str]:
    """Two columns, the second aligned unless the first is longer than `most` characters."""
    width = min(max(len(left) for left, _ in rows), most)
    return [f"  {left:<{width}}  {right}" for left, right in rows]


def _usage(command: Command) -> str:
    """`/name [hint]`, with the aliases after it."""
    text = f"/{command.name}"
    if command.argument_hint:
        text += f" {command.argument_hint}"
    if command.aliases:
        text += " (" + ", ".join(f"/{alias}" for alias in command.aliases) + ")"
    return text


help_command = Command("help", "list the commands and keys", _help, while_running=True)

BUILT_IN: tuple[Command, ...] = (
    help_command,
    clear_command,
    compact_command,
    cost_command,
    context_command,
    model_command,
    resume_command,
    permissions_command,
    memory_command,
    init_command,
    status_command,
    mcp_command,
    agents_command,
    exit_command,
)
"""The commands every REPL has; their names are fixed."""


class Commands:
    """The slash commands the REPL knows; see the module."""

    def __init__(self, commands: Iterable[Command] = BUILT_IN) -> None:
        self._by_name: dict[str, Command] = {}
        self._fixed: set[str] = set()
        self.shadowed: dict[str, str] = {}
        """Custom commands not offered because a built-in has their name: name, where from."""
        for command in commands:
            self._check_free(command, self._by_name.keys())
            self._enter(command)
        self._fixed = set(self._by_name)

    def add(self, command: Command) -> None:
        """Add `command`, replacing an added one of the same name; raises `ConfigError` when
        it would take a built-in command's name or alias."""
        self._check_free(command, self._fixed)
        old = self._by_name.get(command.name.lower())
        if old is not None:
            for key in (old.name, *old.aliases):
                self._by_name.pop(key.lower(), None)
        self._enter(command)

    def remove(self, name: str) -> bool:
        """Take out the added command `name` (its aliases too); False when there is none. A
        built-in command is never taken out (`ConfigError`)."""
        key = name.removeprefix("/").lower()
        if key in self._fixed:
            raise ConfigError(f"/{key} is a built-in command and stays")
        command = self._by_name.get(key)
        if command is None:
            return False
        for alias in (command.name, *command.aliases):
            self._by_name.pop(alias.lower(), None)
        return True

    def find(self, name: str) -> Command | None:
        """The command called `name` (or with that alias), with or without its slash."""
        return self._by_name.get(name.removeprefix("/").lower())

    def names(self) -> list[str]:
        """Every command's name (aliases left out), in alphabetical order."""
        return sorted({command.name for command in self._by_name.values()})

    def commands(self) -> list[Command]:
        """Every command once, by name."""
        return [command for name in self.names() if (command := self.find(name)) is not None]

    def complete(self, prefix: str) -> list[Command]:
        """The commands whose name or an alias starts with `prefix` (a leading slash is
        ignored), by name; all of them for an empty prefix."""
        wanted = prefix.removeprefix("/").lower()
        return [
            command
            for command in self.commands()
            if any(key.lower().startswith(wanted) for key in (command.name, *command.aliases))
        ]

    def closest(self, name: str) -> str | None:
        """The known name or alias most like `name`, if one is close enough to suggest."""
        found = difflib.get_close_matches(
            name.removeprefix("/").lower(), list(self._by_name), n=1, cutoff=0.6
        )
        return found[0] if found else None

    async def run(self, repl: Repl, line: str) -> None:
        """Carry out `line` (`/name` and what follows it): an unknown name, or one that may not
        run while a run is going, is one line for the person instead."""
        body = line.strip().removeprefix("/")
        name, *rest = [""] if body[:1].isspace() else body.split(maxsplit=1) or [""]
        command = self.find(name)
        if command is None:
            repl.say(self._unknown(name))
            return
        if repl.running and not command.while_running:
            await repl.settle()  # the run shown ended may still be stopping its background work
        if repl.running and not command.while_running:
            repl.say(
                f"/{command.name} cannot run while the agent is working; "
                "press Esc to stop it, or wait until it finishes"
            )
            return
        token = RUNNING.set(self)
        try:
            await command.handler(repl, rest[0].strip() if rest else "")
        except StayerError as error:  # what the person asked could not be done: say why
            repl.say(f"/{command.name}: {error}")
        finally:
            RUNNING.reset(token)

    def _unknown(self, name: str) -> str:
        if not name:
            return "A slash starts a command: /help lists them"
        guess = self.closest(name)
        if guess is None:
            return f"Unknown command /{name}; /help lists the commands"
        return f"Unknown command /{name}; did you mean /{guess}?"

    def _check_free(self, command: Command, taken: Iterable[str]) -> None:
        names = {key.lower() for key in taken}
        for key in (command.name, *command.aliases):
            if not key or key.startswith("/") or any(char.isspace() for char in key):
                raise ConfigError(f"{key!r} is not a command name; use one word without a slash")
            if key.lower() in names:
                raise ConfigError(f"/{key} is already a built-in command; give yours another name")

    def _enter(self, command: Command) -> None:
        for key in (command.name, *command.aliases):
            self._by_name[key.lower()] = command
