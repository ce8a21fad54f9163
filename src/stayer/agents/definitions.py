"""Custom agents: Markdown files with front matter (`.claude/agents/*.md`, `.stayer/agents/*.md`,
the user's, a plugin's `agents/`) and the `--agents` JSON, read into `AgentDefinition`s.

The file's body is the agent's whole system prompt. Of Claude Code's front-matter fields these
are read: `name` and `description` (both required), `tools`, `disallowedTools`, `model`
(`inherit` is the parent's), `permissionMode`, `maxTurns`, `skills`, `effort`, `isolation`
(`worktree`) and `background`. The rest are accepted and not acted on: `mcpServers`, `hooks`,
`memory` (Claude Code's persistent agent memory, not our memory files), `color` and
`initialPrompt`; unknown keys are ignored as Claude Code ignores them.

A file with a value we cannot use is left out whole with one problem line, rather than run
with a field dropped: a misspelt `permissionMode: plna` must not become the parent's mode.
A plugin's agent may not set `permissionMode` at all (a plugin does not choose how much its
agent may do unasked), so that field is dropped with a problem line. `--agents` is typed by
the user for this run: anything wrong in it is a `ConfigError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, get_args

from msgspec.structs import replace

from stayer.config.model import ModeName
from stayer.errors import ConfigError

from . import frontmatter, guard
from .builtin import BUILTIN_NAMES
from .model import AgentDefinition, Scope

EFFORTS = ("low", "medium", "high", "xhigh", "max")
MODES = get_args(ModeName)

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
"""Claude Code asks for lowercase letters and hyphens; published agents also use digits, dots
and underscores (`powershell-5.1-expert`), which harm nothing in a `subagent_type`."""


class BadValue(Exception):
    """A front-matter value that cannot be used; its text says what it must be."""


Reader = Callable[[object], object]
"""Turns one front-matter value into a record's field; raises `BadValue` saying what it must be."""


def names_field(value: object) -> tuple[str, ...]:
    """A list of tool names, rules or skill names."""
    names = frontmatter.as_names(value)
    if names is None:
        raise BadValue("must be a list of names (a YAML list, or one string of them)")
    return names


def model_field(value: object) -> str | None:
    """A model alias or id; `inherit` (None) means the parent's."""
    text = frontmatter.as_text(value)
    if not text:
        raise BadValue("must be a model alias (sonnet, opus, haiku), a model id, or inherit")
    return None if text == "inherit" else guard.one_line(text, guard.SHOWN_CAP)


def _mode(value: object) -> str:
    if value not in MODES:
        raise BadValue(f"must be one of {', '.join(MODES)}")
    return str(value)


def _max_turns(value: object) -> int:
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadValue("must be a whole number of turns, 1 or more")
    return value


def effort_field(value: object) -> str:
    """An effort level."""
    if value not in EFFORTS:
        raise BadValue(f"must be one of {', '.join(EFFORTS)}")
    return str(value)


def _isolation(value: object) -> Literal["worktree"]:
    if value != "worktree":
        raise BadValue("must be worktree (the only isolation stayer supports)")
    return "worktree"


def bool_field(value: object) -> bool:
    """A boolean, in any spelling `frontmatter.as_bool` takes."""
    flag = frontmatter.as_bool(value)
    if flag is None:
        raise BadValue("must be true or false")
    return flag


_READERS: dict[str, tuple[str, Reader]] = {
    "tools": ("tools", names_field),
    "disallowedTools": ("disallowed_tools", names_field),
    "model": ("model", model_field),
    "permissionMode": ("permission_mode", _mode),
    "maxTurns": ("max_turns", _max_turns),
    "skills": ("skills", names_field),
    "effort": ("effort", effort_field),
    "isolation": ("isolation", _isolation),
    "background": ("background", bool_field),
}
"""Front-matter key (Claude Code's spelling, also `--agents`'): the field it sets, its reader."""


def valid_name(name: str) -> bool:
    """Whether `name` may name an agent: lowercase letters, digits, `-`, `.` and `_`, or a
    built-in's own name (a file may replace `Explore`); never a `:`, which only a plugin's
    namespace adds."""
    return name in BUILTIN_NAMES or _NAME.fullmatch(name) is not None


def read_options(
    fields: Mapping[str, object], readers: Mapping[str, tuple[str, Reader]]
) -> dict[str, object]:
    """A record's optional fields from front matter, by `readers` (key: field name, reader);
    raises `BadValue` naming the key and its value."""
    options: dict[str, object] = {}
    for key, (attr, reader) in readers.items():
        if fields.get(key) is None:  # absent, or `key:` with nothing after it
            continue
        try:
            options[attr] = reader(fields[key])
        except BadValue as error:
            raise BadValue(f"`{key}: {guard.shown(fields[key])}` {error}") from None
    return options


def _identity(fields: Mapping[str, object]) -> tuple[str, str]:
    """The agent's `name` and `description`; raises `BadValue` for a missing or bad one."""
    name = frontmatter.as_text(fields.get("name"))
    if not name:
        raise BadValue("no `name` in its front matter; add one (the model calls the agent by it)")
    if not valid_name(name):
        raise BadValue(
            f"agent name `{guard.shown(name)}` may use only lowercase letters, digits, `-`, "
            "`.` and `_`; rename it"
        )
    description = frontmatter.as_text(fields.get("description"))
    if not description:
        raise BadValue(
            "no `description` in its front matter; add one (the model picks agents by it)"
        )
    return name, description


def read_agent_file(
    path: Path, *, scope: Scope, plugin: str | None = None, prefix: str = ""
) -> tuple[AgentDefinition | None, tuple[str, ...]]:
    """The agent a Markdown file defines (None when it cannot be used) and the problem lines.
    A plugin's agent is named `plugin:name` (`prefix` adds its subfolders: `plugin:sub:name`)."""
    parsed = frontmatter.read(path)
    if parsed.problem is not None:
        return None, (f"{path}: {parsed.problem}",)
    fields = dict(parsed.fields)
    problems = [f"{path}: {line}" for line in _adjusted(fields, plugin=plugin)]
    try:
        name, description = _identity(fields)
        options = read_options(fields, _READERS)
    except BadValue as error:
        return None, (*problems, f"{path}: {error}")
    if frontmatter.given(fields.get("hooks")):
        if options.get("tools") != ():  # it has tools whose guard would not run
            return None, (*problems, f"{path}: {_HOOKS_OUT}")
        problems.append(f"{path}: `hooks` is not supported by stayer; ignored (it has no tools)")
    if plugin is not None:
        name = f"{plugin}:{prefix}{name}"
    agent = AgentDefinition(
        name=name,
        description=guard.flat(description),
        prompt=guard.clean_body(parsed.body.strip()),
        scope=scope,
        source=str(path),
        plugin=plugin,
    )
    return replace(agent, **options), tuple(problems)


_HOOKS_OUT = (
    "`hooks` is not supported by stayer: the checks they make would not run while the agent "
    "uses its tools, so the agent is left out (move them into settings' hooks, or remove them)"
)


def _adjusted(fields: dict[str, object], *, plugin: str | None) -> list[str]:
    """Fields taken out or read otherwise before the file is read (changes `fields`), with a
    line for each: a plugin's `permissionMode`, and Claude Code's `auto` mode."""
    if plugin is not None and fields.pop("permissionMode", None) is not None:
        return [
            "`permissionMode` is ignored in a plugin's agent (a plugin does not choose what "
            "its agent may do unasked); the agent runs in its parent's mode"
        ]
    if fields.get("permissionMode") == "auto":
        fields["permissionMode"] = "default"
        return [
            "`permissionMode: auto` is Claude Code's classifier mode, which stayer does not "
            "have; read as `default` (asks as its parent would)"
        ]
    return []


def agents_from_json(given: str | Mapping[str, object]) -> tuple[AgentDefinition, ...]:
    """The agents `--agents` defines (JSON text or its parsed mapping); raises `ConfigError`
    with one line for anything wrong in it."""
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"--agents: not valid JSON ({error.msg} at character {error.pos}); pass an "
                'object such as {"reviewer": {"description": "...", "prompt": "..."}}'
            ) from None
        except guard.PARSE_ERRORS as error:  # a 5000-digit number, nesting too deep
            raise ConfigError(
                f"--agents: cannot be read ({type(error).__name__}: "
                f"{guard.shown(str(error))}); pass a plain JSON object of agents"
            ) from None
    if not isinstance(given, Mapping):
        raise ConfigError(
            "--agents: must be a JSON object of agent names to definitions, such as "
            '{"reviewer": {"description": "...", "prompt": "..."}}'
        )
    try:
        return tuple(_json_agent(str(name), entry) for name, entry in given.items())
    except guard.PARSE_ERRORS as error:  # a value too large or too deep to turn into text
        raise ConfigError(
            f"--agents: a value cannot be read ({type(error).__name__}); use plain text, "
            "names and small numbers"
        ) from None


def _json_agent(name: str, entry: object) -> AgentDefinition:
    """One `--agents` entry; raises `ConfigError` naming it."""
    where = f"--agents: agent `{guard.shown(name)}`"
    if not valid_name(name):
        raise ConfigError(
            f"{where}: use only lowercase letters, digits, `-`, `.` and `_` in its name"
        )
    if not isinstance(entry, Mapping):
        raise ConfigError(f'{where}: must be an object with "description" and "prompt"')
    description = frontmatter.as_text(entry.get("description"))
    prompt = entry.get("prompt")
    if not description or not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(f'{where}: needs a "description" and a "prompt" (both text)')
    try:
        options = read_options(entry, _READERS)
    except BadValue as error:
        raise ConfigError(guard.one_line(f"{where}: {error}")) from None
    agent = AgentDefinition(
        name=name, description=description, prompt=prompt.strip(), scope="flag", source="--agents"
    )
    return replace(agent, **options)
