"""Memory files and the git snapshot, as the model receives them from `stayer -p`, and as the
`system`/`init` line names them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

STREAM = ("--output-format", "stream-json", "--verbose")
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    """A fake home with both user folders, and a git repository with memory files at its root
    and in the working directory, one of them importing another, one import missing."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    cwd = repo / "service"
    write(home / ".claude" / "CLAUDE.md", "CLAUDE-USER: answer briefly.")
    write(tmp_path / "stayer-config" / "STAYER.md", "STAYER-USER: see @~/notes.md")
    write(home / "notes.md", "HOME-NOTES: the user is on call this week.")
    write(repo / "AGENTS.md", "REPO-AGENTS: run `make check`. Details: @docs/testing.md")
    write(repo / "docs" / "testing.md", "REPO-TESTING: tests live in tests/.")
    write(cwd / "CLAUDE.md", "SERVICE-CLAUDE: this service speaks gRPC. @missing.md")
    git(repo, "init", "-q", "-b", "trunk")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Start the service")
    return {"home": home, "repo": repo, "cwd": cwd, "config": tmp_path / "stayer-config"}


def env_for(setup: dict[str, Path], server: FakeModelServer, **extra: str) -> dict[str, str]:
    return {
        **server.env(),
        **GIT_ENV,
        "HOME": str(setup["home"]),
        "STAYER_CONFIG_DIR": str(setup["config"]),
        "CLAUDE_CONFIG_DIR": str(setup["home"] / ".claude"),
        **extra,
    }


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


def test_the_model_gets_the_memory_files_in_order_and_the_init_line_names_them(
    server: FakeModelServer, setup: dict[str, Path]
) -> None:
    server.enqueue(reply("ok"))
    done = stayer("-p", "hi", *STREAM, cwd=setup["cwd"], env=env_for(setup, server))

    assert done.status == 0, done.stderr
    init = done.json_lines()[0]
    home, repo, cwd = setup["home"], setup["repo"], setup["cwd"]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["memory_files"] == [
        str(home / ".claude" / "CLAUDE.md"),
        str(setup["config"] / "STAYER.md"),
        str(home / "notes.md"),
        str(repo / "AGENTS.md"),
        str(repo / "docs" / "testing.md"),
        str(cwd / "CLAUDE.md"),
    ]
    assert init["memory_notes"] == [
        f"{cwd / 'missing.md'} (imported by {cwd / 'CLAUDE.md'}): @missing.md names no file"
    ]
    system = system_text(server.requests[0].body)
    order = [
        "CLAUDE-USER",
        "STAYER-USER",
        "HOME-NOTES",
        "REPO-AGENTS",
        "REPO-TESTING",
        "SERVICE-CLAUDE",
    ]
    positions = [system.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert system.index("# Environment") < system.index("# Git") < system.index("# Memory files")
    assert "Current branch: trunk\nStatus: clean\nRecent commits:\n" in system
    assert system.rstrip().endswith("</memory-file>")


def test_a_custom_prompt_replaces_the_base_only_and_the_appended_text_ends_it(
    server: FakeModelServer, setup: dict[str, Path]
) -> None:
    server.enqueue(reply("ok"))
    done = stayer(
        "-p", "hi", "--system-prompt", "You are a terse reviewer.",
        "--append-system-prompt", "Answer in French.",
        cwd=setup["cwd"], env=env_for(setup, server),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    system = system_text(server.requests[0].body)
    assert system.startswith("You are a terse reviewer.\n\n")
    assert "Keep going until the task is actually done" not in system  # the base prompt is gone
    for kept in ("# Environment", "# Git", "REPO-AGENTS", "SERVICE-CLAUDE"):
        assert kept in system
    assert system.endswith("Answer in French.\n")


def test_claude_codes_switches_leave_out_the_files_and_the_snapshot(
    server: FakeModelServer, setup: dict[str, Path]
) -> None:
    server.enqueue(reply("ok"))
    env = env_for(
        setup,
        server,
        CLAUDE_CODE_DISABLE_CLAUDE_MDS="1",
        CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS="true",
    )
    done = stayer("-p", "hi", *STREAM, cwd=setup["cwd"], env=env)

    assert done.status == 0, done.stderr
    init = done.json_lines()[0]
    assert (init["memory_files"], init["memory_notes"]) == ([], [])
    system = system_text(server.requests[0].body)
    assert "REPO-AGENTS" not in system and "# Memory files" not in system
    assert "# Git" not in system and "# Environment" in system


def test_outside_a_repository_there_is_no_snapshot(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "plain"
    write(work / "AGENTS.md", "PLAIN-AGENTS: no repository here.")
    server.enqueue(reply("ok"))
    done = stayer("-p", "hi", *STREAM, cwd=work, env=server.env())

    assert done.status == 0, done.stderr
    assert str(work / "AGENTS.md") in done.json_lines()[0]["memory_files"]
    system = system_text(server.requests[0].body)
    assert "PLAIN-AGENTS" in system and "# Git" not in system
    assert "Is the directory a git repository: no" in system


def test_a_missing_git_is_a_line_in_the_prompt_not_a_failed_run(
    server: FakeModelServer, setup: dict[str, Path]
) -> None:
    server.enqueue(reply("ok"))
    env = env_for(setup, server, PATH=str(setup["home"] / "no-programs-here"))
    done = stayer("-p", "hi", cwd=setup["cwd"], env=env)

    assert done.status == 0, done.stderr
    system = system_text(server.requests[0].body)
    assert "# Git\n" in system
    assert "\nUnavailable: could not start git: No such file or directory\n" in system
