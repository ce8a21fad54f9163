"""Real git repositories for the batch's tests, and a byte-level picture of one to compare."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ISOLATED = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_OPTIONAL_LOCKS": "0",
}


def git(cwd: Path, *arguments: str, check: bool = True) -> str:
    """Run git in `cwd` untouched by the user's configuration; its stdout."""
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
        cwd=cwd,
        env={**os.environ, **_ISOLATED},
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(arguments)} failed: {result.stderr}")
    return result.stdout


def make_source(path: Path) -> dict[str, str]:
    """A repository with history, a branch, tags, a stash, staged, unstaged, untracked and
    ignored files; returns the shas of `first`, `second` (main) and `feature`."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "a.txt").write_text("one\n")
    (path / "gone.txt").write_text("to be deleted\n")
    (path / ".gitignore").write_text("*.log\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "first")
    git(path, "tag", "-a", "v1", "-m", "version one")
    first = git(path, "rev-parse", "HEAD").strip()
    git(path, "checkout", "-qb", "feature")
    (path / "feature.txt").write_text("feature\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "feature")
    feature = git(path, "rev-parse", "HEAD").strip()
    git(path, "checkout", "-q", "main")
    (path / "a.txt").write_text("two\n")
    git(path, "commit", "-qam", "second")
    second = git(path, "rev-parse", "HEAD").strip()
    (path / "a.txt").write_text("stashed\n")
    git(path, "stash", "-q")
    (path / "a.txt").write_text("uncommitted\n")
    (path / "staged.txt").write_text("staged\n")
    git(path, "add", "staged.txt")
    (path / "untracked.txt").write_text("untracked\n")
    (path / "debug.log").write_text("ignored\n")
    return {"first": first, "second": second, "feature": feature}


def picture(repository: Path) -> dict[str, object]:
    """Everything a change to `repository` would show: every file's bytes (inside `.git`
    too), and what git says of its HEAD, refs, status and stash."""
    files = {
        str(file.relative_to(repository)): file.read_bytes()
        for file in sorted(repository.rglob("*"))
        if file.is_file()
    }
    return {
        "files": files,
        "head": git(repository, "rev-parse", "--symbolic-full-name", "HEAD"),
        "refs": git(repository, "for-each-ref"),
        "status": git(repository, "status", "--porcelain=v2", "--branch"),
        "stash": git(repository, "stash", "list"),
    }
