"""Writing permission rules into a project's own local settings, `.stayer/settings.local.json`.

This is where a person's "yes, and don't ask again" and `/permissions` edits are kept: the file
is the project's local level (read after the project's shared files, see `sources`), meant for
one person's choices and not for the repository. A rule is added to, or taken from, the
`permissions.allow`, `permissions.deny` or `permissions.ask` list; everything else in the file
is kept as it was, and a rule already listed is not listed again.

The file is replaced whole and atomically (a temporary file beside it, then `os.replace`), so a
reader never sees half of it. A file that cannot be read as a JSON object, or whose permission
lists are not lists, is never overwritten: one `ConfigError` line names it and says to fix or
remove it. The rule's syntax is the caller's to check (`stayer.permissions`, above this layer).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from stayer.errors import ConfigError
from stayer.json_text import has_lone_surrogate

RuleKind = Literal["allow", "deny", "ask"]
RULE_KINDS: tuple[RuleKind, ...] = ("allow", "deny", "ask")
LOCAL_SETTINGS = Path(".stayer") / "settings.local.json"
"""The local settings file, relative to the project (the working directory)."""

Same = Callable[[str], bool]
"""Whether an entry already in the file is the rule being written (the caller knows how rules
compare; written text only when it gives nothing)."""


def local_settings_path(project: Path) -> Path:
    """Where the project's local settings file is (it may not exist yet)."""
    return project / LOCAL_SETTINGS


def inside_project(path: Path, project: Path) -> Path:
    """`path`, when it (a link followed) stays in the project: a cloned repository could
    make `.stayer` or the file a link to the user's own settings, and a rule meant for this
    project would then hold for every one."""
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(os.path.realpath(project)):
        raise ConfigError(
            f"{path} leads to {target}, outside the project; stayer does not write rules "
            "there (remove the link to keep this project's rules in it)"
        )
    return path


def add_local_rule(project: Path, kind: RuleKind, rule: str, *, same: Same | None = None) -> bool:
    """Add `rule` to the `kind` list of the project's local settings, creating the file and
    its folder when missing; False when the file lists it there already (nothing written).
    Raises `ConfigError` in one line when the file cannot be read, understood or written."""
    path = inside_project(local_settings_path(project), project)
    data = read_settings_json(path)
    permissions = _permissions(data, path)
    listed = _listed(permissions, kind, path)
    matches = same or _written(rule)
    if any(isinstance(entry, str) and matches(entry) for entry in listed):
        return False
    permissions[kind] = [*listed, rule]
    data["permissions"] = permissions
    write_settings_json(path, data)
    return True


def remove_local_rule(project: Path, rule: str, *, same: Same | None = None) -> bool:
    """Take `rule` out of every permission list of the project's local settings; False when
    it is in none of them, or there is no file (nothing written). Raises `ConfigError` as
    `add_local_rule` does."""
    path = inside_project(local_settings_path(project), project)
    data = read_settings_json(path)
    if not data:
        return False
    permissions = _permissions(data, path)
    matches = same or _written(rule)
    removed = False
    for kind in RULE_KINDS:
        if kind not in permissions:
            continue
        listed = _listed(permissions, kind, path)
        kept = [entry for entry in listed if not (isinstance(entry, str) and matches(entry))]
        if len(kept) != len(listed):
            permissions[kind] = kept
            removed = True
    if removed:
        write_settings_json(path, data)
    return removed


def _written(rule: str) -> Same:
    text = rule.strip()
    return lambda entry: entry.strip() == text


def _left(path: Path, what: str) -> ConfigError:
    return ConfigError(f"{what}, so it was left alone; fix {path} or remove it, then try again")


def read_settings_json(path: Path) -> dict[str, Any]:
    """The file's JSON object; an empty one for a file that is not there."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, UnicodeDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) else "it is not UTF-8 text"
        raise _left(path, f"cannot read {path} ({why or error})") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        where = getattr(error, "lineno", None)
        at = f" at line {where}" if where else ""
        raise _left(path, f"{path} is not valid JSON{at}") from None
    if not isinstance(data, dict):
        raise _left(path, f"{path} does not hold a JSON object")
    return data


def _permissions(data: dict[str, Any], path: Path) -> dict[str, Any]:
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise _left(path, f'"permissions" in {path} is not an object')
    return permissions


def _listed(permissions: dict[str, Any], kind: RuleKind, path: Path) -> list[Any]:
    listed = permissions.get(kind, [])
    if not isinstance(listed, list):
        raise _left(path, f'"permissions.{kind}" in {path} is not a list')
    return listed


def write_settings_json(path: Path, data: dict[str, Any]) -> None:
    """Replace the file (the one a link points to, for a link) with `data`, atomically."""
    target = Path(os.path.realpath(path))
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if has_lone_surrogate(data):  # replaced, a rule would name something else: refused
        raise ConfigError(
            f"cannot write {path}: it would hold a lone UTF-16 surrogate (text that is not "
            "Unicode); give rules in valid Unicode"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else None
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise ConfigError(f"cannot write {path} ({error.strerror or error})") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:  # the file keeps the permissions it had
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise ConfigError(f"cannot write {path} ({error.strerror or error})") from None
