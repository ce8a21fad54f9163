"""Which settings files a run reads, in what order, and how they combine.

Levels, later overriding earlier: user (`~/.claude/settings.json`, moved by `CLAUDE_CONFIG_DIR`,
then `~/.stayer/settings.json`, moved by `STAYER_CONFIG_DIR`), project (`.claude/settings.json`
then `.stayer/settings.json`), local (`.claude/settings.local.json` then
`.stayer/settings.local.json`), then `--settings` (a file, or an inline JSON object). Within a
level Claude Code's file comes first, so stayer's own wins. `--setting-sources` picks the file
levels read; `--settings` always applies.

The project is the working directory itself, as in Claude Code: it reads `.claude/` where it
was started and does not walk up to the repository root (its maintainers call that intended,
anthropics/claude-code#86187), so a project set up for Claude Code gets the same settings here
from the same place.

Scalars (`model`, `permissions.defaultMode`, …) take the last source's value, `env` merges key by
key, and permission rules, additional directories and hooks are collected from every source
(deny wins when a call is decided). Each rule remembers its file, because a rule path starting
with a single `/` is relative to the folder the settings folder sits in.

`.claude/` files are skipped when `STAYER_NO_CLAUDE_SETTINGS` is on or a stayer source says
`"readClaudeSettings": false`. A file that is not JSON, cannot be read or holds a known key with a
wrong type is reported in one line (file:line:col) and the run goes on with the rest; a missing
file is silent. A broken `--settings` stops the run instead: it was given for this run, and
running under other rules than asked would be worse than not running.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

from stayer.errors import ConfigError
from stayer.switches import env_flag

from .dirs import claude_config_dir, config_root
from .model import HookMatcher, Settings
from .parse import Parsed, parse_document

Level = Literal["user", "project", "local"]
LEVELS: tuple[Level, ...] = get_args(Level)
Kind = Literal["claude", "stayer", "flag"]
RuleKind = Literal["allow", "ask", "deny"]
FlagSettings = str | Path | Mapping[str, Any]
"""`--settings`: a path, an inline JSON object (text starting with `{`), or a mapping."""

NO_CLAUDE_SWITCH = "STAYER_NO_CLAUDE_SETTINGS"


@dataclass(frozen=True, slots=True)
class SourceRule:
    """A permission rule and where it was written: `origin` (the file, or `--settings`), its
    line, and `root`, the folder a `/path` specifier is relative to."""

    text: str
    origin: str
    root: Path
    line: int


@dataclass(frozen=True, slots=True)
class SourceDir:
    """A directory from `permissions.additionalDirectories`, relative to `root`."""

    text: str
    origin: str
    root: Path
    line: int


@dataclass(frozen=True, slots=True)
class Source:
    """One settings document that was found: its settings (None when unusable) and problems."""

    level: Level | Literal["flag"]
    kind: Kind
    origin: str
    root: Path
    settings: Settings | None
    warnings: tuple[str, ...]
    rules: Mapping[RuleKind, tuple[SourceRule, ...]]
    directories: tuple[SourceDir, ...]


@dataclass(frozen=True, slots=True)
class Loaded:
    """The merged settings of a run, the rules with their sources, and what went wrong."""

    settings: Settings
    allow: tuple[SourceRule, ...] = ()
    ask: tuple[SourceRule, ...] = ()
    deny: tuple[SourceRule, ...] = ()
    directories: tuple[SourceDir, ...] = ()
    sources: tuple[Source, ...] = ()
    """Every document found, in the order applied."""
    warnings: tuple[str, ...] = ()
    """One line each, for standard error or the init line."""


def parse_levels(value: str | Sequence[str] | None) -> tuple[Level, ...]:
    """`--setting-sources` (`user,project,local`; empty: none of them); None means all."""
    if value is None:
        return LEVELS
    items = (
        value.split(",")
        if isinstance(value, str)
        else [part for v in value for part in v.split(",")]
    )
    levels: list[Level] = []
    for item in (part.strip() for part in items):
        if not item:
            continue
        if item not in LEVELS:
            raise ConfigError(
                f"--setting-sources: unknown source {item!r}; use user, project and/or local, "
                "comma-separated"
            )
        levels.append(item)
    return tuple(dict.fromkeys(levels))


def load_settings(
    cwd: Path,
    env: Mapping[str, str],
    *,
    flag_settings: FlagSettings | None = None,
    sources: Sequence[Level] = LEVELS,
) -> Loaded:
    """Read and merge the settings for a run in `cwd`; raises `ConfigError` only for a broken
    `flag_settings`."""
    flag = _flag_source(flag_settings, cwd)
    found = [
        source
        for level, kind, path, root in _candidates(cwd, env, sources)
        if (source := _file_source(level, kind, path, root)) is not None
    ]
    if not _reads_claude(env, [*found, *([flag] if flag else [])]):
        found = [source for source in found if source.kind != "claude"]
    if flag is not None:
        found.append(flag)
    return merge(found)


def _candidates(
    cwd: Path, env: Mapping[str, str], levels: Sequence[Level]
) -> list[tuple[Level, Kind, Path, Path]]:
    """Each file a level may have, with the folder its `/path` rules start from: the folder the
    settings folder sits in (home for `~/.claude`, the project for `.claude/`)."""
    folders: dict[Level, tuple[tuple[Kind, Path, str], ...]] = {
        "user": (
            ("claude", claude_config_dir(env), "settings.json"),
            ("stayer", config_root(env), "settings.json"),
        ),
        "project": (
            ("claude", cwd / ".claude", "settings.json"),
            ("stayer", cwd / ".stayer", "settings.json"),
        ),
        "local": (
            ("claude", cwd / ".claude", "settings.local.json"),
            ("stayer", cwd / ".stayer", "settings.local.json"),
        ),
    }
    return [
        (level, kind, folder / name, folder.parent)
        for level in LEVELS
        if level in levels
        for kind, folder, name in folders[level]
    ]


def _reads_claude(env: Mapping[str, str], found: Sequence[Source]) -> bool:
    """Off with the switch, or when the last stayer source that says so says false."""
    if env_flag(env, NO_CLAUDE_SWITCH):
        return False
    said = [
        source.settings.read_claude_settings
        for source in found
        if source.kind != "claude"
        and source.settings is not None
        and source.settings.read_claude_settings is not None
    ]
    return said[-1] if said else True


def _file_source(level: Level, kind: Kind, path: Path, root: Path) -> Source | None:
    """The settings file at `path`, or None when there is none."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        warning = f"{path}: cannot read this settings file ({why or error}); skipped it"
        return Source(level, kind, str(path), root, None, (warning,), {}, ())
    parsed = parse_document(text, str(path))
    warnings = tuple(
        problem.line_text(
            "skipped the file"
            if problem.fatal
            else "ignored this value, the rest of the file applies"
        )
        for problem in parsed.problems
    )
    return _source(level, kind, str(path), root, parsed, warnings)


def _root(path: Path) -> Path:
    """Where a `--settings` file's `/path` rules start: the folder its settings folder sits in
    when it is in a `.claude/` or `.stayer/`, else its own folder."""
    folder = path.parent
    return folder.parent if folder.name in (".claude", ".stayer") else folder


def _flag_source(given: FlagSettings | None, cwd: Path) -> Source | None:
    if given is None:
        return None
    root, origin = cwd, "--settings"
    if isinstance(given, Mapping):
        try:
            text = json.dumps(given)
        except (TypeError, ValueError) as error:
            raise ConfigError(
                f"settings: not JSON data ({error}); give str, numbers, lists, dicts"
            ) from None
    elif isinstance(given, str) and given.lstrip().startswith("{"):
        text = given
    else:
        path = cwd / Path(given).expanduser()
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            why = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            raise ConfigError(
                f"--settings {given}: cannot read it ({why or error}); give a settings file or "
                'a JSON object such as \'{"model": "sonnet"}\''
            ) from None
        root, origin = _root(path), str(path)
    parsed = parse_document(text, origin)
    if parsed.problems:
        raise ConfigError(parsed.problems[0].line_text("fix it, or leave --settings out"))
    return _source("flag", "flag", origin, root, parsed, ())


def _source(
    level: Level | Literal["flag"],
    kind: Kind,
    origin: str,
    root: Path,
    parsed: Parsed,
    warnings: tuple[str, ...],
) -> Source:
    """A found document, with its rules and directories placed at their lines."""
    settings = parsed.settings
    if settings is None:
        return Source(level, kind, origin, root, None, warnings, {}, ())
    permissions = settings.permissions
    rules: dict[RuleKind, tuple[SourceRule, ...]] = {}
    for kind_of in get_args(RuleKind):
        kept = cast(tuple[str, ...], getattr(permissions, kind_of))
        rules[kind_of] = tuple(
            SourceRule(text, origin, root, line)
            for text, line in zip(kept, _lines(parsed, kind_of, len(kept)), strict=True)
        )
    kept_dirs = permissions.additional_directories
    directories = tuple(
        SourceDir(text, origin, root, line)
        for text, line in zip(
            kept_dirs, _lines(parsed, "additionalDirectories", len(kept_dirs)), strict=True
        )
    )
    return Source(level, kind, origin, root, settings, warnings, rules, directories)


def _lines(parsed: Parsed, key: str, count: int) -> list[int]:
    """The line of each kept entry of `permissions.<key>`: its string items as written (the
    others were dropped as wrong), else the list's own line."""
    written = parsed.data.get("permissions")
    items = written.get(key) if isinstance(written, dict) else None
    spots = (
        [i for i, item in enumerate(items) if isinstance(item, str)]
        if isinstance(items, list)
        else []
    )
    if len(spots) != count:
        return [parsed.line_of(("permissions", key))] * count
    return [parsed.line_of(("permissions", key, i)) for i in spots]


_SCALARS = (
    "model",
    "auto_compact_window",
    "auto_compact_percent",
    "done_when",
    "read_claude_settings",
)
_PERMISSION_SCALARS = ("default_mode", "disable_bypass_permissions_mode")


def merge(found: Sequence[Source]) -> Loaded:
    """Combine documents in order: later scalars win, `env` per key, lists and hooks add up."""
    scalars: dict[str, Any] = {}
    permission_scalars: dict[str, Any] = {}
    env: dict[str, str] = {}
    hooks: dict[str, tuple[HookMatcher, ...]] = {}
    for source in found:
        settings = source.settings
        if settings is None:
            continue
        scalars |= {k: v for k in _SCALARS if (v := getattr(settings, k)) is not None}
        permission_scalars |= {
            k: v for k in _PERMISSION_SCALARS if (v := getattr(settings.permissions, k)) is not None
        }
        env |= settings.env
        for event, matchers in settings.hooks.items():
            hooks[event] = (*hooks.get(event, ()), *matchers)

    def every(kind: RuleKind) -> tuple[SourceRule, ...]:
        return tuple(rule for source in found for rule in source.rules.get(kind, ()))

    allow, ask, deny = every("allow"), every("ask"), every("deny")
    directories = tuple(d for source in found for d in source.directories)
    permissions = Settings().permissions.model_copy(
        update={
            **permission_scalars,
            "allow": tuple(r.text for r in allow),
            "ask": tuple(r.text for r in ask),
            "deny": tuple(r.text for r in deny),
            "additional_directories": tuple(d.text for d in directories),
        }
    )
    settings = Settings().model_copy(
        update={**scalars, "env": env, "hooks": hooks, "permissions": permissions}
    )
    warnings = tuple(line for source in found for line in source.warnings)
    return Loaded(settings, allow, ask, deny, directories, tuple(found), warnings)
