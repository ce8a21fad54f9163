"""A Markdown file's YAML front matter: the mapping between `---` fences and the body after it,
and the readers that turn its loosely typed values into what the records hold.

PyYAML is imported only here, and only when a file opens with a fence, so a project without
agents, skills or commands never pays for it. Many published files are not valid YAML (Claude
Code's own plugins write a description over several unindented lines, with `user:` lines in
its examples), and Claude Code reads them; so a block YAML refuses is read again line by line,
a known key starting each field (`KNOWN_KEYS`). A block neither way can read, or one that is
not a mapping, becomes one problem line: the caller names the file and leaves it out.

Claude Code is lenient about values and so are we: a boolean may be written `yes`, `no`, `on`,
`off`, `1` or `0`; a list (`tools`, `allowed-tools`, ...) may be a YAML list or one string of
names separated by commas or spaces, where a rule such as `Bash(git add *)` keeps its spaces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct

from . import guard

BOM = "\ufeff"
FENCE = "---"

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class Parsed(Struct, frozen=True, kw_only=True):
    """A file split in two: its front matter (empty when it has none) and its body; `problem`
    says, without the file's name, why the front matter could not be read (then `fields` is
    empty and the caller leaves the file out)."""

    fields: Mapping[str, object]
    body: str
    problem: str | None = None


def parse(text: str) -> Parsed:
    """Split `text` into front matter and body (a UTF-8 BOM and Windows line ends allowed)."""
    text = text.removeprefix(BOM).replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != FENCE:
        return Parsed(fields={}, body=text)
    close = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == FENCE), None)
    if close is None:
        return Parsed(
            fields={},
            body=text,
            problem="its front matter opens with `---` but never closes; end it with a `---` line",
        )
    block = "\n".join(lines[1:close])
    body = "\n".join(lines[close + 1 :]).lstrip("\n")
    loaded, problem = _load_yaml(block)
    if problem is not None:
        plain = _plain_lines(block)
        if plain is None:
            return Parsed(fields={}, body=body, problem=problem)
        loaded = plain
    if loaded is None:  # fences with nothing (or only comments) between them
        return Parsed(fields={}, body=body)
    if not isinstance(loaded, dict):
        return Parsed(
            fields={},
            body=body,
            problem="its front matter is not a mapping of `key: value` lines; write it as one",
        )
    fields = {str(key): _capped(value) for key, value in loaded.items()}
    return Parsed(fields=fields, body=body)


def _capped(value: object) -> object:
    """A text value cut to `guard.FIELD_CAP` characters (nobody writes a longer description;
    a file that does is not let fill the model's context with it)."""
    return guard.cut(value, guard.FIELD_CAP) if isinstance(value, str) else value


def read(path: Path) -> Parsed:
    """`parse` a file's text; a file that cannot be read, decoded or parsed is a problem, not
    an error."""
    try:
        return parse(guard.read_text(path))
    except guard.Unreadable as error:
        return Parsed(fields={}, body="", problem=str(error))
    except guard.PARSE_ERRORS as error:
        return Parsed(fields={}, body="", problem=_failure(error))


def _failure(error: BaseException) -> str:
    return f"cannot be read ({type(error).__name__}: {guard.shown(str(error))}); fix it"


def _load_yaml(block: str) -> tuple[Any, str | None]:
    """The YAML block's value, or why it is not valid YAML (one line)."""
    import yaml  # only files with front matter need it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C one when libyaml is there
    try:
        return yaml.load(block, Loader=loader), None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +2: the fence, 1-based
        what = guard.shown(getattr(error, "problem", None) or "cannot be parsed")
        return None, f"its front matter is not valid YAML{where} ({what}); fix or quote the value"
    except guard.PARSE_ERRORS as error:  # PyYAML's constructors: `!!int abc`, 2024-02-30
        what = guard.shown(str(error))
        return None, f"its front matter has a value YAML cannot build ({what}); fix or quote it"


_KEY_LINE = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(.*))?")
_ITEM_LINE = re.compile(r"\s*-\s+(.*)")

KNOWN_KEYS = frozenset(
    {
        # a subagent's
        "name", "description", "tools", "disallowedTools", "model", "permissionMode",
        "maxTurns", "skills", "mcpServers", "hooks", "memory", "background", "effort",
        "isolation", "color", "initialPrompt",
        # a skill's or command's
        "when_to_use", "argument-hint", "arguments", "allowed-tools", "disallowed-tools",
        "disable-model-invocation", "user-invocable", "context", "agent", "paths", "shell",
        "license", "compatibility", "metadata", "version",
    }
)  # fmt: skip
"""The keys Claude Code's agent, skill and command files use: when YAML refuses a block, a
line starting with one of these starts a field, and any other line continues the one before."""


def _plain_lines(block: str) -> dict[str, object] | None:
    """The block read the forgiving way, for what YAML refuses but a person plainly meant and
    Claude Code accepts: a description running over several unindented lines (with `user:`
    and `assistant:` lines of its examples in it), `argument-hint: [pr-number] [priority]`,
    `description: Use when: the tests fail`. Each field's value is read as YAML when it can
    be, else kept as text. None when the block does not start with a field."""
    raw: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in block.split("\n"):
        match = _KEY_LINE.fullmatch(line)
        if match is not None and (match.group(1) in KNOWN_KEYS or current is None):
            current = raw[match.group(1)] = [match.group(2) or ""]
        elif current is not None:
            current.append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            return None
    return {key: _plain_value(lines) for key, lines in raw.items()}


def _plain_value(lines: list[str]) -> object:
    """One field's lines as a value: a `- item` list, a YAML scalar or list, else the text."""
    first, rest = lines[0].strip(), [line for line in lines[1:] if line.strip()]
    items = [_ITEM_LINE.fullmatch(line) for line in rest]
    if not first and rest and all(items):
        return [item.group(1).strip() for item in items if item is not None]
    text = "\n".join([first, *lines[1:]]).strip()
    if not text:
        return None
    if not rest:
        value, problem = _load_yaml(text)
        if problem is None and isinstance(value, (str, bool, int, float, list)):
            return value
    return text


def given(value: object) -> bool:
    """Whether a field says anything: `hooks: {}` (or `[]`, or nothing, also as the text the
    line-by-line reading keeps) has nothing to act on."""
    return value not in (None, "", "{}", "[]") and value != {} and value != []


def as_bool(value: object) -> bool | None:
    """A boolean from `true`/`false` or a string Claude Code takes for one; None if neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def as_text(value: object) -> str | None:
    """A scalar as text (YAML reads `3.5` or `2024-01-01` as other types); None for a list,
    a mapping or nothing."""
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def as_names(value: object) -> tuple[str, ...] | None:
    """A list of names or rules from a YAML list or one string (`Read, Grep`, `Read Grep`,
    `Bash(git add *) Read`); None when the value is neither."""
    if isinstance(value, str):
        return split_names(value)
    if isinstance(value, list):
        names: list[str] = []
        for item in value:
            text = as_text(item)
            if text is None:
                return None
            names.extend(split_names(text))
        return tuple(names)
    return None


def split_names(text: str) -> tuple[str, ...]:
    """Split on commas and whitespace outside parentheses: a rule's specifier keeps its spaces."""
    names: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and (char == "," or char.isspace()):
            names.append("".join(current))
            current = []
            continue
        current.append(char)
    names.append("".join(current))
    return tuple(name for name in names if name)
