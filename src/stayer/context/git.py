"""A snapshot of the repository's git state for the system prompt: branch, status, recent commits.

Taken once, when the session starts, as Claude Code does, and said to be a snapshot, so the
model runs git itself for the state after its own changes. `git status --short --branch` and
`git log --oneline -n 5` run through `exec.run_probes` under one deadline, so a huge or slow
repository costs at most `GIT_TIMEOUT_S` of start-up, and a missing git costs nothing but a line
saying so. `--no-optional-locks` keeps git from taking the index lock a git of the user's may
want at the same moment. The status is cut at 2,000 characters (Claude Code's figure) with a
note; each commit line at 200.

The snapshot runs before any tool call and outside any sandbox, so it must run no program that
a repository (or anything it includes, or the settings' environment) names: a repository a model
wrote to under `--sandbox` would otherwise escape it at the next start. So git gets an
environment of our own (no GIT_ variable of the session's: `GIT_DIR`, `GIT_EXTERNAL_DIFF`,
`GIT_CONFIG_PARAMETERS`, ...), and `-c` settings that beat every configuration file: no
fsmonitor, hooks from /dev/null, no signature checks, no submodule status (that runs git in the
submodule, under its own configuration), no fetching of missing objects. Filter and diff drivers
have names of the repository's choosing, so `git config` first lists the ones defined, and each
gets empty commands (a name `-c` cannot spell, holding `=`, means no status at all); `git log
--oneline` never converts files, so it runs alongside that listing. Nor may git write where a
configuration says: trace2 targets, which only variables can override, are off. What is left:
a process rewriting the configuration in the few milliseconds between the listing and the
status could slip a new driver in.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from stayer.exec import ProbeResult, run_probes

GIT_TIMEOUT_S = 2.0
"""The most start-up waits for git: past it, the model is told to ask git itself."""
MAX_STATUS_CHARS = 2_000
MAX_COMMITS = 5
MAX_COMMIT_CHARS = 200
_READ_BYTES = 16_384
_GIT = ("git", "--no-pager", "--no-optional-locks")
DRIVERS = ("config", "--null", "--name-only", "--get-regexp", r"^(filter|diff|merge)\.")
STATUS = ("status", "--short", "--branch", "--ignore-submodules=dirty")
LOG = (
    "log",
    "--oneline",
    "--no-decorate",
    "--no-show-signature",
    "--no-ext-diff",
    "--no-textconv",
    f"-n{MAX_COMMITS}",
)

SAFE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.quotePath", "false"),
    ("color.ui", "false"),
    ("log.showSignature", "false"),
    ("status.submoduleSummary", "false"),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""Settings given on git's command line (`-c`), so they win over every configuration file."""

DRIVER_COMMANDS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
}
"""The keys of a named driver that hold a command to run."""

_KEPT_VARIABLES = (
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CEILING_DIRECTORIES",
)
"""What git keeps of the session's environment: where to find git and the user's own settings
(which are neutralised like the repository's), nothing that runs a program or moves the
repository."""


class GitSnapshot(Struct, frozen=True):
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


def git_tracks(path: Path) -> bool:
    """Whether git tracks the file at `path` (or the file a link there leads to); True when
    git cannot tell. git runs as the start-up snapshot runs it: nothing a configuration or a
    `GIT_` variable names.

    Only the work tree the file sits in is asked, found by its `.git` and named to git
    outright: a repository can ship a folder that looks like a bare repository (`HEAD`,
    `objects/`, a `config` saying `worktree = .`) beside a file it wants taken as untracked,
    and git left to find a repository from the file's folder would ask that one."""
    absolute = Path(os.path.abspath(path))
    for candidate in dict.fromkeys((absolute, Path(os.path.realpath(absolute)))):
        root = work_tree_of(candidate.parent)
        if root is None:
            continue
        settings = (("safe.bareRepository", "explicit"), *SAFE_SETTINGS)
        argv = git_argv(settings, ("--literal-pathspecs", f"--git-dir={root / '.git'}",
                        f"--work-tree={root}", "ls-files", "--cached", "--",
                        str(candidate.relative_to(root))))  # fmt: skip
        (answer,) = run_probes(
            [argv], cwd=root, env=git_env(os.environ), timeout_s=GIT_TIMEOUT_S, max_bytes=4_096
        )
        if answer.exit_code != 0 or answer.stdout.strip():
            return True
    return False


def work_tree_of(folder: Path) -> Path | None:
    """The work tree `folder` is in: the first folder up from it holding a `.git` (a folder,
    or a file naming one, as a linked work tree has); a bare repository never counts."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def take_git_snapshot(
    cwd: Path, *, env: Mapping[str, str], timeout_s: float = GIT_TIMEOUT_S
) -> GitSnapshot:
    """Ask git about the repository holding `cwd`; never raises, whatever git does, and runs
    no program any git configuration or GIT_ variable names."""
    deadline = time.monotonic() + timeout_s
    drivers, log = run_probes(
        (git_argv(SAFE_SETTINGS, DRIVERS), git_argv(SAFE_SETTINGS, LOG)),
        cwd=cwd,
        env=git_env(env),
        timeout_s=timeout_s,
        max_bytes=_READ_BYTES,
    )
    if drivers.exit_code not in (0, 1):  # 1: no driver is defined
        return GitSnapshot(problems=(_problem("git config", drivers, timeout_s),))
    blanked = driver_settings(drivers.stdout)
    if blanked is None:
        return GitSnapshot(problems=(UNNAMEABLE_DRIVER,))
    (status,) = run_probes(
        (git_argv((*SAFE_SETTINGS, *blanked), STATUS),),
        cwd=cwd,
        env=git_env(env),
        timeout_s=max(0.0, deadline - time.monotonic()),
        max_bytes=_READ_BYTES,
    )
    return snapshot_from(status, log, timeout_s=timeout_s)


UNNAMEABLE_DRIVER = (
    "git status: not asked, since a filter or diff driver's name holds '=', so git could not "
    "be told to leave its command out"
)


def git_argv(settings: Sequence[tuple[str, str]], command: Sequence[str]) -> tuple[str, ...]:
    """git with `settings` on its command line (`-c`, which beats every configuration file and
    which every git knows; `GIT_CONFIG_COUNT` would be ignored by a git older than 2.31),
    then `command`."""
    options = [part for key, value in settings for part in ("-c", f"{key}={value}")]
    return (*_GIT, *options, *command)


def git_env(env: Mapping[str, str]) -> dict[str, str]:
    """The whole environment git runs in: a few of `env`'s variables and quiet defaults."""
    kept = {name: env[name] for name in _KEPT_VARIABLES if name in env}
    return kept | {
        "LC_ALL": "C",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": "none",  # no transport at all, whatever protocol.* says
        "GIT_NO_LAZY_FETCH": "1",
        # trace2 targets come from the global file, where -c cannot reach them, and write
        # wherever they say (another file's end, say); these variables win over the file.
        "GIT_TRACE2": "0",
        "GIT_TRACE2_PERF": "0",
        "GIT_TRACE2_EVENT": "0",
    }


def driver_settings(listing: str) -> tuple[tuple[str, str], ...] | None:
    """Empty commands for every filter, diff and merge driver in `git config`'s NUL-separated
    list of names; a filter is also made optional, so that git goes on without it. None when
    a driver's name holds `=`, which `-c name=value` cannot say."""
    drivers: dict[tuple[str, str], None] = {}
    for name in listing.split("\0"):
        section, _, rest = name.partition(".")
        subsection, dot, _ = rest.rpartition(".")
        if dot and section in DRIVER_COMMANDS:
            drivers[(section, subsection)] = None
    if any("=" in subsection for _, subsection in drivers):
        return None
    settings: list[tuple[str, str]] = []
    for section, subsection in drivers:
        settings += [(f"{section}.{subsection}.{key}", "") for key in DRIVER_COMMANDS[section]]
        if section == "filter":
            settings.append((f"filter.{subsection}.required", "false"))
    return tuple(settings)


def snapshot_from(status: ProbeResult, log: ProbeResult, *, timeout_s: float) -> GitSnapshot:
    """The snapshot the two probes' answers make."""
    if status.problem.startswith("could not start"):
        return GitSnapshot(problems=(status.problem,))  # no git: one line says it all
    if status.exit_code != 0 and not status.cut:
        return GitSnapshot(problems=(_problem("git status", status, timeout_s),))
    header, _, lines = status.stdout.partition("\n")
    branch, upstream, unborn = parse_branch(header)
    text, cut = _cut_status(lines.rstrip("\n"), cut=status.cut)
    if log.exit_code == 0:
        commits = tuple(_clip(line) for line in log.stdout.splitlines()[:MAX_COMMITS])
        return GitSnapshot(branch, upstream, text, cut, commits)
    if unborn:  # git log refuses a branch with no commits; that is an answer too
        return GitSnapshot(branch, upstream, text, cut, ())
    problem = _problem("git log", log, timeout_s)
    return GitSnapshot(branch, upstream, text, cut, None, (problem,))


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


def _problem(what: str, result: ProbeResult, timeout_s: float) -> str:
    """What went wrong with one git command, in one line."""
    if result.problem.startswith("could not start"):
        return result.problem
    if result.problem.startswith("no answer within"):
        # The status runs on what is left of the deadline, so name the whole of it.
        return f"{what}: no answer within {timeout_s:g} s"
    if result.problem:
        return f"{what}: {result.problem}"
    first = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "")
    return f"{what}: {first or f'exited with status {result.exit_code}'}"


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
