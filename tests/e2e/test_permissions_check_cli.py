"""`stayer permissions check` as a person runs it: the real command, transcripts on disk."""

from __future__ import annotations

import json
from pathlib import Path

from stayer.session.paths import project_slug
from tests.e2e.cli import stayer
from tests.unit.core.test_permissions_check import FIXTURE, bash, edit, write_session


def test_with_no_transcripts_it_replays_this_projects_sessions_of_both_harnesses(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    stayer_root, claude_root = tmp_path / "stayer-home", tmp_path / "claude-home"
    slug = project_slug(project.resolve())
    write_session(
        stayer_root / "projects" / slug / "a.jsonl",
        project,
        [bash("npm install"), bash("npm install"), bash("rm -rf build"), edit("src/a.py")],
    )
    # Claude Code's real file, as if it had been written in this project
    claude_file = claude_root / "projects" / slug / "b.jsonl"
    claude_file.parent.mkdir(parents=True)
    claude_file.write_text(FIXTURE.read_text().replace("/home/dev/calc-demo", str(project)))
    env = {"STAYER_CONFIG_DIR": str(stayer_root), "CLAUDE_CONFIG_DIR": str(claude_root)}

    done = stayer(
        *("permissions", "check", "--allowedTools", "Bash(rm:*)"),
        *("--disallowedTools", "Bash(rm -rf:*)"),
        cwd=project,
        env=env,
    )

    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.splitlines()[:7] == [
        "Replayed 8 tool calls from 2 transcripts in default mode.",
        "",
        "tool  allowed    asked   denied",
        # python3 -c runs code its words do not show: any deny rule of Bash could be reached
        "Bash        0        2        2",
        "Edit        0        2        0",
        "Grep        1        0        0",
        "Read        1        0        0",
    ]
    assert "  Bash  npm install (x2)" in done.stdout
    assert "  Bash(rm:*): it allows rm, which deletes files" in done.stdout
    assert "  Bash(npm install:*)  removes 2" in done.stdout
    assert "Bash(python3" not in done.stdout.split("Proposed allow rules")[1]


def test_json_output_is_one_object_and_a_transcript_may_follow_the_rules(tmp_path: Path) -> None:
    transcript = write_session(
        tmp_path / "s.jsonl", tmp_path, [bash("git status"), bash("make"), bash("make")]
    )

    # a value ending in .jsonl after --allowedTools is a transcript, not a rule
    done = stayer(
        "permissions", "check", "--json", "--allowedTools", "Bash(ls:*)", str(transcript),
        cwd=tmp_path,
    )  # fmt: skip

    assert (done.status, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {
        "transcripts": [str(transcript)],
        "permission_mode": "default",
        "calls": 3,
        "tools": {"Bash": {"allowed": 1, "asked": 2, "denied": 0}},
        "allowed": [{"tool": "Bash", "subject": "git status", "count": 1, "reason": ""}],
        "asked": [
            {
                "tool": "Bash",
                "subject": "make",
                "count": 2,
                "reason": json.loads(done.stdout)["asked"][0]["reason"],
            }
        ],
        "denied": [],
        "dangerous": [],
        # make runs what --eval gives it: not make:*, but make exactly as it was called
        "proposals": [{"rule": "Bash(make)", "removes": 2}],
        "not_replayed": {"unknown_tools": {}, "unreadable": 0},
    }
    assert "nobody is here to approve it" in json.loads(done.stdout)["asked"][0]["reason"]


def test_a_bad_transcript_path_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    done = stayer("permissions", "check", str(tmp_path / "missing.jsonl"), cwd=tmp_path)

    assert (done.status, done.stdout) == (2, "")
    assert done.stderr == (
        f"stayer: no transcript at {tmp_path / 'missing.jsonl'}; give the path of a "
        "session's .jsonl file\n"
    )


def test_no_saved_sessions_and_bad_flags_are_one_line_each(tmp_path: Path) -> None:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "s"), "CLAUDE_CONFIG_DIR": str(tmp_path / "c")}
    none = stayer("permissions", "check", cwd=tmp_path, env=env)
    assert none.status == 2 and none.stderr.count("\n") == 1
    assert none.stderr.startswith(f"stayer: no saved sessions of {tmp_path.resolve()} in ")

    mode = stayer("permissions", "check", "--permission-mode", "yolo", cwd=tmp_path, env=env)
    assert mode.status == 2 and mode.stderr.count("\n") == 1
    assert mode.stderr.startswith("stayer: unknown permission mode 'yolo'; use one of: default,")


def test_a_file_that_is_not_a_transcript_is_named_on_standard_error(tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("just some notes\n")

    done = stayer("permissions", "check", str(notes), cwd=tmp_path)

    assert done.status == 0
    assert done.stderr == f"stayer: {notes}: the last write was cut short (line 1); skipped\n"
    assert done.stdout.startswith("Replayed 0 tool calls from 1 transcript in default mode.")


def test_it_replays_under_the_projects_settings_and_refuses_broken_ones_as_a_run_does(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"deny": ["Bash(rm:*)", "Read(secret.txt)"]}}')
    transcript = write_session(
        tmp_path / "s.jsonl", project, [bash("rm -rf build"), bash("cat secret.txt")]
    )

    done = stayer("permissions", "check", str(transcript), cwd=project)

    assert (done.status, done.stderr) == (0, "")
    assert "Bash        0        0        2" in done.stdout.splitlines()

    settings.write_text('{"permissions": {"deny": ["Bash(rm:*)", "Read(secret.txt"]}}')
    broken = stayer("permissions", "check", str(transcript), cwd=project)
    assert (broken.status, broken.stdout) == (2, "")
    assert broken.stderr == (
        f"stayer: {settings}:1:41: permissions.deny[1]: bad permission rule 'Read(secret.txt'; "
        "write Tool or Tool(pattern); fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on "
        "without it\n"
    )

    left_out = stayer("permissions", "check", str(transcript), cwd=project,
                      env={"STAYER_IGNORE_BAD_SETTINGS": "1"})  # fmt: skip
    assert left_out.status == 0
    assert left_out.stderr.startswith(f"stayer: {settings}:1:41: permissions.deny[1]: ")
    assert left_out.stderr.endswith("; left the whole file out, as STAYER_IGNORE_BAD_SETTINGS "
                                    "is set: none of its settings apply\n")  # fmt: skip
    assert "Bash        1        1        0" in left_out.stdout.splitlines()  # no rule at all
