"""A snapshot of the repository's git state for the system prompt: branch, status, recent commits.

Taken once, when the session starts, as Claude Code does, and said to be a snapshot, so the
model runs git itself for the state after its own changes. The two commands (`git status
--short --branch`, `git log --oneline -n 5`) run side by side through `exec.run_probes` under
one deadline, so a huge or slow repository costs at most `GIT_TIMEOUT_S` of start-up, and a
missing git costs nothing but a line saying so. `--no-optional-locks` keeps git from taking the
index lock a git of the user's may want at the same moment. The status is cut at 2,000
characters (Claude Code's figure) with a note; each commit line at 200.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stayer.exec import ProbeResult, run_probes

GIT_TIMEOUT_S = 2.0
"""The most start-up waits for git: past it, the model is told to ask git itself."""
MAX_STATUS_CHARS = 2_000
MAX_COMMITS = 5
MAX_COMMIT_CHARS = 200
_READ_BYTES = 16_384
_GIT = ("git", "--no-optional-locks", "-c", "core.quotepath=off", "-c", "color.ui=false")
STATUS_ARGV = (*_GIT, "status", "--short", "--branch")
LOG_ARGV = (*_GIT, "log", "--oneline", "--no-decorate", f"-n{MAX_COMMITS}")


@dataclass(frozen=True, slots=True)
class GitSnapshot:
    """What git said when the session started; `problems` says what it could not tell and why."""

    branch: str = ""
    """The branch name, `(detached HEAD)`, or empty when unknown."""
    upstream: str = ""
    """What the branch tracks and how far apart they are (`origin/main [ahead 1]`)."""
    status: str | None = None
    """`git status --short` lines (empty when the working tree is clean); None when unknown."""
    status_cut: bool = False
    commits: tuple[str, ...] | None = None
    """The latest commits, newest first (none yet on a new branch); None when unknown."""
    problems: tuple[str, ...] = ()


def take_git_snapshot(
    cwd: Path, *, env: Mapping[str, str], timeout_s: float = GIT_TIMEOUT_S
) -> GitSnapshot:
    """Ask git about the repository holding `cwd`; never raises, whatever git does."""
    quiet = {**env, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    status, log = run_probes(
        (STATUS_ARGV, LOG_ARGV), cwd=cwd, env=quiet, timeout_s=timeout_s, max_bytes=_READ_BYTES
    )
    return snapshot_from(status, log)


def snapshot_from(status: ProbeResult, log: ProbeResult) -> GitSnapshot:
    """The snapshot the two probes' answers make."""
    if status.problem.startswith("could not start"):
        return GitSnapshot(problems=(status.problem,))  # no git: one line says it all
    if status.exit_code != 0 and not status.cut:
        return GitSnapshot(problems=(f"git status: {_why(status)}",))
    header, _, lines = status.stdout.partition("\n")
    branch, upstream, unborn = parse_branch(header)
    text, cut = _cut_status(lines.rstrip("\n"), cut=status.cut)
    if log.exit_code == 0:
        commits = tuple(_clip(line) for line in log.stdout.splitlines()[:MAX_COMMITS])
        return GitSnapshot(branch, upstream, text, cut, commits)
    if unborn:  # git log refuses a branch with no commits; that is an answer too
        return GitSnapshot(branch, upstream, text, cut, ())
    return GitSnapshot(branch, upstream, text, cut, None, (f"git log: {_why(log)}",))


def parse_branch(header: str) -> tuple[str, str, bool]:
    """Branch, upstream and whether it has no commits yet, from `git status --branch`'s
    first line (`## main...origin/main [ahead 1]`, `## No commits yet on main`, ...)."""
    name = header.removeprefix("## ").strip()
    for unborn in ("No commits yet on ", "Initial commit on "):
        if name.startswith(unborn):
            return name.removeprefix(unborn), "", True
    if name.startswith("HEAD (no branch)"):
        return "(detached HEAD)", "", False
    branch, _, upstream = name.partition("...")
    return branch, upstream, False


def _cut_status(text: str, *, cut: bool) -> tuple[str, bool]:
    if len(text) <= MAX_STATUS_CHARS and not cut:
        return text, False
    kept = text[:MAX_STATUS_CHARS]
    return kept[: kept.rfind("\n")] if "\n" in kept else kept, True


def _clip(line: str) -> str:
    return line if len(line) <= MAX_COMMIT_CHARS else line[: MAX_COMMIT_CHARS - 1] + "…"


def _why(result: ProbeResult) -> str:
    if result.problem:
        return result.problem
    first = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "")
    return first or f"exited with status {result.exit_code}"


def git_section(snapshot: GitSnapshot) -> str:
    """The snapshot as a prompt section."""
    lines = [
        "# Git",
        "A snapshot taken when the session started; it does not follow your changes, so run "
        "git for the current state.",
    ]
    if snapshot.branch:
        tracking = f" (tracking {snapshot.upstream})" if snapshot.upstream else ""
        lines.append(f"Current branch: {snapshot.branch}{tracking}")
    if snapshot.status is not None:
        lines.append(f"Status:\n{snapshot.status}" if snapshot.status else "Status: clean")
        if snapshot.status_cut:
            lines.append(
                f"(status cut at {MAX_STATUS_CHARS:,} characters; run `git status` for the rest)"
            )
    if snapshot.commits:
        lines.append("Recent commits:\n" + "\n".join(snapshot.commits))
    elif snapshot.commits is not None:
        lines.append("Recent commits: none yet")
    lines.extend(f"Unavailable: {problem}" for problem in snapshot.problems)
    return "\n".join(lines)
