"""How permission rules see a command line: the simple commands a real parse finds in it.

Rules are judged per simple command (`stayer.exec.shell_syntax`), wherever it stands: in a list
or pipeline, in ``$(…)``, backticks, a subshell or process substitution. So
``echo "$(git rev-parse HEAD)"`` is covered by rules for ``echo`` and ``git rev-parse``, while
``git status && rm -rf x`` needs a rule for ``rm`` too.

Allow rules must cover every command as it is written (a rule for ``git status`` also stands for
``timeout 5 git status``, whose wrapper changes only how it runs; not for ``sudo git status``).
Deny rules need to hit only one form of one command: as written, without its assignments, with
its program named without a directory, or as a wrapper (``env``, ``xargs``, ``find -exec``) runs
it.

Two things take a command line out of reach of pattern allow rules. What the parse cannot see
through (an expansion as a command name, ``eval``, a shell given code) makes it opaque: only a
rule for the whole tool allows it, and every deny rule of the tool with a pattern denies it. A
redirection that writes a file (``> out``, ``>> log``, ``&> f``) makes it a write whose target no
command rule speaks for: a rule for the whole tool allows it, or one naming exactly this command
line (``Bash(make > build.log)``), since a pattern such as ``echo:*`` was not written to let
``echo`` overwrite files. Failing closed is the point.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from stayer.exec.shell_syntax import SimpleCommand, parse


@dataclass(frozen=True, slots=True)
class CommandForms:
    """A command line as allow and deny rules see it."""

    allow: tuple[tuple[str, ...], ...] | None
    """Per simple command as written, the forms any one of which an allow rule must match;
    None when no pattern rule may allow the line (see `exact`)."""
    deny: tuple[str, ...] | None
    """Every form a deny rule is matched against; None when the line is opaque, so any deny
    rule with a pattern hits it."""
    exact: bool = False
    """Whether a rule naming exactly this command line allows it (a clear line that writes)."""


def command_forms(command: str) -> CommandForms:
    """What allow and deny rules match for `command`."""
    parsed = parse(command)
    if parsed.opaque:
        return CommandForms(allow=None, deny=None)
    deny = [command]
    for simple in parsed.every_command():
        deny += _deny_forms(simple)
    if parsed.writes:
        return CommandForms(allow=None, deny=tuple(deny), exact=True)
    allow = tuple(tuple(_allow_forms(simple)) for simple in parsed.commands)
    return CommandForms(allow=allow, deny=tuple(deny))


def _allow_forms(command: SimpleCommand) -> list[str]:
    """The command as written, and what a wrapper that changes only how it runs runs."""
    forms = [command.line]
    if command.transparent and len(command.runs) == 1 and not command.assignments:
        forms += _allow_forms(command.runs[0])
    return forms


def _deny_forms(command: SimpleCommand) -> list[str]:
    """The command as written, without its assignments, and with its program's directory
    dropped (``/bin/rm x`` is ``rm x``)."""
    argv = command.argv
    if not argv:
        return [command.line] if command.line else []
    bare = " ".join((os.path.basename(argv[0]), *argv[1:]))
    return list(dict.fromkeys((command.line, " ".join(argv), bare)))
