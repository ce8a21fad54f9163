"""Skills (a folder with a `SKILL.md`) and custom commands (a Markdown file), read into `Skill`s.

Both run as `/name args`. A skill's name is its folder's, a command's its file's stem; the
front matter's `name` is only a label for them, as in Claude Code, except in a plugin, where
it replaces the folder's name after the plugin's (`plugin:name`). Front-matter fields read:
`description` (when missing, the body's first non-empty line stands in, as Claude Code does),
`when_to_use`, `argument-hint`, `arguments`, `allowed-tools`, `disallowed-tools`, `model`,
`effort`, `disable-model-invocation`, `user-invocable`, `context` (`fork`), `agent` and
`background`. Claude Code's `paths`, `license`, `compatibility` and `metadata` are not acted
on. A skill with `hooks`, or a `shell` other than bash, is left out with a problem line: it
would run without what its author counted on. A file with a value we cannot use is left out
with one problem line.

Only `SKILL.md` and the command file are read here: a skill's supporting files are for the
model to open when the body points at them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from msgspec.structs import replace

from . import frontmatter, guard
from .definitions import (
    BadValue,
    Reader,
    bool_field,
    effort_field,
    model_field,
    names_field,
    read_options,
)
from .model import Scope, Skill

SKILL_FILE = "SKILL.md"
DESCRIPTION_CAP = 250
"""How much of the body's first line stands in for a missing description."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _text(value: object) -> str:
    text = frontmatter.as_text(value)
    if text is None:
        raise BadValue("must be text")
    return text


def _hint(value: object) -> str:
    # YAML reads Claude Code's own `argument-hint: [message]` as a list of one
    if isinstance(value, list):
        return " ".join(f"[{frontmatter.as_text(item)}]" for item in value)
    return _text(value)


def _context(value: object) -> Literal["fork"]:
    if value != "fork":
        raise BadValue("must be fork (the only other context is the default, inline)")
    return "fork"


_READERS: dict[str, tuple[str, Reader]] = {
    "when_to_use": ("when_to_use", _text),
    "argument-hint": ("argument_hint", _hint),
    "arguments": ("arguments", names_field),
    "allowed-tools": ("allowed_tools", names_field),
    "disallowed-tools": ("disallowed_tools", names_field),
    "model": ("model", model_field),
    "effort": ("effort", effort_field),
    "disable-model-invocation": ("disable_model_invocation", bool_field),
    "user-invocable": ("user_invocable", bool_field),
    "context": ("context", _context),
    "agent": ("agent", _text),
    "background": ("background", bool_field),
}
"""Front-matter key (Claude Code's spelling): the field it sets, its reader."""


def skill_folders(root: Path, problems: list[str]) -> tuple[Path, ...]:
    """The skill folders directly under `root` (each with a `SKILL.md` entry, which the
    reader then checks is a file), by name; at most `guard.MAX_ENTRIES` are looked at."""
    entries = sorted(root.iterdir())
    if len(entries) > guard.MAX_ENTRIES:
        problems.append(
            f"{root}: more than {guard.MAX_ENTRIES} entries; only the first are read (keep "
            "definition folders small)"
        )
        entries = entries[: guard.MAX_ENTRIES]
    return tuple(
        folder for folder in entries if folder.is_dir() and os.path.lexists(folder / SKILL_FILE)
    )


def read_skill(
    folder: Path, *, scope: Scope, plugin: str | None = None
) -> tuple[Skill | None, str | None]:
    """The skill in `folder` (None when it cannot be used) and the problem line, if any."""
    return _read(folder / SKILL_FILE, folder.name, "skill", scope=scope, plugin=plugin)


def read_command(
    path: Path, *, scope: Scope, plugin: str | None = None, prefix: tuple[str, ...] = ()
) -> tuple[Skill | None, str | None]:
    """The command a Markdown file defines (None when it cannot be used) and the problem line.
    In a plugin, a command in a subfolder is named by it too: `plugin:sub:name`."""
    name = ":".join([*prefix, path.stem]) if plugin is not None else path.stem
    return _read(path, name, "command", scope=scope, plugin=plugin)


_UNSUPPORTED = {
    "hooks": "`hooks` is not supported by stayer: the skill's hooks would not run, so the "
    "skill is left out (move its checks into settings' hooks)",
}


def _unsupported(fields: Mapping[str, object], kind: str) -> str | None:
    """Why a skill is left out for a field stayer cannot honour yet, if it is."""
    if kind == "skill" and frontmatter.given(fields.get("hooks")):
        return _UNSUPPORTED["hooks"]
    shell = frontmatter.as_text(fields.get("shell"))
    if shell is not None and shell.lower() not in ("", "bash", "sh"):
        return (
            f"`shell: {guard.shown(shell)}` is not supported by stayer (its `!` commands run "
            "in bash); the skill is left out"
        )
    return None


def _read(
    path: Path,
    name: str,
    kind: Literal["skill", "command"],
    *,
    scope: Scope,
    plugin: str | None,
) -> tuple[Skill | None, str | None]:
    parsed = frontmatter.read(path)
    if parsed.problem is not None:
        return None, f"{path}: {parsed.problem}"
    fields = parsed.fields
    label = frontmatter.as_text(fields.get("name"))
    if plugin is not None and kind == "skill" and label:
        name = label
    parts = name.split(":") if kind == "command" else [name]  # a plugin's `sub:` prefix
    if any(_NAME.fullmatch(part) is None for part in parts):
        return None, (
            f"{path}: `{guard.shown(name)}` cannot be a command name (use letters, digits, "
            "`-`, `_` or `.`, starting with a letter or digit); rename it"
        )
    unsupported = _unsupported(fields, kind)
    if unsupported is not None:
        return None, f"{path}: {unsupported}"
    try:
        description = _description(fields, parsed.body)
        options = read_options(fields, _READERS)
    except BadValue as error:
        return None, f"{path}: {error}"
    skill = Skill(
        name=f"{plugin}:{name}" if plugin is not None else name,
        description=guard.flat(description),
        body=guard.clean_body(parsed.body),
        kind=kind,
        scope=scope,
        source=path,
        base_dir=path.parent,
        plugin=plugin,
    )
    return replace(skill, **_flattened(options)), None


def _flattened(options: dict[str, object]) -> dict[str, object]:
    """The text options (`when_to_use`, `argument_hint`, `agent`) on one clean line."""
    return {k: guard.flat(v) if isinstance(v, str) else v for k, v in options.items()}


def _description(fields: Mapping[str, object], body: str) -> str:
    """The front matter's description, else the body's first non-empty line (capped)."""
    given = fields.get("description")
    if given is not None:
        try:
            return _text(given)
        except BadValue:
            raise BadValue(f"`description: {guard.shown(given)}` must be text") from None
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    line = line.lstrip("#").strip()
    return line if len(line) <= DESCRIPTION_CAP else line[: DESCRIPTION_CAP - 1] + "…"
