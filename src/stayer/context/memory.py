"""Project memory: the instruction files read into the system prompt when a session starts.

Where they come from, in the order they are read (a later file takes precedence, as in Claude
Code, where the files nearer the working directory come later and weigh more):

1. the user's own, for every project: Claude Code's user file (`~/.claude/CLAUDE.md`, or in
   `CLAUDE_CONFIG_DIR`), then stayer's folder (`~/.stayer`, or `STAYER_CONFIG_DIR`): `AGENTS.md`,
   `CLAUDE.md`, `STAYER.md`. Claude Code's file is read because stayer reads a project's
   CLAUDE.md as Claude Code does, and someone moving over should not have to copy their own
   instructions; stayer's folder comes after it, so what is written for stayer wins;
2. the project: each directory from the repository's top level (the nearest one holding
   `.git`) down to the working directory, and in each `AGENTS.md` (the ecosystem's name),
   `CLAUDE.md` and `.claude/CLAUDE.md` (Claude Code's), `STAYER.md` (ours, the most specific),
   then `CLAUDE.local.md` (the user's private notes there, last, as Claude Code reads them).
   Outside a repository every directory from just below the filesystem root down counts, as
   in Claude Code (which never reads the root itself). Directories above a repository belong
   to other projects or to the user's wider setup, whose place is the user's folder. A
   repository whose top level is the home directory or above it (a dotfiles repository in
   `~`) counts as none: it would make every project below home, and `~/.ssh`, one project.

`@path` imports (see `imports`) are read after the file that names them, relative to that file,
`~/` meaning the home directory, up to five hops deep as in Claude Code. Each file is read once:
a file reached again (a cycle, or a CLAUDE.md that imports an AGENTS.md already read) and a
file with the very text of one already read are noted and skipped.

Two guards. A project's file, and what it imports, must really lie inside the project (its
repository, or its own directory outside one), so a cloned repository cannot pull
`~/.ssh/id_rsa` into the prompt through an import or a symlink; Claude Code asks before it
follows an import out of the project, and with nobody to ask, stayer does not follow it. A
directory that holds the home directory (home itself, and those above it, read on the walk
outside a repository) is no boundary for imports: its files may import only files directly
beside them, since below it lie every project and the user's keys. The user's own files may
import from anywhere. And a file that someone other than the user or root could have left in a
directory anyone may write (`/tmp`; see `ownership`) is skipped, whether found on the walk or
named by an import, the user's imports included.

Sizes: a file is cut at 40,000 characters (the size at which Claude Code warns that a memory
file is large), and all of them together at 100,000; when they go over, the files read first,
which weigh least, give way. The model is told what was cut or left out, so it can Read it.
A missing import is noted, never an error; `@alice` in prose is, after all, not a file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from msgspec import Struct
from msgspec.structs import replace

from .imports import import_paths
from .ownership import OwnerCheck, ours_or_root, planted

MemorySource = Literal["user", "project", "local", "import"]
SkipReason = Literal[
    "not_found",
    "not_a_file",
    "unreadable",
    "not_text",
    "empty",
    "already_loaded",
    "same_text",
    "cycle",
    "too_deep",
    "outside_project",
    "untrusted_owner",
    "over_total",
]
USER_NAMES = ("AGENTS.md", "CLAUDE.md", "STAYER.md")
PROJECT_NAMES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "STAYER.md")
LOCAL_NAMES = ("CLAUDE.local.md",)
_TRAILING = ".,;:!?)]}'\""


class MemoryLimits(Struct, frozen=True, kw_only=True):
    """How far imports go and how much text the files may bring."""

    max_import_depth: int = 5
    max_file_chars: int = 40_000
    max_total_chars: int = 100_000


DEFAULT_LIMITS = MemoryLimits()


class MemoryFile(Struct, frozen=True):
    """A file read into the prompt: `text` is what the model sees of it."""

    path: Path
    source: MemorySource
    text: str
    size: int
    """Its size on disk, in bytes."""
    imported_by: Path | None = None
    cut: bool = False
    """Whether only the start of it is in `text`."""


class SkippedFile(Struct, frozen=True):
    """A file that was found or named but is not in the prompt, and why."""

    path: Path
    reason: SkipReason
    detail: str = ""
    imported_by: Path | None = None

    @property
    def note(self) -> str:
        """One line for people: the file, why it was left out, who named it."""
        named = f" (imported by {self.imported_by})" if self.imported_by else ""
        return f"{self.path}{named}: {self.detail or self.reason.replace('_', ' ')}"


class Memory(Struct, frozen=True):
    """What was loaded, in order (later takes precedence), and what was skipped."""

    files: tuple[MemoryFile, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        """The loaded files' paths, in load order."""
        return tuple(str(file.path) for file in self.files)

    @property
    def notes(self) -> tuple[str, ...]:
        """One line for each file cut short or left out."""
        cut = [
            f"{file.path}: cut to its first {len(file.text):,} characters"
            for file in self.files
            if file.cut
        ]
        return (*cut, *(skipped.note for skipped in self.skipped))


class Candidate(Struct, frozen=True):
    """A place a memory file may be; `boundary` is where it and its imports must lie (None:
    anywhere)."""

    path: Path
    source: MemorySource
    boundary: Path | None
    imports_beside: bool = False
    """Whether what it imports must lie directly in `boundary`, not below it (the files of a
    directory that holds the home directory)."""


def project_root(cwd: Path) -> Path | None:
    """The top level of the git repository holding `cwd` (the nearest `.git`), if any."""
    return next((d for d in (cwd, *cwd.parents) if (d / ".git").exists()), None)


def project_directories(cwd: Path, root: Path | None) -> tuple[Path, ...]:
    """The directories whose memory files count, outermost first: from `root` (the repository)
    down to `cwd`; outside a repository, from just below the filesystem root."""
    chain = (cwd, *cwd.parents)
    if root is not None and root in chain:
        chain = chain[: chain.index(root) + 1]
    elif len(chain) > 1:
        chain = chain[:-1]  # never the filesystem root itself
    return tuple(reversed(chain))


def memory_candidates(
    cwd: Path,
    *,
    user_dirs: Sequence[tuple[Path, Sequence[str]]],
    root: Path | None,
    home: Path,
) -> tuple[Candidate, ...]:
    """Every place a memory file may be, in reading order; `user_dirs` are the user's folders
    with the names each may hold, `root` the repository (none when it holds `home`)."""
    found = [
        Candidate(folder / name, "user", None) for folder, names in user_dirs for name in names
    ]
    if root is not None and _holds(root, home):
        root = None
    for directory in project_directories(cwd, root):
        boundary = directory if root is None else root
        beside = root is None and _holds(directory, home)
        places: tuple[tuple[tuple[str, ...], MemorySource], ...] = (
            (PROJECT_NAMES, "project"),
            (LOCAL_NAMES, "local"),
        )
        for names, source in places:
            found.extend(Candidate(directory / name, source, boundary, beside) for name in names)
    return tuple(found)


def _holds(directory: Path, home: Path) -> bool:
    """Whether `directory` is `home` or one of the directories above it."""
    return Path(os.path.realpath(home)).is_relative_to(os.path.realpath(directory))


def load_memory(
    candidates: Sequence[Candidate],
    *,
    home: Path,
    limits: MemoryLimits = DEFAULT_LIMITS,
    trusted: OwnerCheck = ours_or_root,
) -> Memory:
    """Read the candidates that exist and everything they import, within `limits`; `trusted`
    says whose files in a directory anyone may write are taken as the user's own."""
    loader = _Loader(home, limits, trusted)
    for candidate in candidates:
        if os.path.lexists(candidate.path):
            reach = _Reach(candidate.boundary, candidate.imports_beside)
            loader.load(candidate.path, candidate.source, reach, chain=())
    files, over = fit_total(loader.files, limits.max_total_chars)
    return Memory(tuple(files), (*loader.skipped, *over))


def fit_total(
    files: Sequence[MemoryFile], max_chars: int, *, min_part: int = 1_000
) -> tuple[list[MemoryFile], list[SkippedFile]]:
    """Keep the files within `max_chars` in all, the last ones first (they take precedence):
    the first file that does not fit is cut to what is left, if that is worth showing, and
    the ones before it are left out."""
    kept: list[MemoryFile] = []
    left_out: list[SkippedFile] = []
    room = max_chars
    for file in reversed(files):
        if len(file.text) <= room:
            kept.append(file)
            room -= len(file.text)
        elif room >= min_part:
            kept.append(replace(file, text=_cut(file.text, room), cut=True))
            room = 0
        else:
            detail = f"left out: the memory files reached {max_chars:,} characters in all"
            left_out.append(SkippedFile(file.path, "over_total", detail, file.imported_by))
    return kept[::-1], left_out[::-1]


def _cut(text: str, max_chars: int) -> str:
    """The start of `text`, ending at a line break when one is near the limit."""
    head = text[:max_chars]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline >= max_chars * 0.8 else head


def _inside(path: str, boundary: Path) -> bool:
    real_boundary = os.path.realpath(boundary)
    return path == real_boundary or path.startswith(real_boundary.rstrip(os.sep) + os.sep)


class _Reach(NamedTuple):
    """Where a file and what it imports must lie: inside `boundary` (None: anywhere), and
    imports directly in it when `beside`."""

    boundary: Path | None
    beside: bool = False

    def refuses(self, real: str, *, imported: bool) -> bool:
        if self.boundary is None:
            return False
        if imported and self.beside:
            return os.path.dirname(real) != os.path.realpath(self.boundary)
        return not _inside(real, self.boundary)

    def planted(self, path: Path, real: str, trusted: OwnerCheck) -> bool:
        """Whether the file as named, or where it really is, could have been left by anyone."""
        anchor = self.boundary if self.boundary is not None else Path(path.anchor)
        real_anchor = Path(os.path.realpath(anchor))
        return planted(path, anchor, trusted=trusted) or planted(
            Path(real), real_anchor, trusted=trusted
        )


class _Loader:
    """Reads files and follows imports; remembers what it read, to read nothing twice."""

    def __init__(self, home: Path, limits: MemoryLimits, trusted: OwnerCheck) -> None:
        self.home = home
        self.limits = limits
        self.trusted = trusted
        self.files: list[MemoryFile] = []
        self.skipped: list[SkippedFile] = []
        self._seen: dict[str, Path] = {}
        self._texts: dict[str, Path] = {}

    def load(
        self,
        path: Path,
        source: MemorySource,
        reach: _Reach,
        *,
        chain: tuple[str, ...],
        imported_by: Path | None = None,
    ) -> None:
        """Read `path` (reached through the imports in `chain`), then what it imports."""
        real = os.path.realpath(path)
        problem = self._refusal(path, real, source, reach, chain)
        read = _read(path, self.limits.max_file_chars) if problem is None else problem
        if not isinstance(read, _Read):
            self.skipped.append(SkippedFile(path, read[0], read[1], imported_by))
            return
        text = read.text
        stripped = text.strip()
        if stripped in self._texts:
            detail = f"the same text as {self._texts[stripped]}, already loaded"
            self.skipped.append(SkippedFile(path, "same_text", detail, imported_by))
            return
        self._seen[real] = path
        self._texts[stripped] = path
        self.files.append(MemoryFile(path, source, text, read.size, imported_by, read.cut))
        self._follow(path, text, reach, (*chain, real))

    def _refusal(
        self,
        path: Path,
        real: str,
        source: MemorySource,
        reach: _Reach,
        chain: tuple[str, ...],
    ) -> tuple[SkipReason, str] | None:
        if real in chain:
            return "cycle", "imports itself through a chain of imports; read once"
        if real in self._seen:
            return "already_loaded", f"already loaded as {self._seen[real]}"
        if reach.refuses(real, imported=source == "import"):
            where = "directly in" if reach.beside and source == "import" else "inside"
            return "outside_project", (
                f"lies outside the project ({reach.boundary}); a project's files may only "
                f"bring in files {where} it, so import it from your own STAYER.md instead"
            )
        if source != "user" and reach.planted(path, real, self.trusted):
            return "untrusted_owner", (
                "it, or a directory on the way to it, belongs to another user and lies in a "
                "directory anyone may write; not trusted"
            )
        return None

    def _follow(self, path: Path, text: str, reach: _Reach, chain: tuple[str, ...]) -> None:
        depth = len(chain)
        for written in import_paths(text):
            target = self._resolve(path, written)
            if depth > self.limits.max_import_depth:
                detail = f"not imported: more than {self.limits.max_import_depth} imports deep"
                self.skipped.append(SkippedFile(target, "too_deep", detail, path))
                continue
            if not os.path.lexists(target):
                detail = f"@{written} names no file"
                self.skipped.append(SkippedFile(target, "not_found", detail, path))
                continue
            self.load(target, "import", reach, chain=chain, imported_by=path)

    def _resolve(self, importer: Path, written: str) -> Path:
        """Where `@written` in `importer` points; a sentence's closing punctuation is let go
        when the path with it names nothing (`see @AGENTS.md.`)."""
        options = [written]
        trimmed = written.rstrip(_TRAILING)
        if trimmed and trimmed != written:
            options.append(trimmed)
        paths = [self._absolute(importer, option) for option in options]
        return next((p for p in paths if os.path.lexists(p)), paths[0])

    def _absolute(self, importer: Path, written: str) -> Path:
        if written.startswith("~/"):
            return Path(os.path.normpath(self.home / written[2:]))
        return Path(os.path.normpath(importer.parent / written))


class _Read(NamedTuple):
    text: str
    size: int
    cut: bool


def _read(path: Path, max_chars: int) -> _Read | tuple[SkipReason, str]:
    """The file's text (at most its first `max_chars` characters) and size, or why not."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return "not_a_file", "not a regular file"
        with path.open("rb") as handle:
            raw = handle.read(max_chars * 4 + 4)  # enough for max_chars of any UTF-8
    except OSError as error:
        return "unreadable", f"could not be read: {error.strerror or error}"
    if b"\0" in raw:
        return "not_text", "not a text file"
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if not text.strip():
        return "empty", "empty"
    if len(text) > max_chars:
        return _Read(_cut(text, max_chars), info.st_size, cut=True)
    return _Read(text, info.st_size, cut=len(raw) < info.st_size)
