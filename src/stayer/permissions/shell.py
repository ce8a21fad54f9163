"""How permission rules see a command line: the simple commands a real parse finds in it.

Rules are judged per simple command (`stayer.exec.shell_syntax`), wherever it stands: in a list
or pipeline, in ``$(…)``, backticks, a subshell or process substitution. So
``echo "$(git rev-parse HEAD)"`` is covered by rules for ``echo`` and ``git rev-parse``, while
``git status && rm -rf x`` needs a rule for ``rm`` too.

Allow rules must cover every command as it is written (a rule for ``git status`` also stands for
``timeout 5 git status``, whose wrapper changes only how it runs; not for ``sudo git status``).

Deny rules need to hit only one place where their program could run, and they fail closed:

- every command as written, without its assignments, with its program named without a
  directory, and as each wrapper runs it (``env``, ``timeout``, ``xargs``, ``find -exec``, with
  their options read as the programs read them);
- when the line is not read-only, every place the program is named among the words of any of
  its commands (``setsid curl …``, ``git -c alias.x='!curl …' x``, ``cp /usr/bin/curl c; ./c``):
  a program the table does not know may run its arguments, or a copy of the program made in
  the same line;
- a line whose words do not show what runs (an expansion as a command name, an option a
  wrapper's table does not know) or which runs code they do not show (``python -c``, ``sh -c``,
  ``eval``, a program given more arguments from input that could make it run one) is hit by
  every deny rule of the tool that has a pattern.

A redirection that writes a file (``> out``, ``>> log``, ``&> f``) makes the line a write whose
target no command rule speaks for: a rule for the whole tool allows it, or one naming exactly
this command line (``Bash(make > build.log)``), since a pattern such as ``echo:*`` was not
written to let ``echo`` overwrite files. Failing closed is the point.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:  # the parser loads with the first command judged, not at start-up
    from stayer.exec.shell_syntax import Parsed, SimpleCommand


class CommandForms(Struct, frozen=True):
    """A command line as allow and deny rules see it."""

    allow: tuple[tuple[str, ...], ...] | None
    """Per simple command as written, the forms any one of which an allow rule must match;
    None when no pattern rule may allow the line (see `exact`)."""
    deny: tuple[str, ...] | None
    """Every form a deny rule is matched against; None when the line may run what its words
    do not show, so any deny rule with a pattern hits it."""
    exact: bool = False
    """Whether a rule naming exactly this command line allows it (a clear line that writes)."""
    mentions: tuple[tuple[str, ...], ...] = ()
    """For a line that is not read-only, the words of each command split into names: a deny
    rule also hits where its program is named among them (`mentioned`)."""


def command_forms(command: str) -> CommandForms:
    """What allow and deny rules match for `command`."""
    # The parser and the command tables load with the first command, not at start-up.
    from stayer.exec.readers import line_judgement
    from stayer.exec.shell_syntax import parse

    parsed = parse(command)
    if parsed.opaque:
        return CommandForms(allow=None, deny=None)
    deny: tuple[str, ...] | None = None
    mentions: tuple[tuple[str, ...], ...] = ()
    if not parsed.code and not _fed_runner(parsed):
        forms = [command]
        for simple in parsed.every_command():
            forms += _deny_forms(simple)
        deny = tuple(dict.fromkeys(forms))
        if line_judgement(parsed) is not None:
            mentions = _mentions(parsed)
    if parsed.writes:
        return CommandForms(allow=None, deny=deny, exact=True, mentions=mentions)
    allow = tuple(tuple(_allow_forms(simple)) for simple in parsed.commands)
    return CommandForms(allow=allow, deny=deny, mentions=mentions)


def _fed_runner(parsed: Parsed) -> bool:
    """Whether a command given more arguments from input could be made to run a program by
    them (``xargs find .`` reading ``-exec curl …``)."""
    from stayer.exec.hidden_runs import fed_may_run

    return any(c.fed and fed_may_run(c) for c in parsed.every_command())


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


_BOUNDARY = re.compile(r"[\s=!;|&(){}`'\",<>@:]+")
"""What separates one name from the next inside a word: a program named in an option's value
(``--pre=curl``), a config value (``alias.x=!curl``), a code string (``-c 'curl x'``)."""


def _mentions(parsed: Parsed) -> tuple[tuple[str, ...], ...]:
    """Each command's words, and each word's parts, as runs of names."""
    runs: list[tuple[str, ...]] = []
    for command in parsed.every_command():
        runs.append(command.argv)
        for word in command.argv:
            parts = tuple(part for part in _BOUNDARY.split(word) if part)
            if len(parts) > 1 or (parts and parts[0] != word):
                runs.append(parts)
    return tuple(runs)


MENTION_SPAN = 64
"""Words after a mention that a deny rule's pattern is matched against."""


def mentioned_forms(mentions: tuple[tuple[str, ...], ...], head: str) -> list[str]:
    """The command lines that begin where `head` (a program's name) is named in `mentions`,
    the name without its directory, each up to `MENTION_SPAN` words."""
    forms: list[str] = []
    for run in mentions:
        for index, name in enumerate(run):
            if os.path.basename(name).casefold() == head.casefold():
                forms.append(" ".join((head, *run[index + 1 : index + 1 + MENTION_SPAN])))
    return forms
