"""The demo's throwaway repository is made by a git that runs nothing of the user's."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from stayer.session.demo import make_repo


def _log(repo: Path) -> str:
    done = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_the_demo_commit_runs_no_hook_and_lands_in_its_own_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    hooks = tmp_path / "hooks"
    (hooks / "hooks").mkdir(parents=True)
    for hook in ("pre-commit", "post-commit", "commit-msg"):
        script = hooks / "hooks" / hook
        script.write_text(f"#!/bin/sh\ntouch {markers / hook}\n")
        script.chmod(0o755)
    global_config = tmp_path / "gitconfig"
    global_config.write_text(f"[core]\n\thooksPath = {hooks / 'hooks'}\n")
    decoy = tmp_path / "decoy"
    subprocess.run(["git", "init", "-q", str(decoy)], check=True)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(hooks))
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))

    root = asyncio.run(make_repo())
    monkeypatch.delenv("GIT_DIR")
    try:
        assert _log(root) == "Add pricing\n"
    finally:
        shutil.rmtree(root)
    assert sorted(path.name for path in markers.iterdir()) == []
    assert not (decoy / ".git" / "index").exists()  # nothing was added to the decoy
