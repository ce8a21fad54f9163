"""The look at the disk and the environment the protected-path check needs, done where a
call's paths are resolved, so the permission layer can judge without I/O
(`stayer.permissions.protected`).

For one call it finds what the call writes besides its subject (`Tool.write_paths`: a shell
command's redirections and the operands its programs write), every name of each of those paths
(resolved, and as written), and the places known by where they are: those the environment
names (`XDG_CONFIG_HOME`, `STAYER_CONFIG_DIR`, `PATH`, …) and the git directories around the
written paths, whatever their names. A folder is a git directory when it holds `HEAD` with
`objects/` and `refs/`, or `HEAD` with `commondir` (git's own test), or a `.git` file names it
(`gitdir: path`); it is about to become one when the call writes a part of that layout into
it and it already holds another part, or the call writes two at once. So the Write tool can
make `evil/config`, but then not `evil/objects/x` or `evil/HEAD`, in whichever order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

from stayer.permissions import lexical_subject, resolve_subject
from stayer.permissions.protected import (
    GIT_LAYOUT_FILES,
    GIT_LAYOUT_FOLDERS,
    Place,
    Writes,
    environment_places,
    git_entries,
    layout_name,
)
from stayer.tools.base import Tool

_GIT_DIRECTORY = "it is a git directory, and git runs what its config and hooks say"
_NAMED_BY_GIT_FILE = (
    "a .git file names it as its repository's git directory, whose config and hooks git runs"
)


def protected_writes(
    tool: Tool[Any],
    tool_input: Any,
    subject: tuple[str, ...],
    *,
    cwd: Path,
    roots: Iterable[Path],
    env: Mapping[str, str] | None = None,
) -> Writes:
    """What the call writes besides its `subject` (the names of the path a file tool writes,
    or nothing), and the protected places around all of it."""
    given = tool.write_paths(tool_input, cwd)
    paths, mentioned = _names(given.paths, cwd), _names(given.mentioned, cwd)
    environments = (os.environ,) if env is None else (os.environ, env)
    located = (
        *environment_places(environments, roots=(cwd, *roots)),
        *git_places((*subject, *paths), cwd, named=mentioned),
    )
    return Writes((*paths, *mentioned), given.unknown, tuple(dict.fromkeys(located)))


def _names(paths: Iterable[str], cwd: Path) -> tuple[str, ...]:
    """Each path where it really points, and as written."""
    found: list[str] = []
    for path in paths:
        found += [resolve_subject(path, cwd), lexical_subject(path, cwd)]
    return tuple(dict.fromkeys(found))


def git_places(paths: Iterable[str], cwd: Path, *, named: Iterable[str] = ()) -> tuple[Place, ...]:
    """The git directories the absolute `paths` are in or make (see the module docstring),
    and those the `named` paths (which a program may write) are in, leaving out those inside
    a `.git` folder, which its name already protects."""
    made = [path for path in paths if path.startswith("/")]
    listed = [*made, *(path for path in named if path.startswith("/"))]
    found: list[Place] = []
    checked: dict[str, bool] = {}
    for path in listed:
        for folder in (PurePath(path), *PurePath(path).parents):
            text = str(folder)
            if text not in checked:
                checked[text] = _is_git_directory(text)
            if checked[text] and not _named_git(text):
                found.append(Place(text.rstrip("/") + "/", _GIT_DIRECTORY))
    found += _becoming(made)
    found += _named_by_git_files(listed, cwd)
    return tuple(dict.fromkeys(found))


def _is_git_directory(folder: str) -> bool:
    if not os.path.isfile(os.path.join(folder, "HEAD")):
        return False
    if os.path.isfile(os.path.join(folder, "commondir")):
        return True
    return all(os.path.isdir(os.path.join(folder, name)) for name in ("objects", "refs"))


def _named_git(folder: str) -> bool:
    return ".git" in (part.casefold() for part in PurePath(folder).parts)


def _becoming(paths: list[str]) -> list[Place]:
    """Folders the call writes a part of git's layout into, which then hold two parts."""
    written: dict[str, set[str]] = {}
    for path in paths:
        for folder, entry in git_entries(path):
            written.setdefault(folder, set()).add(entry)
    found: list[Place] = []
    for folder, entries in written.items():
        if _named_git(folder):
            continue
        held = _held(folder) | entries
        if len(held) >= 2:
            shown = ", ".join(
                sorted(layout_name(e) + ("/" if e in GIT_LAYOUT_FOLDERS else "") for e in held)
            )
            found.append(
                Place(
                    folder.rstrip("/") + "/",
                    f"with this write it holds {shown}: the makings of a git directory, "
                    "and git runs what a git directory's config and hooks say",
                )
            )
    return found


def _held(folder: str) -> set[str]:
    """The parts of git's layout `folder` holds on the disk, each of the kind git gives it."""
    held = {e for e in GIT_LAYOUT_FILES if os.path.isfile(os.path.join(folder, layout_name(e)))}
    return held | {e for e in GIT_LAYOUT_FOLDERS if os.path.isdir(os.path.join(folder, e))}


def _named_by_git_files(paths: list[str], cwd: Path) -> list[Place]:
    """Git directories a `.git` file names (`gitdir: path`), in the working directory or a
    folder above it or a written path, that a written path lies in."""
    folders = {str(f) for path in (*paths, str(cwd)) for f in PurePath(path).parents}
    folders |= {str(cwd)}
    found: list[Place] = []
    for folder in folders:
        named = _gitdir(folder)
        if named is None or _named_git(named):
            continue
        place = named.rstrip("/") + "/"
        if any((path.rstrip("/") + "/").startswith(place) for path in paths):
            found.append(Place(place, _NAMED_BY_GIT_FILE))
    return found


def _gitdir(folder: str) -> str | None:
    """The folder `folder/.git` names, when that is a file saying `gitdir: path`."""
    marker = os.path.join(folder, ".git")
    if not os.path.isfile(marker):
        return None
    try:
        with open(marker, encoding="utf-8", errors="replace") as file:
            line = file.readline(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(folder, line.removeprefix("gitdir:").strip()))
