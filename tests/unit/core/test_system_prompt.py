"""The system prompt carries the guidance of SPEC §5.1 and the facts of the environment."""

from __future__ import annotations

import datetime
from pathlib import Path

from stayer.context.prompt import Environment, build_system_prompt


def env(tmp_path: Path, *, git: bool) -> Environment:
    return Environment(
        cwd=tmp_path,
        platform="linux",
        os_version="6.1",
        date=datetime.date(2026, 11, 30),
        is_git_repo=git,
        model="claude-x",
    )


def test_base_prompt_tells_the_model_to_diagnose_rather_than_give_up(tmp_path: Path) -> None:
    prompt = build_system_prompt(env(tmp_path, git=True), tool_names=["Bash", "Read"])
    assert "diagnose before changing course" in prompt
    assert "do not drop an approach" in prompt
    assert "Do not retry the same thing blindly" in prompt
    assert f"Working directory: {tmp_path}" in prompt
    assert "Is the directory a git repository: yes" in prompt
    assert "Today's date: 2026-11-30" in prompt
    assert "Platform: linux 6.1" in prompt
    assert "Tools available in this session: Bash, Read." in prompt


def test_custom_prompt_replaces_the_base_but_keeps_the_environment(tmp_path: Path) -> None:
    prompt = build_system_prompt(
        env(tmp_path, git=False), tool_names=[], custom="Be terse.", append="Answer in French."
    )
    assert prompt.startswith("Be terse.")
    assert "diagnose" not in prompt
    assert "Is the directory a git repository: no" in prompt
    assert prompt.rstrip().endswith("Answer in French.")


def test_git_repositories_are_detected_from_subdirectories(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    sub = tmp_path / "repo" / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "plain").mkdir()
    assert Environment.detect(sub, "m").is_git_repo
    assert not Environment.detect(tmp_path / "plain", "m").is_git_repo
