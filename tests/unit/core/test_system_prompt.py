"""The system prompt carries the guidance of SPEC §5.1, the facts of the environment and the
memory files, in an order that lets what the user set for this run weigh most."""

from __future__ import annotations

import datetime
from pathlib import Path

from msgspec.structs import replace

from stayer.context.git import GitSnapshot
from stayer.context.memory import Memory, MemoryFile, SkippedFile
from stayer.context.prompt import (
    Environment,
    build_system_prompt,
    environment_section,
    memory_section,
)


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


def test_the_parts_come_in_order_facts_then_files_then_this_runs_notes(tmp_path: Path) -> None:
    memory = Memory(
        files=(
            MemoryFile(tmp_path / "AGENTS.md", "project", "Run tests with make check.\n", 27),
            MemoryFile(
                tmp_path / "docs.md", "import", "Docs live in docs/.", 19, tmp_path / "AGENTS.md"
            ),
        )
    )
    environment = replace(env(tmp_path, git=True), git=GitSnapshot("main", "", "", False, ()))
    prompt = build_system_prompt(
        environment,
        tool_names=["Bash"],
        memory=memory,
        pins=("Never push.",),
        token_budget=1_000,
        append="Answer in French.",
    )
    markers = [
        "You are stayer",
        "Tools available in this session: Bash.",
        "# Environment\n",
        "# Git\n",
        "# Memory files\n",
        "# Pinned by the user\n",
        "# Token budget\n",
        "Answer in French.",
    ]
    positions = [prompt.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert prompt.endswith("Answer in French.\n")
    assert (
        f'<memory-file path="{tmp_path / "AGENTS.md"}" source="the project\'s instructions">\n'
        "Run tests with make check.\n"
        "</memory-file>\n\n"
        f'<memory-file path="{tmp_path / "docs.md"}" '
        f'source="imported by {tmp_path / "AGENTS.md"}">\n'
        "Docs live in docs/.\n"
        "</memory-file>"
    ) in prompt


def test_a_custom_prompt_keeps_the_memory_files_and_the_git_snapshot(tmp_path: Path) -> None:
    memory = Memory(files=(MemoryFile(tmp_path / "STAYER.md", "user", "Use tabs.", 9),))
    environment = replace(env(tmp_path, git=True), git=GitSnapshot("main", "", "", False, ()))
    prompt = build_system_prompt(environment, tool_names=[], custom="Be terse.", memory=memory)
    assert prompt.startswith("Be terse.\n\n# Environment\n")
    assert "Current branch: main" in prompt
    assert "Use tabs." in prompt
    assert "diagnose" not in prompt


def test_no_memory_files_means_no_memory_section(tmp_path: Path) -> None:
    prompt = build_system_prompt(env(tmp_path, git=False), tool_names=[], memory=Memory())
    assert "# Memory files" not in prompt


def test_what_was_cut_or_left_out_is_told_to_the_model(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    memory = Memory(
        files=(MemoryFile(agents, "project", "the start", 90_000, cut=True),),
        skipped=(
            SkippedFile(
                tmp_path / "deep.md", "too_deep", "not imported: more than 5 imports deep", agents
            ),
            SkippedFile(tmp_path / "gone.md", "not_found", "@gone.md names no file", agents),
            SkippedFile(tmp_path / "key", "outside_project", "lies outside the project", agents),
        ),
    )
    section = memory_section(memory)
    assert (
        "the start\n[cut here: the file has 90,000 bytes and only its start is shown; "
        "Read the file for the rest]\n</memory-file>"
    ) in section
    assert section.endswith(
        "Named but not shown here (Read them if they matter):\n"
        f"- {tmp_path / 'deep.md'}: not imported: more than 5 imports deep"
    )
    # a missing file has nothing to read, and one outside the project must not be read
    assert "gone.md" not in section and "key" not in section


def test_the_shell_line_says_bash_runs_commands_and_names_the_users_own(tmp_path: Path) -> None:
    assert "Shell: bash runs your commands\n" in environment_section(env(tmp_path, git=False))
    zsh = replace(env(tmp_path, git=False), shell="zsh")
    assert "Shell: bash runs your commands (the user's own shell is zsh)\n" in (
        environment_section(zsh)
    )
    assert Environment.detect(tmp_path, "m", env={"SHELL": "/usr/bin/fish"}).shell == "fish"
