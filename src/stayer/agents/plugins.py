"""Plugins already on disk: a folder with `.claude-plugin/plugin.json`, from `--plugin-dir` or
from settings' `enabledPlugins` looked up in Claude Code's record of installed plugins.

A plugin's parts sit at its root (`skills/`, `commands/`, `agents/`, `hooks/hooks.json`,
`.mcp.json`); its manifest may name more (`skills`, `commands`, `agents`, `hooks`,
`mcpServers`: a path or a list of paths, relative to the root). A path that leads outside the
plugin's folder (`..`, an absolute path, a symbolic link out) is refused: a plugin brings its
own files, never the rest of the disk. Marketplaces and installing are Claude Code's business;
an enabled plugin that is not installed is one problem line saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from msgspec import Struct

from . import guard
from .model import Plugin

MANIFEST = Path(".claude-plugin") / "plugin.json"
INSTALLED = Path("plugins") / "installed_plugins.json"
"""Claude Code's record of installed plugins, under its own folder (`~/.claude`)."""

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_PART_KEYS = ("skills", "commands", "agents")


class PluginParts(Struct, frozen=True, kw_only=True):
    """Where a plugin's skills, commands and agents are: folders (or, for commands and agents,
    single files) inside its root, the default ones first."""

    skills: tuple[Path, ...] = ()
    commands: tuple[Path, ...] = ()
    agents: tuple[Path, ...] = ()


def read_plugin(
    root: Path, *, source: Literal["--plugin-dir", "enabledPlugins"], version: str | None = None
) -> tuple[Plugin | None, PluginParts, tuple[str, ...]]:
    """The plugin in `root` (None when it cannot be used), where its parts are, and the
    problem lines (a part that cannot be used is left out; the rest of the plugin loads)."""
    manifest, problem = _manifest(root)
    if manifest is None:
        return None, PluginParts(), (problem or f"{root}: cannot be used as a plugin",)
    name = manifest.get("name")
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        return (
            None,
            PluginParts(),
            (
                f"{root / MANIFEST}: `name` must be given in kebab-case (such as `my-plugin`); "
                "the plugin is left out",
            ),
        )
    problems: list[str] = []
    parts = {key: _part_paths(root, manifest, key, problems) for key in _PART_KEYS}
    hooks = _one_file(root, manifest, "hooks", Path("hooks") / "hooks.json", problems)
    mcp = _one_file(root, manifest, "mcpServers", Path(".mcp.json"), problems)
    description = manifest.get("description")
    given_version = manifest.get("version")
    plugin = Plugin(
        name=name,
        root=root,
        source=source,
        version=guard.shown(given_version) if isinstance(given_version, str) else version,
        description=guard.cut(guard.flat(description), guard.FIELD_CAP)
        if isinstance(description, str)
        else "",
        hooks_file=hooks,
        mcp_file=mcp,
    )
    return plugin, PluginParts(**parts), tuple(problems)


def _manifest(root: Path) -> tuple[Mapping[str, object] | None, str | None]:
    path = root / MANIFEST
    if not root.is_dir():
        return None, f"{root}: no such plugin folder"
    if not path.exists():
        return None, f"{root}: not a plugin (no {MANIFEST}); the plugin is left out"
    if not guard.within(path, root):
        return None, f"{path}: leads outside the plugin; refused, the plugin is left out"
    try:
        manifest = json.loads(guard.read_text(path).removeprefix("\ufeff"))
    except guard.Unreadable as error:
        return None, f"{path}: {error}; the plugin is left out"
    except json.JSONDecodeError as error:
        return None, f"{path}: not valid JSON ({error.msg}, line {error.lineno}); fix it"
    except guard.PARSE_ERRORS as error:  # huge numbers, nesting too deep
        return None, f"{path}: cannot be read ({type(error).__name__}); the plugin is left out"
    if not isinstance(manifest, dict):
        return None, f"{path}: must be a JSON object with at least a `name`"
    return manifest, None


def inside(root: Path, given: str) -> Path | None:
    """`given` (relative to `root`) as a path that stays inside `root`, or None."""
    try:
        if Path(given).is_absolute():
            return None
        resolved_root = root.resolve()
        path = (resolved_root / given).resolve()
        path.exists()  # a NUL in the path raises here, not later
    except (OSError, RuntimeError, ValueError):
        return None
    return path if path.is_relative_to(resolved_root) else None


def _declared(
    root: Path, manifest: Mapping[str, object], key: str, problems: list[str]
) -> list[Path]:
    """The paths the manifest's `key` names that stay inside the plugin (problem lines for
    the others)."""
    value = manifest.get(key)
    if value is None:
        return []
    if isinstance(value, dict):
        problems.append(
            f"{root / MANIFEST}: `{key}` written inline is not supported; put it in a file "
            "inside the plugin and name that file"
        )
        return []
    given = [value] if isinstance(value, str) else value
    if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
        problems.append(f"{root / MANIFEST}: `{key}` must be a path or a list of paths")
        return []
    paths: list[Path] = []
    for item in given:
        path = inside(root, item)
        if path is None:
            problems.append(
                f"{root / MANIFEST}: `{key}` path {guard.shown(item)} leads outside the "
                "plugin; refused (a plugin's paths must stay inside its folder)"
            )
        elif path.exists():
            paths.append(path)
        else:
            problems.append(f"{root / MANIFEST}: `{key}` path {guard.shown(item)} does not exist")
    return paths


def _part_paths(
    root: Path, manifest: Mapping[str, object], key: str, problems: list[str]
) -> tuple[Path, ...]:
    """The default folder (when there, and inside the plugin) and the manifest's own,
    without repeats."""
    found = _default(root, key, problems, want_dir=True)
    found += [path for path in _declared(root, manifest, key, problems) if path not in found]
    return tuple(found)


def _one_file(
    root: Path, manifest: Mapping[str, object], key: str, default: Path, problems: list[str]
) -> Path | None:
    """The manifest's file for `key`, else the default one, if it exists."""
    declared = _declared(root, manifest, key, problems)
    if declared:
        return declared[0]
    found = _default(root, str(default), problems, want_dir=False)
    return found[0] if found else None


def _default(root: Path, given: str, problems: list[str], *, want_dir: bool) -> list[Path]:
    """A default part (`skills/`, `hooks/hooks.json`, ...) when there, kept only when it
    stays inside the plugin as a declared path must (a link out is refused)."""
    lexical = root / given
    try:
        there = lexical.is_dir() if want_dir else lexical.is_file()
    except OSError:
        there = False
    if not there:
        return []
    path = inside(root, given)
    if path is None:
        problems.append(
            f"{lexical}: leads outside the plugin; refused (a plugin's parts must stay inside "
            "its folder)"
        )
        return []
    return [path]


def installed_roots(
    enabled: Mapping[str, bool], *, claude_dir: Path
) -> tuple[list[tuple[Path, str | None]], list[str]]:
    """The folders (and versions) of the enabled plugins Claude Code has installed, and one
    problem line for each enabled plugin that is not on disk."""
    wanted = [plugin_id for plugin_id, on in enabled.items() if on is True]
    if not wanted:
        return [], []
    record = _installed_record(claude_dir / INSTALLED)
    roots: list[tuple[Path, str | None]] = []
    problems: list[str] = []
    for plugin_id in wanted:
        found = _install_of(record.get(plugin_id), claude_dir / "plugins")
        if found is None:
            problems.append(
                f"enabledPlugins: {plugin_id} is not installed on this machine; stayer loads "
                "only plugins already on disk (install it with Claude Code, or pass "
                "--plugin-dir DIR)"
            )
        else:
            roots.append(found)
    return roots, problems


def _installed_record(path: Path) -> Mapping[str, object]:
    """The `plugins` table of `installed_plugins.json` (version 1 or 2), empty if unreadable."""
    try:
        data = json.loads(guard.read_text(path).removeprefix("\ufeff"))
    except guard.Unreadable:
        return {}
    except guard.PARSE_ERRORS:  # JSONDecodeError is a ValueError
        return {}
    plugins = data.get("plugins") if isinstance(data, dict) else None
    return plugins if isinstance(plugins, dict) else {}


def _install_of(entry: object, plugins_dir: Path) -> tuple[Path, str | None] | None:
    """The first installation of an entry (version 2: a list of them; version 1: one) whose
    folder exists."""
    installs = entry if isinstance(entry, list) else [entry]
    for install in installs:
        if not isinstance(install, dict) or not isinstance(install.get("installPath"), str):
            continue
        path = plugins_dir / Path(install["installPath"]).expanduser()  # absolute stays so
        version = install.get("version")
        if _is_dir(path):
            return path, version if isinstance(version, str) else None
    return None


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a NUL in a recorded path
        return False
