"""Tab completion in the input: `/command` names at its start, `@path` mentions anywhere.

Commands come from a callable giving (name, summary) pairs, so whatever fills the command
table (built-ins now, custom commands and skills later) is offered without this module knowing.

Paths are the project's files and the folders that hold them, as ripgrep lists them
(`rg --files --hidden`: what .gitignore and .ignore leave, version-control folders left out).
The listing runs in a thread and is kept; it is refreshed, again in a thread, at most every
`REFRESH_S` seconds when a completion asks for it, so typing never waits for a walk of the
tree; searching it runs in a thread too when prompt_toolkit completes while typing
(`get_completions_async`). A query matches a path when its characters appear in the path in
order (case is ignored); paths holding the query as one piece come first, then the shortest. A
path with a space is offered quoted: `@"my notes/todo.md"`.
"""

from __future__ import annotations

import asyncio
import heapq
import os
import re
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from stayer.exec import run_probes
from stayer.exec.child_env import child_env
from stayer.tools.builtin import VCS_DIRECTORIES, find_ripgrep

REFRESH_S = 5.0
"""The oldest a listing may be before a completion starts a new one."""
LIST_TIMEOUT_S = 20.0
LIST_MAX_BYTES = 64 * 1024 * 1024
MAX_SHOWN = 50

CommandSource = Callable[[], Iterable[tuple[str, str] | tuple[str, str, str]]]
"""The commands on offer now: (name without the slash, one-line summary), and what may follow
the name (`<name>`, shown beside it) when something may."""

_MENTION = re.compile(r'(?:^|(?<=\s))@(?P<query>"[^"]*|[^\s"]*)$')
_COMMAND = re.compile(r"^/(?P<query>\S*)$")


class FileIndex:
    """The project's paths (files, and folders ending in `/`), listed in a thread."""

    def __init__(
        self,
        root: Path,
        env: Mapping[str, str] | None = None,
        *,
        refresh_s: float = REFRESH_S,
        on_update: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self._env = child_env(env if env is not None else os.environ)
        self._refresh_s = refresh_s
        self._on_update = on_update
        self._paths: tuple[str, ...] = ()
        self._started_at: float | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self.listed = threading.Event()
        """Set once the first listing is in (for whoever waits on it: a test, a benchmark).
        `on_update` is called from the listing's thread (prompt_toolkit's `invalidate` may
        be)."""

    def paths(self) -> tuple[str, ...]:
        """The paths as last listed (none before the first listing); starts a new listing
        in the background when this one is older than the refresh interval."""
        self.refresh(force=False)
        return self._paths

    def refresh(self, *, force: bool = True) -> threading.Event:
        """Start a listing unless one is running (or, without `force`, one is recent); the
        event is set when no listing is running any more."""
        with self._lock:
            now = time.monotonic()
            running = not self._idle.is_set()
            recent = self._started_at is not None and now - self._started_at < self._refresh_s
            if running or (recent and not force):
                return self._idle
            self._started_at = now
            self._idle.clear()
        threading.Thread(target=self._list, name="stayer-file-index", daemon=True).start()
        return self._idle

    def _list(self) -> None:
        try:
            found = list_paths(self.root, self._env)
            if found is not None:
                self._paths = found
        finally:
            self._idle.set()
            self.listed.set()
            if self._on_update is not None:
                self._on_update()


def list_paths(
    root: Path, env: Mapping[str, str], *, max_bytes: int = LIST_MAX_BYTES
) -> tuple[str, ...] | None:
    """The files under `root` ripgrep does not ignore and the folders holding them, relative,
    shortest first (as many as were listed in time and room); None when rg is missing or
    failed."""
    rg = find_ripgrep()
    if rg is None:
        return None
    argv = [str(rg), "--files", "--hidden", "--no-messages", "--no-config"]
    for name in VCS_DIRECTORIES:
        argv += ["--glob", f"!{name}"]
    (result,) = run_probes([argv], cwd=root, env=env, timeout_s=LIST_TIMEOUT_S, max_bytes=max_bytes)
    if result.exit_code not in (0, 1) and not result.stdout:
        return None
    lines = result.stdout.split("\n")
    # the last piece is empty after a whole listing, a cut path after one stopped short (too
    # long, too slow: a home folder); what was listed is still worth offering
    files = [line.removeprefix("./") for line in lines[:-1] if line]
    folders = {f"{parent}/" for path in files for parent in _parents(path)}
    return tuple(sorted([*files, *folders], key=lambda path: (len(path), path)))


def _parents(path: str) -> Iterator[str]:
    parts = path.split("/")[:-1]
    for end in range(1, len(parts) + 1):
        yield "/".join(parts[:end])


def fuzzy_matches(query: str, paths: Sequence[str], *, limit: int = MAX_SHOWN) -> list[str]:
    """The paths holding `query`'s characters in order (case ignored): those holding it as one
    piece first, then the shortest."""
    return PathMatcher().matches(query, paths, limit=limit)


def subsequence(folded_query: str) -> Callable[[str], object]:
    """A test for folded paths holding the query's characters in order."""
    pattern = ".*".join(re.escape(char) for char in folded_query)
    return re.compile(pattern).search


class PathMatcher:
    """`fuzzy_matches` for one keystroke after another: the paths are folded to one case once
    per listing, and a query that extends the last one searches only what matched it (a
    100,000-file listing is searched in tens of milliseconds, then less with each key)."""

    def __init__(self) -> None:
        self._paths: Sequence[str] = ()
        self._folded: list[str] = []
        self._query: str | None = None
        self._matched: list[int] = []
        self._lock = threading.Lock()  # searches from threads, one after another

    def matches(self, query: str, paths: Sequence[str], *, limit: int = MAX_SHOWN) -> list[str]:
        """As `fuzzy_matches`."""
        with self._lock:
            return self._matches(query, paths, limit)

    def _matches(self, query: str, paths: Sequence[str], limit: int) -> list[str]:
        if paths is not self._paths:
            self._paths, self._folded, self._query = paths, [p.casefold() for p in paths], None
        folded_query = query.casefold()
        narrowing = self._query is not None and folded_query.startswith(self._query)
        pool = self._matched if narrowing else range(len(paths))
        test, folded = subsequence(folded_query), self._folded
        matched = [index for index in pool if test(folded[index])]
        self._query, self._matched = folded_query, matched

        def rank(index: int) -> tuple[bool, int, str]:
            path = paths[index]
            return folded_query not in folded[index], len(path), path

        return [paths[index] for index in heapq.nsmallest(limit, matched, key=rank)]


def mention(path: str) -> str:
    """`@path` as it goes into the input: quoted when it holds a space."""
    return f'@"{path}"' if any(char.isspace() for char in path) else f"@{path}"


class ReplCompleter(Completer):
    """Completes `/name` at the start of the input and `@path` anywhere (see the module)."""

    def __init__(self, commands: CommandSource, files: FileIndex | None) -> None:
        self._commands = commands
        self._files = files
        self._matcher = PathMatcher()

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        command = _COMMAND.match(before)
        if command is not None:
            yield from self._command_completions(command["query"])
            return
        found = _MENTION.search(before)
        if found is not None and self._files is not None:
            yield from self._path_completions(found["query"])

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """As `get_completions`, a path search done in a thread, so the keys typed meanwhile
        are not held up by a large listing."""
        before = document.text_before_cursor
        found = _MENTION.search(before)
        if _COMMAND.match(before) is None and found is not None and self._files is not None:
            paths = await asyncio.to_thread(list, self._path_completions(found["query"]))
        else:
            paths = list(self.get_completions(document, complete_event))
        for completion in paths:
            yield completion

    def _command_completions(self, query: str) -> Iterator[Completion]:
        offered = {entry[0]: entry for entry in self._commands()}
        names = sorted(offered)
        prefixed = [name for name in names if name.startswith(query)]
        others = [name for name in fuzzy_matches(query, names) if name not in prefixed]
        for name in [*prefixed, *others]:
            _, summary, *hint = offered[name]
            yield Completion(
                f"/{name}",
                start_position=-(len(query) + 1),
                display=" ".join([f"/{name}", *hint]).rstrip(),
                display_meta=summary,
            )

    def _path_completions(self, query: str) -> Iterator[Completion]:
        assert self._files is not None
        typed = len(query) + 1
        for path in self._matcher.matches(query.removeprefix('"'), self._files.paths()):
            yield Completion(mention(path), start_position=-typed, display=path)
