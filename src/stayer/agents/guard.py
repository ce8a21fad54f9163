"""Reading files a repository (or a plugin) put there without trusting them, and showing what
they hold without letting it reach a terminal raw.

A project's `.claude` folder is written by whoever wrote the repository: a file there may be a
symbolic link to `/proc/self/environ` (the environment, secrets and all, would become a
skill's description), a FIFO or `/proc/kmsg` (a read that never returns), a folder linked to
`/usr` (a scan of the whole disk), a gigabyte of text, or a name full of terminal escapes. So:
a project's or plugin's folder and file must resolve inside its root (`within`); a file is
opened without blocking, read only when it is a regular file, and at most `MAX_FILE_BYTES`
(`read_text`); a folder is walked without following links, at most `MAX_ENTRIES` entries
(`markdown_files`); and whatever a file says is shown through `shown`, `one_line` and
`clean_body`, never as it stands.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from datetime import date
from pathlib import Path

MAX_FILE_BYTES = 1 << 20
"""The most of one definition file that is read (Claude Code's own are a few KiB)."""
MAX_ENTRIES = 1000
"""The most entries one folder of agents, skills or commands is searched through."""
FIELD_CAP = 10_000
"""The most characters of one front-matter text value kept (a description, a hint)."""
PROBLEM_CAP = 300
SHOWN_CAP = 60

PARSE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,  # bad dates and numbers, too many digits, a NUL in a path, bad UTF-8
    TypeError,
    AttributeError,
    KeyError,  # PyYAML's `!!bool maybe`
    RecursionError,  # deep nesting
    OverflowError,
    OSError,
)
"""What reading or parsing someone else's file may raise besides the parser's own error."""

_FORBIDDEN = tuple(Path(p) for p in ("/proc", "/sys", "/dev"))
"""Never definition files, whatever links there: reading them leaks or blocks."""

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline
_ALL_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Unreadable(Exception):
    """A file that is not read; its text says why (without the file's name)."""


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match[0]):02x}"


def clean_body(text: str) -> str:
    """`text` with control characters other than tab and newline written as `\\xNN`."""
    return _CONTROLS.sub(_escape, text)


def clean_line(text: str) -> str:
    """`text` with every control character (newlines too) written as `\\xNN`."""
    return _ALL_CONTROLS.sub(_escape, text)


def cut(text: str, cap: int) -> str:
    """`text`, or its first `cap` characters ending in `…`."""
    return text if len(text) <= cap else text[: cap - 1] + "…"


def one_line(text: str, cap: int = PROBLEM_CAP) -> str:
    """`text` as one clean line of at most `cap` characters (a problem line)."""
    return cut(clean_line(text), cap)


def flat(text: str) -> str:
    """`text` on one line: runs of whitespace (newlines among them) as one space, the other
    control characters escaped (a description or hint shown in a listing)."""
    return clean_line(" ".join(text.split()))


def shown(value: object) -> str:
    """A front-matter value as a problem line may show it: a scalar, cleaned and cut short;
    anything else (a list, a mapping, which YAML aliases may make enormous) by its type."""
    if isinstance(value, str):
        return one_line(value, SHOWN_CAP)
    if isinstance(value, int) and value.bit_length() > 128:
        return "a very large number"
    if value is None or isinstance(value, (bool, int, float, date)):
        return one_line(repr(value) if not isinstance(value, date) else str(value), SHOWN_CAP)
    return f"a {type(value).__name__}"


def within(path: Path, root: Path) -> bool:
    """Whether `path`, links followed, is inside `root`."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def forbidden(path: Path) -> bool:
    """Whether `path` leads (links followed) into /proc, /sys or /dev."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return True
    return any(resolved.is_relative_to(place) for place in _FORBIDDEN)


def read_text(path: Path, *, limit: int = MAX_FILE_BYTES) -> str:
    """A regular file's UTF-8 text; raises `Unreadable` for anything else, without waiting
    on a FIFO or a device."""
    if forbidden(path):
        raise Unreadable("leads into /proc, /sys or /dev; refused")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as error:
        raise Unreadable(f"cannot be read ({_reason(error)})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise Unreadable("is not a regular file (a folder, FIFO or device); refused")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise Unreadable(f"cannot be read ({_reason(error)})") from None
    if len(data) > limit:
        raise Unreadable(f"is larger than {limit // 1024} KiB; left out (make it smaller)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("is not UTF-8 text; save it as UTF-8") from None


def _reason(error: BaseException) -> str:
    return one_line(getattr(error, "strerror", None) or str(error), SHOWN_CAP)


def markdown_files(
    folder: Path, problems: list[str], *, keep: Callable[[str], bool] = lambda name: True
) -> tuple[Path, ...]:
    """The `.md` files under `folder` that `keep` accepts (by name), subfolders included,
    links to folders not followed, sorted; at most `MAX_ENTRIES` entries are looked at."""
    found: list[Path] = []
    seen = 0

    def failed(error: OSError) -> None:
        problems.append(one_line(f"{error.filename}: cannot be listed ({_reason(error)})"))

    for directory, subfolders, names in os.walk(folder, onerror=failed, followlinks=False):
        subfolders.sort()
        seen += len(subfolders) + len(names)
        if seen > MAX_ENTRIES:
            problems.append(
                one_line(
                    f"{folder}: more than {MAX_ENTRIES} entries; only the first are read "
                    "(keep definition folders small)"
                )
            )
            break
        found += [Path(directory, n) for n in sorted(names) if n.endswith(".md") and keep(n)]
    return tuple(sorted(found))
