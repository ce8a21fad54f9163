"""The settings files' part in a run: `Loaded` settings folded into the run's options.

What the caller gave wins; settings fill in what it left out, as in Claude Code:

* permission rules from every file are added to `allowed_tools` / `disallowed_tools`; a path rule
  (Read, Edit, …) starting with a single `/` is made absolute from the folder its settings file
  belongs to (Claude Code's rule syntax), so it means the same file wherever the run starts;
* `ask` rules go to the policy's own (`PermissionPolicy.ask`): a call one covers is asked about
  (the session's decider answers; headless, it is denied with the rule that would allow it).
  Like Claude Code's, they come before allow rules and before `bypassPermissions`; deny rules
  come first of all;
* `permissions.defaultMode` when no mode was given; `additionalDirectories` added to `add_dirs`;
  `disableBypassPermissionsMode: "disable"` refuses a bypassPermissions run;
* `env` is set on the run's environment over what the process inherited (Claude Code applies
  settings `env` to the session the same way);
* `agent` (the agent the session runs as) when `--agent` names none;
* `sandbox.enabled: true` (from any file, or the SDK's `sandbox` option, which it merges into
  `--settings`) runs Bash commands sandboxed, as `--sandbox` does;
* `model` when none was given and the environment names none (`ANTHROPIC_MODEL` comes before
  the settings' model in Claude Code); `autoCompactWindow`, `autoCompactPercent` and `doneWhen`
  when their options are not set.

A permission rule that does not parse makes its file unusable, as the files' other serious
problems do (`stayer.config`: the run stops, or with `STAYER_IGNORE_BAD_SETTINGS=1` the file is
left out whole); the rule syntax is judged here, by `stayer.permissions`, and handed down to the
loader. An additional directory that does not exist is left out with a warning naming its file
and line: leaving it out only narrows what acceptEdits may write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.config import Loaded, SourceDir, SourceRule, load_settings, parse_levels
from stayer.errors import ConfigError
from stayer.exec.globs import glob_literal
from stayer.permissions import Rule, parse_rules
from stayer.tools.names import PATH_RULE_TOOLS

from .options import QueryOptions


class Settled(Struct, frozen=True):
    """The options with the settings folded in, the run's environment, the ask rules, and the
    warnings to show."""

    options: QueryOptions
    env: Mapping[str, str]
    ask: tuple[Rule, ...]
    loaded: Loaded
    warnings: tuple[str, ...]


def settle(options: QueryOptions, cwd: Path, env: Mapping[str, str]) -> Settled:
    """Read the settings for a run in `cwd` and fold them into `options`."""
    loaded = load_settings(
        cwd,
        env,
        flag_settings=options.settings,
        sources=parse_levels(options.setting_sources),
        rule_problem=rule_problem,
    )
    settings = loaded.merged
    if settings is None:  # no settings file: nothing to fold in, and the models stay unloaded
        return Settled(_unfolded(options), env, (), loaded, loaded.warnings)
    warnings: list[str] = list(loaded.warnings)
    allow, deny, ask = _anchored(loaded.allow), _anchored(loaded.deny), _anchored(loaded.ask)
    run_env = {**env, **settings.env} if settings.env else env
    mode = options.permission_mode or settings.permissions.default_mode or "default"
    _check_bypass(mode, loaded)
    model = options.model
    if model is None and not run_env.get("ANTHROPIC_MODEL"):
        model = settings.model
    window = options.autocompact_window
    percent = options.autocompact_percent
    folded = replace(
        options,
        model=model,
        permission_mode=mode,
        allowed_tools=(*_listed(options.allowed_tools), *(r.text for r in allow)),
        disallowed_tools=(*_listed(options.disallowed_tools), *(r.text for r in deny)),
        add_dirs=(*options.add_dirs, *_directories(loaded.directories, warnings)),
        done_when=settings.done_when if options.done_when is None else options.done_when,
        autocompact_window=settings.auto_compact_window if window is None else window,
        autocompact_percent=settings.auto_compact_percent if percent is None else percent,
        env=run_env if settings.env else options.env,
        agent=options.agent if options.agent is not None else settings.agent,
        sandbox=options.sandbox
        or (settings.sandbox is not None and settings.sandbox.enabled is True),
    )
    rules = tuple(Rule.parse(rule.text) for rule in ask)
    return Settled(folded, run_env, rules, loaded, tuple(warnings))


def _unfolded(options: QueryOptions) -> QueryOptions:
    """The options as folding in default settings leaves them: the mode named, lists as
    tuples."""
    return replace(
        options,
        permission_mode=options.permission_mode or "default",
        allowed_tools=tuple(_listed(options.allowed_tools)),
        disallowed_tools=tuple(_listed(options.disallowed_tools)),
        add_dirs=tuple(options.add_dirs),
    )


def _listed(value: str | Sequence[str]) -> Sequence[str]:
    return (value,) if isinstance(value, str) else value


def rule_problem(text: str) -> str | None:
    """What is wrong with a settings file's permission rule, or None. A rule must parse, and be
    one rule: the flags' reading splits on commas and spaces outside parentheses, so an entry
    that splits would not mean what it says."""
    try:
        Rule.parse(text)
        count = len(parse_rules([text]))
    except ConfigError as error:
        return str(error)
    if count != 1:
        return f"{text!r} reads as {count} rules; give each rule its own entry in the list"
    return None


def _anchored(rules: Sequence[SourceRule]) -> tuple[SourceRule, ...]:
    """The rules with `/path` specifiers made absolute from their settings file's folder (each
    parses: the loader refused the files whose rules do not)."""
    return tuple(
        replace(rule, text=placed_rule(Rule.parse(rule.text), rule.root) or rule.text)
        for rule in rules
    )


def placed_rule(rule: Rule, root: Path) -> str | None:
    """`Tool(/path)` as `Tool(//<root>/path)` (Claude Code's absolute form); None if the rule
    needs no change. `root` is the folder the rule's settings folder sits in."""
    spec = rule.specifier
    if rule.tool not in PATH_RULE_TOOLS or spec is None or not spec.startswith("/"):
        return None
    if spec.startswith("//"):
        return None
    return f"{rule.tool}(/{glob_literal(str(root)).rstrip('/')}{spec})"


def _directories(given: Sequence[SourceDir], warnings: list[str]) -> list[str]:
    """`additionalDirectories`, each from its settings file's folder; a missing one is left out
    with a warning (a flag's `--add-dir` that does not exist stops the run instead)."""
    found: list[str] = []
    for entry in given:
        try:
            path = (entry.root / Path(entry.text).expanduser()).resolve()
        except RuntimeError:  # `~name` for a user that does not exist
            path = entry.root / entry.text
        if not path.is_dir():
            warnings.append(
                f"{entry.origin}:{entry.line}: additionalDirectories: {path} is not a "
                "directory; ignored it"
            )
            continue
        found.append(str(path))
    return found


def bypass_disabled_by(loaded: Loaded) -> str | None:
    """The settings file whose `disableBypassPermissionsMode: "disable"` rules
    bypassPermissions out (Claude Code's way for a project or an administrator to), if any."""
    said = [
        source.origin
        for source in loaded.sources
        if source.settings is not None
        and source.settings.permissions.disable_bypass_permissions_mode == "disable"
    ]
    return said[-1] if said else None


def _check_bypass(mode: str, loaded: Loaded) -> None:
    """A bypassPermissions run is refused where the settings turn it off, naming the file."""
    if mode != "bypassPermissions":
        return
    origin = bypass_disabled_by(loaded)
    if origin is not None:
        raise ConfigError(
            f"bypassPermissions is turned off by disableBypassPermissionsMode in {origin}; "
            "run without --dangerously-skip-permissions, or allow what is needed with "
            "--allowedTools"
        )
