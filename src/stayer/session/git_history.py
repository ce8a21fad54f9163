"""Whether a git call that prints history could print a file the read rules forbid.

`git show`, `git log -p`, `git diff`, `git cat-file` and their kin print what files hold, or
held in any commit: a secret committed once stays in the history after it is deleted. A shell
command's reads mark such a call (`HISTORY` + the folder it runs in, from the Bash tool); here
each mark is settled against the Read deny and ask rules in force. git itself is asked, with
the rules' patterns as pathspecs, whether any commit reachable from any ref or reflog, or the
index, holds a matching path: if one does (or git cannot say within the deadline), the call
counts as reading the whole repository, which those rules then refuse or ask about; if none
does, the mark is dropped and the call goes on unasked. So a `Read(.env)` rule for a file
that was never committed leaves `git diff` alone, and a rule for a tracked file does not.

Answers are kept per repository, patterns and state of the refs and index, so the question is
asked once until a commit, checkout or stage changes the answer. git runs with every setting
that could make it run a command of the repository's turned off.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

from stayer.context.git import SAFE_SETTINGS, git_argv, git_env
from stayer.exec import run_probes
from stayer.permissions import Rule
from stayer.tools.base import HISTORY_READ as HISTORY

HISTORY_TIMEOUT_S = 2.0


class HistoryCheck:
    """Settles history marks in a call's reads; remembers answers for the session."""

    def __init__(self) -> None:
        self._answers: dict[tuple[object, ...], bool] = {}

    async def settle(
        self, paths: tuple[str, ...] | None, rules: Iterable[Rule], cwd: Path
    ) -> tuple[tuple[str, ...] | None, Path | None]:
        """`paths` without their history marks, and the repository whose history holds a file
        one of `rules` names (None when no mark's does)."""
        if paths is None or not any(path.startswith(HISTORY) for path in paths):
            return paths, None
        patterns = tuple(rule.path_pattern(cwd) for rule in rules if rule.specifier)
        kept = tuple(path for path in paths if not path.startswith(HISTORY))
        for path in paths:
            if not path.startswith(HISTORY) or not patterns:
                continue
            from stayer.exec.git_calls import repository_of  # with the first history read

            root = repository_of(Path(path.removeprefix(HISTORY)))
            if root is not None and await self._holds(root, patterns):
                return kept, root
        return kept, None

    async def _holds(self, root: Path, patterns: tuple[str, ...]) -> bool:
        specs = pathspecs(root, patterns)
        if specs is None:
            return True  # a pattern that cannot be put as a pathspec: assume the worst
        if not specs:
            return False  # every rule is about files outside this repository
        state = _state(root)
        if state is None:  # refs kept elsewhere (a worktree, a bare repository): ask each time
            return await asyncio.to_thread(_ask_git, root, specs)
        key = (root, specs, *state)
        if key not in self._answers:
            self._answers[key] = await asyncio.to_thread(_ask_git, root, specs)
        return self._answers[key]


def pathspecs(root: Path, patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The rules' absolute path patterns as git pathspecs under `root` (glob magic, any case,
    each also as a folder's contents); () for patterns outside it, None for one that reaches
    into it in a way a pathspec cannot say."""
    prefix = str(root).rstrip("/") + "/"
    specs: list[str] = []
    for pattern in patterns:
        if pattern.startswith(prefix):
            relative = pattern[len(prefix) :]
        else:
            literal = pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
            if not prefix.startswith(literal) or "**" not in pattern:
                if prefix.startswith(literal):
                    return None  # reaches under the root with a single-level wildcard
                continue
            relative = "**" + pattern[pattern.index("**") + 2 :]
        relative = relative.rstrip("/") or "**"
        specs += [f":(glob,icase){relative}", f":(glob,icase){relative}/**"]
    return tuple(dict.fromkeys(specs))


def _state(root: Path) -> tuple[int, ...] | None:
    """What changes when the answer may: the index, HEAD, the refs and the reflog; None when
    they are not in `root/.git` (a `.git` file names another place), so a kept answer could
    not be told stale."""
    if not (root / ".git").is_dir():
        return None
    stamps: list[int] = []
    for name in ("index", "HEAD", "packed-refs", "logs/HEAD", "refs/heads", "refs/stash"):
        try:
            stamps.append((root / ".git" / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return tuple(stamps)


def _ask_git(root: Path, specs: tuple[str, ...]) -> bool:
    """Whether any commit, reflog entry or the index holds a path matching `specs`; True when
    git cannot tell. git runs as the start-up snapshot runs it: nothing a configuration or a
    GIT_ variable names (neither command converts or diffs a file)."""
    history, index = run_probes(
        (
            git_argv(
                SAFE_SETTINGS, ("log", "--all", "--reflog", "--format=%H", "-1", "--", *specs)
            ),
            git_argv(SAFE_SETTINGS, ("ls-files", "--cached", "--", *specs)),
        ),
        cwd=root,
        env=git_env(os.environ),
        timeout_s=HISTORY_TIMEOUT_S,
        max_bytes=4_096,
    )
    if history.exit_code != 0 or index.exit_code != 0:
        return True
    return bool(history.stdout.strip() or index.stdout.strip())
