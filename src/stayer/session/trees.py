"""Whether a folder a command reads whole holds a file the read rules name, looked at on disk.

A recursive search or an archive of a folder (`grep -r x src`, `tar c .`) reads every file
under it; a read rule for `.env` at any depth could name one anywhere below. Rather than refuse
every such command while the rule stands, the folder is walked (symlinks judged where they
point, not followed further): a tree that holds no such file reads none, and is dropped from the
call's reads; one that does, or that is too large to walk quickly, stays, and the rules refuse
or ask as they would. The command runs right after the walk, in the same folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from stayer.permissions import Rule, lexical_subject, resolve_subject

MOST_ENTRIES = 20_000
"""Entries walked under one folder before it counts as holding a named file (fail closed)."""


def trees_holding(
    paths: tuple[str, ...], rules: tuple[Rule, ...], tool: str, cwd: Path
) -> tuple[str, ...]:
    """`paths` without the `folder/**` reads of folders that hold no file `rules` name."""
    return tuple(
        path
        for path in paths
        if not path.endswith("/**") or _holds(path[:-3] or "/", rules, tool, cwd)
    )


def _holds(folder: str, rules: tuple[Rule, ...], tool: str, cwd: Path) -> bool:
    root = Path(resolve_subject(folder, cwd))
    if not root.is_dir():
        return _named(str(root), rules, tool, cwd) or _named(folder, rules, tool, cwd)
    pending, walked, seen = [root], set[Path](), 0
    while pending:
        top = pending.pop()
        if top in walked:
            continue
        walked.add(top)
        if _named(str(top) + "/", rules, tool, cwd):
            return True
        for parent, folders, files in os.walk(top):
            for name in (*folders, *files):
                seen += 1
                if seen > MOST_ENTRIES:
                    return True
                path = os.path.join(parent, name)
                real = Path(resolve_subject(path, cwd))
                if _named(path, rules, tool, cwd) or _named(str(real), rules, tool, cwd):
                    return True
                if os.path.islink(path) and real.is_dir():
                    pending.append(real)  # `grep -R` follows it: what it holds is read too
    return False


def _named(path: str, rules: tuple[Rule, ...], tool: str, cwd: Path) -> bool:
    names = (path, lexical_subject(path, cwd))
    return any(
        rule.matches(tool, name, cwd, kind="path", fold=True) for rule in rules for name in names
    )
