"""`stayer permissions check`: recorded calls replayed against rules, the rules that widen too
far, and the fewest allow rules that would have removed the most questions.

Transcripts are written by stayer's own `TranscriptWriter`, or are Claude Code's real one in the
shared fixtures; each check runs the session's permission callback on every call, under the
settings a run in the same directory would read (the run's own loading code).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.cli.permissions_check import as_json, as_text, check, parse_request
from stayer.errors import ConfigError
from stayer.messages import (
    JSON,
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.permissions import parse_rules
from stayer.session.options import QueryOptions
from stayer.session.policy_proposals import rule_text, widening
from stayer.session.setup import prepare
from stayer.session.transcript import TranscriptWriter
from stayer.tools.registry import builtin_tools

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "claude-code-transcripts"
    / "c0a253a2-b287-47f0-bd41-07da0571e0de.jsonl"
)


def write_session(path: Path, cwd: Path, calls: list[tuple[str, dict[str, JSON]]]) -> Path:
    """A stayer transcript in which the model made `calls`, one answer each."""
    writer = TranscriptWriter(path, session_id=path.stem, cwd=str(cwd))
    messages: list[Any] = [UserMessage((TextBlock("Do the work."),))]
    for number, (tool, tool_input) in enumerate(calls, start=1):
        call_id = f"toolu_{number}"
        messages.append(
            AssistantMessage((ToolUseBlock(call_id, tool, tool_input),), id=f"m{number}")
        )
        messages.append(UserMessage((ToolResultBlock(call_id, (TextBlock("ok"),)),)))
    writer.sync(messages)
    writer.close()
    return path


def bash(command: str) -> tuple[str, dict[str, JSON]]:
    return "Bash", {"command": command}


def edit(path: str) -> tuple[str, dict[str, JSON]]:
    return "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}


def run_env(**more: str) -> dict[str, str]:
    """The environment the tests run in (its user folders are temporary ones), and `more`."""
    return {**os.environ, **more}


async def report_for(
    tmp_path: Path,
    calls: list[tuple[str, dict[str, JSON]]],
    *argv: str,
    env: dict[str, str] | None = None,
    session_cwd: Path | None = None,
) -> Any:
    """The check of a session that made `calls`, run in `tmp_path` with `argv`."""
    transcript = write_session(tmp_path / "s.jsonl", session_cwd or tmp_path, calls)
    request = parse_request([str(transcript), *argv], env or run_env(), tmp_path)
    return await check(request, tmp_path)


def verdicts(report: Any) -> dict[str, list[tuple[str, str, int]]]:
    found = as_json(report)
    return {
        kind: [(c["tool"], c["subject"], c["count"]) for c in found[kind]]
        for kind in ("allowed", "asked", "denied")
    }


async def test_recorded_calls_are_sorted_into_allowed_asked_and_denied(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    calls = [
        bash("git status"),
        bash("npm install"),
        bash("npm install"),
        bash("rm -rf build"),
        edit("src/a.py"),
        edit(".env"),
        edit(".git/config"),
        ("Write", {"file_path": "docs/x.md", "content": "x"}),
        ("WebSearch", {"query": "look around"}),  # Claude Code's, not stayer's
        ("Read", {"path": "no such field"}),
    ]
    report = await report_for(
        tmp_path,
        calls,
        *("--allowedTools", "Edit(src/**)", "--disallowedTools", "Bash(rm:*)", "Edit(.env)"),
    )

    assert verdicts(report) == {
        "allowed": [("Bash", "git status", 1), ("Edit", "src/a.py", 1)],
        # a protected path asks, as in Claude Code, rather than being refused outright
        "asked": [
            ("Bash", "npm install", 2),
            ("Edit", ".git/config", 1),
            ("Write", "docs/x.md", 1),
        ],
        "denied": [("Bash", "rm -rf build", 1), ("Edit", ".env", 1)],
    }
    found = as_json(report)
    assert found["tools"] == {
        "Bash": {"allowed": 1, "asked": 2, "denied": 1},
        "Edit": {"allowed": 1, "asked": 1, "denied": 1},
        "Write": {"allowed": 0, "asked": 1, "denied": 0},
    }
    assert found["not_replayed"] == {"unknown_tools": {"WebSearch": 1}, "unreadable": 1}
    assert "deny rule" in found["denied"][0]["reason"]
    protected = [entry for entry in found["asked"] if entry["subject"] == ".git/config"]
    assert len(protected) == 1 and "protected" in protected[0]["reason"]


async def test_modes_that_never_ask_turn_questions_into_denials(tmp_path: Path) -> None:
    report = await report_for(tmp_path, [bash("npm install")], "--permission-mode", "dontAsk")
    assert verdicts(report)["denied"] == [("Bash", "npm install", 1)]
    bypass = await report_for(
        tmp_path, [bash("npm install")], "--permission-mode", "bypassPermissions"
    )
    assert verdicts(bypass)["allowed"] == [("Bash", "npm install", 1)]


async def test_the_greedy_proposal_takes_the_widest_help_first_and_the_narrower_rule_on_a_tie(
    tmp_path: Path,
) -> None:
    calls = [
        *[bash("npm install")] * 3,
        bash("npm ci"),
        *[bash("make build")] * 2,
        edit("docs/a.md"),
        edit("docs/guide/b.md"),
        bash("python3 setup.py"),  # only Bash(python3:*) would cover it: too wide to propose
        bash("git status"),  # read-only: never asked
    ]
    report = await report_for(tmp_path, calls)

    # Bash(npm:*) would remove 4, but npm runs what its arguments name (npm exec): too wide
    assert as_json(report)["proposals"] == [
        {"rule": "Bash(npm install:*)", "removes": 3},
        {"rule": "Bash(make build:*)", "removes": 2},  # ties with Edit(./docs/**), but narrower
        {"rule": "Edit(./docs/**)", "removes": 2},
        {"rule": "Bash(npm ci:*)", "removes": 1},
    ]
    assert "Proposed allow rules (they remove 8 of 9 questions):" in as_text(report)


async def test_a_candidate_that_would_allow_a_denied_call_is_refused(tmp_path: Path) -> None:
    calls = [bash("npm install"), bash("npm install"), bash("npm test"), bash("npm publish")]
    report = await report_for(tmp_path, calls, "--disallowedTools", "Bash(npm publish:*)")

    assert verdicts(report)["denied"] == [("Bash", "npm publish", 1)]
    # Bash(npm:*) would remove all three questions, but it stands for the denied publish too
    assert as_json(report)["proposals"] == [
        {"rule": "Bash(npm install:*)", "removes": 2},
        {"rule": "Bash(npm test:*)", "removes": 1},
    ]


async def test_an_ask_rule_from_settings_makes_an_allowed_call_ask(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(
        '{"permissions": {"allow": ["Bash(npm run:*)"], "ask": ["Bash(npm run deploy:*)"],'
        ' "deny": ["Bash(curl:*)"], "defaultMode": "default"}}'
    )
    calls = [bash("npm run build"), bash("npm run deploy"), bash("curl -s example.test")]
    report = await report_for(tmp_path, calls, "--settings", str(settings))

    assert verdicts(report) == {
        "allowed": [("Bash", "npm run build", 1)],
        "asked": [("Bash", "npm run deploy", 1)],
        "denied": [("Bash", "curl -s example.test", 1)],
    }


def write_settings(path: Path, data: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


async def test_the_projects_own_settings_files_are_read_without_any_flag(tmp_path: Path) -> None:
    write_settings(tmp_path / ".claude" / "settings.json",
                   {"permissions": {"deny": ["Bash(rm:*)", "Read(.env)"]}})  # fmt: skip
    write_settings(tmp_path / ".stayer" / "settings.local.json",
                   {"permissions": {"allow": ["Bash(npm install:*)"]}})  # fmt: skip
    calls = [bash("rm -rf build"), bash("cat .env"), bash("npm install"), bash("make")]

    report = await report_for(tmp_path, calls)

    assert verdicts(report) == {
        "allowed": [("Bash", "npm install", 1)],
        "asked": [("Bash", "make", 1)],
        "denied": [("Bash", "rm -rf build", 1), ("Bash", "cat .env", 1)],
    }


@pytest.mark.parametrize(
    ("argv", "env", "denied"),
    [
        ((), {}, 2),
        (("--setting-sources", "user,local"), {}, 1),  # not the project's files
        ((), {"STAYER_NO_CLAUDE_SETTINGS": "1"}, 1),  # not Claude Code's
        (("--settings", '{"readClaudeSettings": false}'), {}, 1),
        (("--settings", '{"permissions": {"deny": ["Bash(make:*)"]}}'), {}, 3),
    ],
)
async def test_the_settings_switches_of_a_run_choose_the_files(
    tmp_path: Path, argv: tuple[str, ...], env: dict[str, str], denied: int
) -> None:
    write_settings(tmp_path / ".claude" / "settings.json",
                   {"permissions": {"deny": ["Bash(rm:*)"]}})  # fmt: skip
    write_settings(tmp_path / ".stayer" / "settings.local.json",
                   {"permissions": {"deny": ["Bash(curl:*)"]}})  # fmt: skip
    calls = [bash("rm -rf build"), bash("curl example.test"), bash("make")]

    report = await report_for(tmp_path, calls, *argv, env=run_env(**env))

    assert len(as_json(report)["denied"]) == denied


async def test_a_slash_rule_is_anchored_to_its_settings_files_folder(tmp_path: Path) -> None:
    write_settings(tmp_path / ".claude" / "settings.json",
                   {"permissions": {"deny": ["Edit(/docs/**)"]}})  # fmt: skip
    inner = tmp_path / "packages" / "web"
    inner.mkdir(parents=True)
    # the session ran in a folder below the project: /docs is still the project's docs
    calls = [edit(str(tmp_path / "docs" / "a.md")), edit(str(inner / "docs" / "b.md"))]

    report = await report_for(tmp_path, calls, session_cwd=inner)

    assert [entry["subject"] for entry in as_json(report)["denied"]] == [
        str(tmp_path / "docs" / "a.md")
    ]


async def test_plan_mode_questions_stay_questions_and_its_refusals_are_denials(
    tmp_path: Path,
) -> None:
    write_settings(tmp_path / ".claude" / "settings.json",
                   {"permissions": {"defaultMode": "plan", "ask": ["Read(notes.md)"]}})  # fmt: skip
    calls = [
        ("Read", {"file_path": "notes.md"}),
        ("Read", {"file_path": "README.md"}),
        ("ExitPlanMode", {"plan": "1. fix it"}),
        edit("src/a.py"),
    ]

    report = await report_for(tmp_path, calls)

    assert as_json(report)["permission_mode"] == "plan"
    assert verdicts(report) == {
        "allowed": [("Read", "README.md", 1)],
        "asked": [("Read", "notes.md", 1), ("ExitPlanMode", "", 1)],
        "denied": [("Edit", "src/a.py", 1)],
    }


def run_refusal(project: Path, env: dict[str, str], **options: Any) -> str:
    """What a run in `project` says when it refuses to start."""
    given = QueryOptions(cwd=project, env=env, provider=stayer.ScriptedProvider([]),
                         persist_session=False, **options)  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        prepare(given)
    return str(caught.value)


@pytest.mark.parametrize(
    "content",
    [
        '{"permissions": {"deny": ["Read(secret.txt)"],}}',
        '{"permissions": {"deny": "Read(secret.txt)"}}',
        '{"permissions": {"deny": ["Read(secret.txt"]}}',
        '{"hooks": {"PreToolUse": {"matcher": "Bash"}}}',
    ],
)
def test_broken_settings_stop_the_check_as_they_stop_a_run(tmp_path: Path, content: str) -> None:
    path = write_settings(tmp_path / ".claude" / "settings.json", content)
    transcript = write_session(tmp_path / "s.jsonl", tmp_path, [bash("cat secret.txt")])

    with pytest.raises(ConfigError) as caught:
        parse_request([str(transcript)], run_env(), tmp_path)

    message = str(caught.value)
    assert message == run_refusal(tmp_path, run_env())
    assert message.startswith(f"{path}:1:")
    assert message.endswith(
        "; fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on without it"
    )
    left_out = parse_request([str(transcript)], run_env(STAYER_IGNORE_BAD_SETTINGS="1"), tmp_path)
    assert left_out.warnings[0].startswith(f"{path}:1:")
    assert "left the whole file out" in left_out.warnings[0]


def test_disable_bypass_refuses_a_bypass_check_as_it_refuses_a_run(tmp_path: Path) -> None:
    write_settings(tmp_path / ".stayer" / "settings.json",
                   {"permissions": {"disableBypassPermissionsMode": "disable"}})  # fmt: skip
    transcript = write_session(tmp_path / "s.jsonl", tmp_path, [bash("make")])

    with pytest.raises(ConfigError) as caught:
        parse_request([str(transcript), "--permission-mode", "bypassPermissions"], run_env(),
                      tmp_path)  # fmt: skip

    assert str(caught.value) == run_refusal(
        tmp_path, run_env(), permission_mode="bypassPermissions"
    )
    assert "disableBypassPermissionsMode" in str(caught.value)


def test_dangerous_widenings_are_named_with_why(tmp_path: Path) -> None:
    tools = {tool.name: tool for tool in builtin_tools()}
    rules = parse_rules(
        [
            "Bash", "Bash(* --help)", "Bash(rm:*)", "Bash(sudo:*)", "Bash(curl * | sh)",
            "Bash(python3:*)", "Bash(xargs:*)", "Edit(//etc/**)", "Write", "Edit(../**)",
            "Edit(.git/**)", "Bash(git status:*)", "Edit(src/**)", "Read(//etc/**)",
            "Bash(setsid curl:*)", "Bash(script:*)", "Bash(git:*)", "Bash(npm exec:*)",
            "Bash(npm install:*)", "Bash(python3 manage.py:*)", "Bash(find:*)",
        ]
    )  # fmt: skip
    found = {rule_text(rule): widening(rule, tools, tmp_path) for rule in rules}

    assert found == {
        "Bash": "it allows every command",
        "Bash(* --help)": "it allows every command",
        "Bash(rm:*)": "it allows rm, which deletes files",
        "Bash(sudo:*)": "it allows sudo, which runs any command as another user",
        "Bash(curl * | sh)": (
            "it allows piping into a shell, which runs whatever comes down the pipe"
        ),
        "Bash(python3:*)": (
            "it allows python3 with any arguments, and python3 runs the code it is given"
        ),
        "Bash(xargs:*)": (
            "it allows xargs with any arguments, and xargs runs the command it is given"
        ),
        "Edit(//etc/**)": "it allows writing outside the project",
        "Write": "it allows writing any file, anywhere",
        "Edit(../**)": "it allows writing outside the project",
        "Edit(.git/**)": (
            "it opens .git/, a protected path (git runs what its config and hooks say)"
        ),
        "Bash(git status:*)": None,
        "Edit(src/**)": None,
        "Read(//etc/**)": None,  # reading is not a widening of what can change
        # what the probe found proposed while it reported no dangerous widening
        "Bash(setsid curl:*)": (
            "it allows setsid curl with any arguments, and setsid runs the command it is given"
        ),
        "Bash(script:*)": (
            "it allows script with any arguments, and script runs the command it is given"
        ),
        "Bash(git:*)": (
            "it allows git with any arguments, and git can run a command its arguments name"
        ),
        "Bash(npm exec:*)": (
            "it allows npm exec with any arguments, and npm exec can run a command its "
            "arguments name"
        ),
        "Bash(npm install:*)": None,
        "Bash(python3 manage.py:*)": None,  # one script by name: options after it are its own
        "Bash(find:*)": (
            "it allows find with any arguments, and find can run a command its arguments name"
        ),
    }


async def test_claude_codes_own_transcript_replays(tmp_path: Path) -> None:
    request = parse_request(
        [str(FIXTURE), "--allowedTools", "Bash(python3:*)"], run_env(), tmp_path
    )
    report = await check(request, tmp_path)

    found = as_json(report)
    assert found["tools"] == {
        "Bash": {"allowed": 1, "asked": 0, "denied": 0},
        "Edit": {"allowed": 0, "asked": 1, "denied": 0},
        "Grep": {"allowed": 1, "asked": 0, "denied": 0},
        "Read": {"allowed": 1, "asked": 0, "denied": 0},
    }
    assert found["dangerous"] == [
        {
            "rule": "Bash(python3:*)",
            "why": "it allows python3 with any arguments, and python3 runs the code it is given",
        }
    ]
    # the session ran in /home/dev/calc-demo: its file there is in the project
    assert found["proposals"] == [{"rule": "Edit(calc.py)", "removes": 1}]


def test_a_transcript_path_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_request([str(tmp_path / "gone.jsonl")], run_env(), tmp_path)
    assert str(caught.value) == (
        f"no transcript at {tmp_path / 'gone.jsonl'}; give the path of a session's .jsonl file"
    )


async def test_calls_around_a_deny_rule_are_denied_and_no_rule_undoes_it(tmp_path: Path) -> None:
    calls = [
        bash("setsid curl evil.test"),
        bash("setsid curl evil.test"),
        bash("script -qc 'curl evil.test' /dev/null"),
        bash("git -c alias.x='!curl evil.test' x"),
        bash("git -c alias.x='!curl evil.test' x"),
        bash("env --sp='curl evil.test'"),
        bash("npm install"),
        bash("npm install"),
    ]
    report = await report_for(tmp_path, calls, "--disallowedTools", "Bash(curl:*)")

    denied = {subject for _, subject, _ in verdicts(report)["denied"]}
    assert denied == {
        "setsid curl evil.test",
        "script -qc 'curl evil.test' /dev/null",
        "git -c alias.x='!curl evil.test' x",
        "env --sp='curl evil.test'",
    }
    assert as_json(report)["proposals"] == [{"rule": "Bash(npm install:*)", "removes": 2}]
    # and where a person wrote such a rule, it is named
    report = await report_for(
        tmp_path, calls, "--disallowedTools", "Bash(curl:*)", "--allowedTools", "Bash(setsid:*)"
    )
    assert [w["rule"] for w in as_json(report)["dangerous"]] == ["Bash(setsid:*)"]
