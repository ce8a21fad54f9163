"""A skill's or command's body made ready for the model: its placeholders filled from the
arguments and the session, and its `!` shell commands found (the session runs them through the
permission policy; `fill` puts their output back where they stood).

Placeholders, as Claude Code reads them: `$ARGUMENTS` (everything typed after the name),
`$ARGUMENTS[N]` and `$N` (the Nth argument, from 0, split as a shell would; an unbalanced quote
falls back to splitting on spaces), `$name` for a name the front matter's `arguments`
declares, and `${CLAUDE_SESSION_ID}`, `${CLAUDE_PROJECT_DIR}`, `${CLAUDE_SKILL_DIR}`,
`${CLAUDE_PLUGIN_ROOT}`. A body with no argument placeholder gets the arguments appended, so
what the user typed is never lost.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

_PLACEHOLDER = re.compile(
    r"\$\{CLAUDE_(?P<var>SESSION_ID|PROJECT_DIR|SKILL_DIR|PLUGIN_ROOT)\}"
    r"|\$ARGUMENTS\[(?P<index>\d+)\]"
    r"|\$(?P<all>ARGUMENTS)(?![\w\[])"
    r"|\$(?P<number>\d+)(?!\w)"
    r"|\$(?P<name>[A-Za-z_][\w-]*)"
)

_INLINE = re.compile(r"(?:^|(?<=\s))!`(?P<command>[^`\n]+)`", re.MULTILINE)
_FENCED = re.compile(r"^```!\s*\n(?P<command>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def split_arguments(args: str) -> list[str]:
    """`args` split as a shell would (quotes group words); on an unbalanced quote, on spaces."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand(
    body: str,
    args: str,
    *,
    names: Sequence[str] = (),
    session_id: str,
    project_dir: Path,
    skill_dir: Path | None = None,
    plugin_root: Path | None = None,
) -> str:
    """`body` with its placeholders filled; the arguments appended when it has none for them."""
    words = split_arguments(args)
    variables = {
        "SESSION_ID": session_id,
        "PROJECT_DIR": str(project_dir),
        "SKILL_DIR": str(skill_dir) if skill_dir is not None else None,
        "PLUGIN_ROOT": str(plugin_root) if plugin_root is not None else None,
    }
    used_arguments = False

    def word(index: int) -> str:
        return words[index] if index < len(words) else ""

    def substitute(match: re.Match[str]) -> str:
        nonlocal used_arguments
        if match["var"] is not None:
            value = variables[match["var"]]
            return match[0] if value is None else value  # unknown here: left as written
        if match["name"] is not None:
            if match["name"] not in names:
                return match[0]  # `$HOME` in a shell example, not an argument
            used_arguments = True
            return word(list(names).index(match["name"]))
        used_arguments = True
        if match["all"] is not None:
            return args.strip()
        return word(int(match["index"] if match["index"] is not None else match["number"]))

    expanded = _PLACEHOLDER.sub(substitute, body)
    if not used_arguments and args.strip():
        expanded = f"{expanded.rstrip()}\n\nARGUMENTS: {args.strip()}"
    return expanded


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


def fill(body: str, spans: Sequence[ShellSpan], outputs: Sequence[str]) -> str:
    """`body` with each span replaced by its command's output (`outputs` in the same order)."""
    if len(spans) != len(outputs):
        raise ValueError(f"{len(spans)} shell commands but {len(outputs)} outputs")
    pieces: list[str] = []
    position = 0
    for span, output in zip(spans, outputs, strict=True):
        pieces += [body[position : span.start], output]
        position = span.end
    pieces.append(body[position:])
    return "".join(pieces)
