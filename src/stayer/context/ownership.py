"""Whether a memory file could have been left for us by someone else.

A file is planted when it, or a directory on the way to it, belongs to someone other than us or
root and sits in a directory anyone may write (`/tmp`): anyone could have made it, and whoever
made a directory there owns everything below it. Each step from an anchor (the project's
boundary; the filesystem root for a file with none) down to the file is looked at, not only
the file's own directory, so `W/.claude/CLAUDE.md` is planted when someone else made
`W/.claude` in a world-writable `W`, whatever the mode they gave it. The anchor itself is not
judged: it is the directory the user chose to work in (a colleague's checkout is theirs to
trust), and steps above it would make every file under `/tmp/pytest-of-me` suspect.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

OwnerCheck = Callable[[os.stat_result], bool]
"""Whether a file (its `lstat`) is one we take as our own, by its owner."""


def ours_or_root(info: os.stat_result) -> bool:
    """Whether the file belongs to the user running stayer, or to root (who can write
    anywhere anyway)."""
    return info.st_uid in (os.getuid(), 0)


def planted(path: Path, anchor: Path, *, trusted: OwnerCheck = ours_or_root) -> bool:
    """Whether `path`, or a directory between `anchor` and it, belongs to an owner not
    `trusted` inside a directory anyone may write (see the module docstring)."""
    if not hasattr(os, "getuid"):  # no Unix owners to go by (Windows)
        return False
    if not path.is_relative_to(anchor):
        anchor = Path(path.anchor)
    current = anchor
    for part in path.relative_to(anchor).parts:
        parent, current = current, current / part
        try:
            info = current.lstat()
            open_to_all = bool(parent.stat().st_mode & stat.S_IWOTH)
        except OSError:
            return False  # gone or unreadable: reading it fails and says so
        if open_to_all and not trusted(info):
            return True
    return False
