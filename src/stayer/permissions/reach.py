"""How far a call reaches beyond the session's own places: files it reads elsewhere, and, under
``--sandbox``, the bounds the file tools and the network are held to.

A call that only reads runs unasked while all it reads lies in the session's own places: the
working directories, the session's folder (oversized results are saved there for Read), the
sandbox's private /tmp, and, for a shell command, the harmless device files (`DEVICE_FILES`).
Whatever else it reads (`outside_reads`) needs an allow rule naming it (the tool's own, or one
of the tool its reads are judged as: ``Read(~/.ssh/config)`` for ``cat ~/.ssh/config``),
bypassPermissions, or a question. Paths are judged where they really point, so a symlink in the
project that leads out of it reads outside; a shell word that starts with ``~`` is taken as the
shell would expand it, wherever the parse left it.

Under --sandbox, a call on a path (reading or writing a file, searching a folder) stays inside the
working directories and the sandbox's /tmp, named by its real path (reading may also open the
session's folder), in every mode, and a call that needs the network is refused unless the
sandbox has it (`sandbox_refusal`). The shell needs no such check: bubblewrap holds it.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct

from stayer.tools.base import SubjectKind

from .matching import inside, lexical_subject, resolve_subject
from .policy import Decision, PermissionPolicy
from .texts import sandbox_bounds, sandbox_offline

DEVICE_FILES = frozenset(
    {
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
    }
)
"""Device files a shell command may read unasked: they hold no one's data (the standard streams
are the command's own)."""

_SHELL_TMP = Path("/tmp")


class Confinement(Struct, frozen=True):
    """What ``--sandbox`` holds the session's own calls to."""

    tmp: Path | None
    """The folder that is /tmp to the shell, by its real path (None: a fresh one per command,
    which no file tool can reach)."""
    network: bool


class Places(Struct, frozen=True):
    """Where a session's calls may reach besides its working directories."""

    session_dir: Path | None = None
    """The session's own folder, resolved, which every call may read."""
    sandbox: Confinement | None = None


def outside_reads(
    policy: PermissionPolicy,
    places: Places,
    *,
    rule_tools: tuple[str, ...],
    kind: SubjectKind,
    paths: tuple[str, ...] | None,
    cwd: Path,
) -> tuple[str, ...] | None:
    """What a read-only call reads outside the session's places that no allow rule of
    `rule_tools` names (resolved; a folder read whole as ``folder/**``); None when it cannot
    tell what it reads."""
    if paths is None:
        return None
    working = (cwd, *policy.directories)
    readable = (*working, *_own(places))
    found: list[str] = []
    for path in paths:
        for name in _targets(path, cwd, places, working, shell=kind == "command"):
            if inside(name, readable):
                continue
            if os.path.isdir(name):
                name = name.rstrip("/") + "/**"
            if not any(rule.matches(tool, name, cwd, kind="path") for tool in rule_tools
                       for rule in policy.allow):  # fmt: skip
                found.append(name)
    return tuple(dict.fromkeys(found))


def _own(places: Places) -> tuple[Path, ...]:
    own: tuple[Path, ...] = () if places.session_dir is None else (places.session_dir,)
    if places.sandbox is not None and places.sandbox.tmp is not None:
        own += (places.sandbox.tmp,)
    return own


def _targets(
    path: str, cwd: Path, places: Places, working: tuple[Path, ...], *, shell: bool
) -> tuple[str, ...]:
    """Where `path` really points, for each way it may be meant; for a shell word, nothing when
    it is a harmless device file, and /tmp is the sandbox's when there is one."""
    texts = [path]
    parts = path.split("/")
    tilde = next((i for i, part in enumerate(parts) if i and part.startswith("~")), None)
    if shell and tilde is not None:  # `~/x` joined to a folder: the shell reads the home's
        texts.append("/".join(parts[tilde:]))
    found: list[str] = []
    for text in texts:
        lexical = lexical_subject(text, cwd)
        if shell and lexical in DEVICE_FILES:
            continue
        tmp = places.sandbox.tmp if places.sandbox is not None else None
        under_tmp = Path(lexical).is_relative_to(_SHELL_TMP)
        if shell and tmp is not None and under_tmp and not inside(lexical, working):
            text = str(tmp / Path(lexical).relative_to(_SHELL_TMP))
        found.append(resolve_subject(text, cwd))
    return tuple(found)


def sandbox_refusal(
    policy: PermissionPolicy,
    places: Places,
    *,
    tool: str,
    kind: SubjectKind,
    paths: tuple[str, ...] | None,
    read_only: bool,
    cwd: Path,
) -> Decision | None:
    """A denial for a call that would leave the sandbox: a path outside its places (or paths it
    cannot tell), or the network when the sandbox has none; None otherwise, and always None
    without a sandbox."""
    sandbox = places.sandbox
    if sandbox is None:
        return None
    if kind == "domain" and not sandbox.network:
        return sandbox_offline(tool)
    if kind != "path":
        return None
    roots = (cwd, *policy.directories)
    reach = roots if sandbox.tmp is None else (*roots, sandbox.tmp)
    if read_only and places.session_dir is not None:
        reach += (places.session_dir,)
    if paths is None:
        return sandbox_bounds(tool, None, roots, sandbox.tmp)
    for path in paths:
        name = resolve_subject(path, cwd)
        if not inside(name, reach):
            return sandbox_bounds(tool, name, roots, sandbox.tmp)
    return None
