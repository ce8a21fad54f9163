"""A skill's or command's body made ready for the model: its placeholders filled from the
arguments and the session, and its `!` shell commands found (the session runs them through the
permission policy; `Rendered.fill` puts their output back where they stood).

Placeholders, as Claude Code reads them: `$ARGUMENTS` (everything typed after the name),
`$ARGUMENTS[N]` and `$N` (the Nth argument, from 0, split as a shell would; an unbalanced quote
falls back to splitting on spaces), `$name` for a name the front matter's `arguments`
declares, and `${CLAUDE_SESSION_ID}`, `${CLAUDE_PROJECT_DIR}`, `${CLAUDE_SKILL_DIR}`,
`${CLAUDE_PLUGIN_ROOT}`. A body with no argument placeholder gets the arguments appended, so
what the user typed is never lost.

`render` is the safe way: the commands are found in the body as written, so an argument can
never become one, and an argument inside a command is quoted for where it stands, bare, in
single or in double quotes (`shell_context`; there `$N` is the shell's own and left alone).
It is the only way in: nothing here fills a body without finding its commands first.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from .shell_context import Unquotable, places, quoted

_FIXED = (
    r"\$\{CLAUDE_(?P<var>SESSION_ID|PROJECT_DIR|SKILL_DIR|PLUGIN_ROOT)\}"
    r"|\$ARGUMENTS\[(?P<index>\d+)\]"
    r"|\$(?P<all>ARGUMENTS)(?![\w\[])"
)
_NUMBER = r"|\$(?P<number>\d+)(?!\w)"

_INLINE = re.compile(r"(?:^|(?<=\s))!`(?P<command>[^`\n]+)`", re.MULTILINE)
_FENCED = re.compile(r"^```!\s*\n(?P<command>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _pattern(names: Sequence[str], *, numbers: bool) -> re.Pattern[str]:
    """The placeholders to fill: `$N` only outside commands (in a command it is the shell's
    own, as in `awk '{print $1}'`), `$name` only for a declared name not followed by more of
    a name (`$env` declared leaves `$env-specific` alone)."""
    pattern = _FIXED + (_NUMBER if numbers else "")
    if names:
        declared = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        pattern += rf"|\$(?P<name>{declared})(?![\w-])"
    return re.compile(pattern)


def split_arguments(args: str) -> list[str]:
    """`args` split as a shell would (quotes group words); on an unbalanced quote, on spaces."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


class _Filler:
    """Fills placeholders in pieces of one body, remembering whether any took the arguments."""

    def __init__(
        self, args: str, names: Sequence[str], variables: Mapping[str, str | None]
    ) -> None:
        self.args = args
        self.words = split_arguments(args)
        self.names = list(names)
        self.variables = variables
        self.used = False
        self.outside = _pattern(names, numbers=True)
        self.inside = _pattern(names, numbers=False)

    def text(self, piece: str) -> str:
        """`piece` with its placeholders filled as typed."""
        return self.outside.sub(lambda match: _written(match, self._value(match)), piece)

    def command(self, piece: str) -> str:
        """A shell command with its placeholders filled, each value quoted for where it
        stands (`shell_context`); raises `Unquotable` for a value it cannot place safely."""
        matches = list(self.inside.finditer(piece))
        where = places(piece, [match.span() for match in matches])
        filled: list[str] = []
        position = 0
        for match, place in zip(matches, where, strict=True):
            value = self._value(match)
            try:
                written = match[0] if value is None else quoted(value, place)
            except Unquotable:
                raise Unquotable(
                    f"{match[0]} in `{_line(piece, match.start())}` stands where no quoting"
                    " keeps its value text"
                    " (after a backquote, here-document, ${…}, arithmetic, case or comment)"
                ) from None
            filled += [piece[position : match.start()], written]
            position = match.end()
        return "".join([*filled, piece[position:]])

    def _value(self, match: re.Match[str]) -> str | None:
        """The placeholder's value; None for a variable unknown here (left as written)."""
        if match["var"] is not None:
            return self.variables[match["var"]]
        self.used = True
        return self._argument(match)

    def _argument(self, match: re.Match[str]) -> str:
        found = match.groupdict()  # `name` and `number` are not in every pattern
        if found["all"] is not None:
            return self.args.strip()
        if found.get("name") is not None:
            index = self.names.index(found["name"])
        else:
            index = int(found["index"] if found["index"] is not None else found["number"])
        return self.words[index] if index < len(self.words) else ""


def _line(text: str, at: int) -> str:
    """The line of `text` that `at` is on (an error names one line of a fenced block)."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : None if end < 0 else end]


def _written(match: re.Match[str], value: str | None) -> str:
    return match[0] if value is None else value


def _variables(
    session_id: str, project_dir: Path, skill_dir: Path | None, plugin_root: Path | None
) -> dict[str, str | None]:
    return {
        "SESSION_ID": session_id,
        "PROJECT_DIR": str(project_dir),
        "SKILL_DIR": str(skill_dir) if skill_dir is not None else None,
        "PLUGIN_ROOT": str(plugin_root) if plugin_root is not None else None,
    }


def _appended(text: str, args: str, filler: _Filler) -> str:
    """What the user typed after the text, when no placeholder took it (never lost)."""
    if filler.used or not args.strip():
        return text
    return f"{text.rstrip()}\n\nARGUMENTS: {args.strip()}"


class Rendered(Struct, frozen=True, kw_only=True):
    """A body ready for the model once its commands have run: `text` is the body with the
    placeholders filled outside the commands and each command left as written; `commands`
    are the commands to run (through the permission policy), their placeholders filled with
    shell-quoted values. `fill` puts the outputs in the commands' places."""

    text: str
    commands: tuple[str, ...]
    written: tuple[str, ...]
    """The commands as the body writes them (placeholders unfilled), same order."""
    pieces: tuple[str, ...]
    """The text between the commands (one more than `commands`), filled."""

    def fill(self, outputs: Sequence[str]) -> str:
        """The body with each command's output (same order as `commands`) in its place."""
        if len(outputs) != len(self.commands):
            raise ValueError(f"{len(self.commands)} shell commands but {len(outputs)} outputs")
        joined = [self.pieces[0]]
        for output, piece in zip(outputs, self.pieces[1:], strict=True):
            joined += [output, piece]
        return "".join(joined)


def render(
    body: str,
    args: str,
    *,
    names: Sequence[str] = (),
    session_id: str,
    project_dir: Path,
    skill_dir: Path | None = None,
    plugin_root: Path | None = None,
) -> Rendered:
    """`body` split at its `!` commands (found before anything is filled, so an argument
    that reads ``!`cat ~/.ssh/id_rsa` `` stays text), the text filled as typed, the commands
    filled with quoted values; the arguments appended when nothing took them. Raises
    `Unquotable` (one line) for a placeholder in a command where no quoting is safe."""
    filler = _Filler(args, names, _variables(session_id, project_dir, skill_dir, plugin_root))
    spans = shell_commands(body)
    pieces: list[str] = []
    commands: list[str] = []
    position = 0
    for span in spans:
        pieces.append(filler.text(body[position : span.start]))
        commands.append(filler.command(span.command))
        position = span.end
    pieces.append(filler.text(body[position:]))
    pieces[-1] = _appended(pieces[-1], args, filler)
    written = [body[span.start : span.end] for span in spans]
    text = "".join(p for pair in zip(pieces, [*written, ""], strict=True) for p in pair)
    return Rendered(
        text=text,
        commands=tuple(commands),
        written=tuple(span.command for span in spans),
        pieces=tuple(pieces),
    )


class ShellSpan(Struct, frozen=True):
    """A shell command in a body: where it stands (`start`, `end`, the whole ``!`...` `` or
    fenced block) and the command to run."""

    start: int
    end: int
    command: str


def shell_commands(body: str) -> tuple[ShellSpan, ...]:
    """The ``!`command` `` spans (at a line's start or after a space) and ```` ```! ````
    blocks in `body`, in order."""
    fenced = [
        ShellSpan(m.start(), m.end(), m["command"].rstrip("\n")) for m in _FENCED.finditer(body)
    ]
    inline = [
        ShellSpan(m.start(), m.end(), m["command"])
        for m in _INLINE.finditer(body)
        if not any(block.start <= m.start() < block.end for block in fenced)
    ]
    return tuple(sorted([*fenced, *inline], key=lambda span: span.start))
