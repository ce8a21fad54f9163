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

Scalars (`model`, `agent`, `permissions.defaultMode`, …) take the last source's value, `env` and
`enabledPlugins` merge key by key (but a plugin the user's settings turn off stays off whatever
a project's or local file says; `--settings` can turn it on), `batch.rateLimits` provider by
provider, and permission rules, additional
directories and hooks are collected from every source (deny wins when a call is decided). Each
rule remembers its file, because a rule path starting with a single `/` is relative to the
folder the settings folder sits in.

`.claude/` files are skipped when `STAYER_NO_CLAUDE_SETTINGS` is on or a stayer source says
`"readClaudeSettings": false`; a skipped file that holds deny rules is named in a warning, so no
deny rule is lost unseen.

Broken files fail closed. A file that cannot be read, is not JSON, or has a problem that is not
minor (see `parse`: a bad permission value or rule, a bad hook, …) stops the run with one line,
`file:line:col: what is wrong; fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 …`. With that
switch on, such a file is left out whole, with one warning naming it: a file is used with all
its deny rules or not at all, never half-read. A minor problem (a bad `model`, an `env` entry
of the wrong type) drops only that value, with a warning. A missing file is silent. A broken
`--settings` always stops the run, even for a minor problem and whatever the switch says: it was
given for this run, and running under other settings than asked would be worse than not
running.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from msgspec import Struct
from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.switches import env_flag

from .dirs import CLAUDE_JSON, claude_config_dir, config_root

if TYPE_CHECKING:  # the models and their parser load with the first settings document found
    from .model import BatchSetting, HookMatcher, SandboxSetting, Settings
    from .parse import Parsed, Problem, RuleCheck

Level = Literal["user", "project", "local"]
LEVELS: tuple[Level, ...] = get_args(Level)
Kind = Literal["claude", "stayer", "flag"]
RuleKind = Literal["allow", "ask", "deny"]
FlagSettings = str | Path | Mapping[str, Any]
"""`--settings`: a path, an inline JSON object (text starting with `{`), or a mapping."""

NO_CLAUDE_SWITCH = "STAYER_NO_CLAUDE_SETTINGS"
IGNORE_BAD_SWITCH = "STAYER_IGNORE_BAD_SETTINGS"
_FIX = f"fix the file, or set {IGNORE_BAD_SWITCH}=1 to go on without it"
_LEFT_OUT = f"left the whole file out, as {IGNORE_BAD_SWITCH} is set: none of its settings apply"
_MINOR = "ignored this value, the rest of the file applies"


class SourceRule(Struct, frozen=True):
    """A permission rule and where it was written: `origin` (the file, or `--settings`), its
    line, and `root`, the folder a `/path` specifier is relative to."""

    text: str
    origin: str
    root: Path
    line: int
    column: int = 1


class SourceDir(Struct, frozen=True):
    """A directory from `permissions.additionalDirectories`, relative to `root`."""

    text: str
    origin: str
    root: Path
    line: int
    column: int = 1


class Source(Struct, frozen=True):
    """One settings document that was found: its settings (None when unusable or left out),
    its warnings, and the problem that makes it unusable, until the caller has dealt with it."""

    level: Level | Literal["flag"]
    kind: Kind
    origin: str
    root: Path
    settings: Settings | None
    warnings: tuple[str, ...]
    rules: Mapping[RuleKind, tuple[SourceRule, ...]]
    directories: tuple[SourceDir, ...]
    problem: Problem | None = None


class Loaded(Struct, frozen=True):
    """The merged settings of a run, the rules with their sources, and what went wrong."""

    merged: Settings | None = None
    """The merged settings; None when no settings document was found, so that a run without
    settings files never loads the settings models."""
    allow: tuple[SourceRule, ...] = ()
    ask: tuple[SourceRule, ...] = ()
    deny: tuple[SourceRule, ...] = ()
    directories: tuple[SourceDir, ...] = ()
    sources: tuple[Source, ...] = ()
    """Every document found, in the order applied."""
    warnings: tuple[str, ...] = ()
    """One line each, for standard error or the init line."""

    @property
    def settings(self) -> Settings:
        """The merged settings, the defaults when no document was found."""
        if self.merged is not None:
            return self.merged
        from .model import Settings

        return Settings()

    @property
    def hooks(self) -> Mapping[str, tuple[HookMatcher, ...]]:
        """The hooks of every document, event name → matchers."""
        return {} if self.merged is None else self.merged.hooks


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
    rule_problem: RuleCheck | None = None,
) -> Loaded:
    """Read and merge the settings for a run in `cwd`; `rule_problem` judges each permission
    rule. Raises `ConfigError` with one line for a broken `flag_settings`, and for a settings
    file that cannot be used unless `STAYER_IGNORE_BAD_SETTINGS` is on."""
    flag = _flag_source(flag_settings, cwd, rule_problem)
    ignore = env_flag(env, IGNORE_BAD_SWITCH)
    found = [
        _checked(source, ignore) if source.kind != "claude" else source
        for level, kind, path, root in _candidates(cwd, env, sources)
        if (source := _file_source(level, kind, path, root, rule_problem)) is not None
    ]
    said = [*found, *([flag] if flag else [])]
    # a project may leave its own .claude/ files unread, never the user's own rules
    unread_user = claude_unread(env, [s for s in said if s.level in ("user", "flag")])
    unread_project = claude_unread(env, said)
    notes: list[str] = []
    kept: list[Source] = []
    for source in found:
        why = unread_user if source.level == "user" else unread_project
        if source.kind != "claude":
            kept.append(source)
        elif why is None:
            kept.append(_checked(source, ignore))
        else:
            notes += _unread_notes([source], why)
    found = kept
    if flag is not None:
        found.append(flag)
    loaded = merge(found)
    return replace(loaded, warnings=(*notes, *loaded.warnings)) if notes else loaded


def _checked(source: Source, ignore: bool) -> Source:
    """The source if it can be used; else (with the switch on) the source left out whole, with
    one warning naming it; else `ConfigError`."""
    if source.problem is None:
        return source
    if not ignore:
        raise ConfigError(source.problem.line_text(_FIX))
    return replace(source, warnings=(source.problem.line_text(_LEFT_OUT),), problem=None)


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


def home_moved(found: Sequence[Source]) -> str | None:
    """Which project or local settings file moves where the user's own files are (`HOME`,
    `CLAUDE_CONFIG_DIR` in its `env`), as `file: env NAMES set by a project's settings`; None
    when none does. A repository must not choose which file speaks for the user."""
    for source in found:
        if source.level in ("project", "local") and source.settings is not None:
            moved = {"CLAUDE_CONFIG_DIR", "HOME"} & set(source.settings.env)
            if moved:
                names = ", ".join(sorted(moved))
                return f"{source.origin}: env {names} set by a project's settings"
    return None


def claude_json_unread(env: Mapping[str, str], found: Sequence[Source]) -> str | None:
    """Why Claude Code's own file (`~/.claude.json`) is left unread, or None: a project's
    settings moved the user's folders (`home_moved`), or the user's `.claude/` files are
    unread (the switch, or `readClaudeSettings` false in the user's settings or `--settings`)."""
    moved = home_moved(found)
    if moved is not None:
        return f"{moved}, so {CLAUDE_JSON} was not read"
    return claude_unread(env, [source for source in found if source.level in ("user", "flag")])


def claude_unread(env: Mapping[str, str], found: Sequence[Source]) -> str | None:
    """Why `.claude/` files are left unread (the switch, or the last stayer source that says
    so says false), or None when they are read."""
    if env_flag(env, NO_CLAUDE_SWITCH):
        return f"{NO_CLAUDE_SWITCH} is set"
    said = [
        (source.origin, source.settings.read_claude_settings)
        for source in found
        if source.kind != "claude"
        and source.settings is not None
        and source.settings.read_claude_settings is not None
    ]
    if said and said[-1][1] is False:
        return f'"readClaudeSettings": false in {said[-1][0]}'
    return None


def _unread_notes(found: Sequence[Source], why: str) -> list[str]:
    """A warning for each `.claude/` file left unread that holds deny rules."""
    notes = []
    for source in found:
        count = len(source.rules.get("deny", ())) if source.kind == "claude" else 0
        if count:
            rules = "rule does" if count == 1 else "rules do"
            notes.append(f"{source.origin}: not read ({why}): its {count} deny {rules} not apply")
    return notes


def _file_source(
    level: Level, kind: Kind, path: Path, root: Path, rule_problem: RuleCheck | None
) -> Source | None:
    """The settings file at `path`, or None when there is none."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as error:
        from .parse import Problem

        why = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        what = f"cannot read this settings file ({why or error})"
        problem = Problem(str(path), None, None, what, False)
        return Source(level, kind, str(path), root, None, (), {}, (), problem)
    from .parse import parse_document

    parsed = parse_document(text, str(path), rule_problem=rule_problem)
    warnings = tuple(problem.line_text(_MINOR) for problem in parsed.problems if problem.minor)
    return _source(level, kind, str(path), root, parsed, warnings)


def _root(path: Path) -> Path:
    """Where a `--settings` file's `/path` rules start: the folder its settings folder sits in
    when it is in a `.claude/` or `.stayer/`, else its own folder."""
    folder = path.parent
    return folder.parent if folder.name in (".claude", ".stayer") else folder


def _flag_source(
    given: FlagSettings | None, cwd: Path, rule_problem: RuleCheck | None
) -> Source | None:
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
    from .parse import parse_document

    parsed = parse_document(text, origin, rule_problem=rule_problem)
    if parsed.problems:  # even a minor one: this run asked for exactly these settings
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
    """A found document, with its rules and directories placed at their lines and columns."""
    settings = parsed.settings
    if settings is None:
        return Source(level, kind, origin, root, None, warnings, {}, (), parsed.serious)
    permissions = settings.permissions
    rules: dict[RuleKind, tuple[SourceRule, ...]] = {}
    for kind_of in get_args(RuleKind):
        written = cast(tuple[str, ...], getattr(permissions, kind_of))
        rules[kind_of] = tuple(
            SourceRule(text, origin, root, *parsed.place(("permissions", kind_of, index)))
            for index, text in enumerate(written)
        )
    directories = tuple(
        SourceDir(text, origin, root, *parsed.place(("permissions", "additionalDirectories", i)))
        for i, text in enumerate(permissions.additional_directories)
    )
    return Source(level, kind, origin, root, settings, warnings, rules, directories)


_SCALARS = (
    "model",
    "auto_compact_window",
    "auto_compact_percent",
    "done_when",
    "read_claude_settings",
    "status_line",
    "agent",
)
_PERMISSION_SCALARS = ("default_mode", "disable_bypass_permissions_mode")


def merge(found: Sequence[Source]) -> Loaded:
    """Combine documents in order: later scalars win, `env` per key, lists and hooks add up."""
    if not found:
        return Loaded()
    from .model import Permissions, Settings

    scalars: dict[str, Any] = {}
    permission_scalars: dict[str, Any] = {}
    env: dict[str, str] = {}
    notes: list[str] = []
    hooks: dict[str, tuple[HookMatcher, ...]] = {}
    plugins: dict[str, bool] | None = None
    user_off: set[str] = set()
    for source in found:
        settings = source.settings
        if settings is None:
            continue
        scalars |= {k: v for k in _SCALARS if (v := getattr(settings, k)) is not None}
        permission_scalars |= {
            k: v for k in _PERMISSION_SCALARS if (v := getattr(settings.permissions, k)) is not None
        }
        env |= _trusted_env(source, notes)
        for event, matchers in settings.hooks.items():
            hooks[event] = (*hooks.get(event, ()), *matchers)
        if settings.enabled_plugins is not None:
            turned = settings.enabled_plugins
            plugins = _plugins_turned(plugins, source.level, turned, user_off)

    def every(kind: RuleKind) -> tuple[SourceRule, ...]:
        return tuple(rule for source in found for rule in source.rules.get(kind, ()))

    allow, ask, deny = every("allow"), every("ask"), every("deny")
    directories = tuple(d for source in found for d in source.directories)
    permissions = Permissions(
        **permission_scalars,
        allow=tuple(r.text for r in allow),
        ask=tuple(r.text for r in ask),
        deny=tuple(r.text for r in deny),
        additional_directories=tuple(d.text for d in directories),
    )
    settings = Settings(
        **scalars, env=env, hooks=hooks, permissions=permissions, enabled_plugins=plugins,
        sandbox=_sandbox(found), batch=_batch(found),
    )  # fmt: skip
    warnings = (*(line for source in found for line in source.warnings), *notes)
    return Loaded(settings, allow, ask, deny, directories, tuple(found), warnings)


def _sandbox(found: Sequence[Source]) -> SandboxSetting | None:
    """`sandbox.enabled` if any source turns it on (a later file cannot turn it off: a
    project's settings must not unsandbox what the user's sandbox holds)."""
    from .model import SandboxSetting

    for source in found:
        setting = None if source.settings is None else source.settings.sandbox
        if setting is not None and setting.enabled:
            return SandboxSetting(enabled=True)
    return None


def _batch(found: Sequence[Source]) -> BatchSetting | None:
    """`batch` of every source, its rate limits merged provider by provider (later wins)."""
    from .model import BatchSetting

    settings = [source.settings.batch for source in found if source.settings is not None]
    said = [batch for batch in settings if batch is not None]
    if not said:
        return None
    return BatchSetting(rate_limits={k: v for batch in said for k, v in batch.rate_limits.items()})


def _plugins_turned(
    plugins: dict[str, bool] | None, level: str, turned: Mapping[str, bool], user_off: set[str]
) -> dict[str, bool]:
    """`plugins` after a file of `level` turns some on or off: a later file wins, except that
    a project's or local file cannot turn on a plugin the user's settings turned off
    (`user_off`, kept up to date here): a plugin brings hooks and MCP servers that run
    unasked, and a repository must not start what the user stopped. `--settings`, given for
    the run, can."""
    merged = dict(plugins or {})
    for plugin_id, on in turned.items():
        if level == "user" and on:
            user_off.discard(plugin_id)
        elif level == "user":
            user_off.add(plugin_id)
        elif on and plugin_id in user_off and level in ("project", "local"):
            continue
        merged[plugin_id] = on
    return merged


_STEERS_CREDENTIALS = re.compile(
    r"(?:_BASE_URL|_API_KEY|_AUTH_TOKEN|_OAUTH_TOKEN|_PROXY|_CA_BUNDLE|_CA_CERTS|SSL_CERT_FILE|"
    r"SSL_CERT_DIR)$|^(?:STAYER_PASS_ENV|ALL_PROXY|HTTPS?_PROXY)$",
    re.IGNORECASE,
)
"""Variables that say where stayer sends its credentials, or which tool processes may see
them: a model server's address, a key, a proxy, the certificates trusted for TLS."""


def _trusted_env(source: Source, notes: list[str]) -> dict[str, str]:
    """A source's `env`; from a project's files (which come with the code), without what
    would send the user's credentials elsewhere: a cloned repository must not be able to
    point the model server at its own host and collect the key."""
    settings = source.settings
    assert settings is not None
    if source.level not in ("project", "local"):
        return dict(settings.env)
    kept = {k: v for k, v in settings.env.items() if not _STEERS_CREDENTIALS.search(k)}
    for name in sorted(set(settings.env) - set(kept)):
        notes.append(
            f"{source.origin}: env {name} is not taken from a project's settings, since it "
            "steers where your credentials go; set it in your own ~/.stayer/settings.json, "
            "with --settings, or in the environment"
        )
    return kept
