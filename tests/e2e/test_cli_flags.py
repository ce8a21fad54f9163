"""Claude Code's flags mean what they say: no abbreviations, no silent fresh sessions, and a
program reading JSON always gets a result to parse."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from stayer.session.listings import is_listing
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (("--continue",), "no saved session to continue in "),
        (("-c",), "no saved session to continue in "),
        (
            ("--resume", "3f1e9b6c-8c61-4d6a-9d0b-5c2a3e7f1a20"),
            "no session 3f1e9b6c-8c61-4d6a-9d0b-5c2a3e7f1a20 saved for this folder",
        ),
        (("--resume=abc",), "--resume 'abc': give a session id (a UUID) or a transcript's path"),
        (("-r", "abc"), "--resume 'abc': give a session id (a UUID) or a transcript's path"),
        (("--resume",), "no saved session to resume in this folder"),
        (("--resume-session-at", "msg_1"), "--resume-session-at is not supported yet"),
    ],
)
def test_continuing_a_session_that_is_not_there_is_refused_rather_than_starting_afresh(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], complaint: str
) -> None:
    done = stayer("-p", *flags, "--", "go on", cwd=tmp_path, env=server.env())

    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"stayer: {complaint}")
    assert server.requests == []


def test_continue_goes_on_with_the_last_session_of_this_folder(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("The answer is 4."), reply("You asked what 2 + 2 is."))
    first = stayer("-p", "what is 2 + 2?", "--output-format", "json", cwd=tmp_path,
                   env=server.env())  # fmt: skip
    second = stayer("-p", "-c", "what did I ask?", "--output-format", "json", cwd=tmp_path,
                    env=server.env())  # fmt: skip

    assert (first.status, second.status) == (0, 0), second.stderr
    assert json.loads(first.stdout)["session_id"] == json.loads(second.stdout)["session_id"]
    texts = [
        (message["role"], [b["text"] for b in message["content"] if not is_listing(b["text"])])
        for message in server.requests[1].messages
    ]
    assert texts == [
        ("user", ["what is 2 + 2?"]),
        ("assistant", ["The answer is 4."]),
        ("user", ["what did I ask?"]),
    ]


def test_resume_without_an_id_lists_the_sessions_when_there_is_no_terminal(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Hello."))
    first = stayer("-p", "say hello", "--output-format", "json", cwd=tmp_path, env=server.env())
    session_id = json.loads(first.stdout)["session_id"]
    done = stayer("-p", "--resume", "--", "again", cwd=tmp_path, env=server.env())

    assert done.status == 2
    listing, error = done.stderr.splitlines()
    assert listing.startswith(f"  1. {session_id}  ") and listing.endswith("  1 turns  say hello")
    assert error == "stayer: --resume needs a session id here (no terminal to choose on); see above"


def test_no_session_persistence_leaves_nothing_to_continue(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Hello."))
    done = stayer("-p", "hi", "--no-session-persistence", cwd=tmp_path, env=server.env())
    assert done.status == 0, done.stderr
    again = stayer("-p", "-c", "again", cwd=tmp_path, env=server.env())
    assert again.status == 2 and "no saved session to continue" in again.stderr


def test_abbreviations_are_not_flags(server: FakeModelServer, tmp_path: Path) -> None:
    """`--dang` once meant --dangerously-skip-permissions: the model could run anything."""
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch pwned"})), reply("could not")
    )
    done = stayer("-p", "--dang", "make a file", cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    assert "stayer: --dang has no effect: stayer does not know this option" in done.stderr
    assert not (tmp_path / "pwned").exists()
    first, second = server.requests
    assert "make a file" in json.dumps(first.messages[-1])
    assert "has been denied" in json.dumps(second.messages[-1])


@pytest.mark.parametrize(
    ("flags", "reported"),
    [
        (("--debug-file", "debug.log"), "--debug-file"),
        (("--name", "auth-refactor"), "--name"),
        (("-n", "auth-refactor"), "--name"),
        (("--task-budget", "9000"), "--task-budget"),
        (("--agent-name", "bob"), "--agent-name"),
    ],
)
def test_claude_code_flags_with_values_are_reported_and_their_values_kept_from_the_prompt(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], reported: str
) -> None:
    server.enqueue(reply("hello"))
    # Many-valued flags take every word after them, as in Claude Code: the prompt goes first.
    done = stayer("-p", "say hi", *flags, cwd=tmp_path, env=server.env())

    assert (done.status, done.stdout) == (0, "hello\n"), done.stderr
    assert done.stderr.splitlines() == [
        f"stayer: {reported} has no effect: stayer does not support it yet"
    ]
    (request,) = server.requests
    said, listing = request.messages[-1]["content"]  # the prompt, then the session's listing
    assert said == {"type": "text", "text": "say hi"} and is_listing(listing["text"])


@pytest.mark.parametrize(
    "given",
    [
        "my-session",
        uuid.uuid4().hex,  # Python's UUID takes these spellings; Claude Code does not
        f"{{{uuid.uuid4()}}}",
        f"urn:uuid:{uuid.uuid4()}",
    ],
)
def test_session_id_must_be_a_uuid_as_written(
    server: FakeModelServer, tmp_path: Path, given: str
) -> None:
    done = stayer("-p", "hi", "--session-id", given, cwd=tmp_path, env=server.env())
    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert "--session-id" in line and f"{given!r} is not a UUID" in line
    assert server.requests == []


def test_a_session_id_is_kept_in_lower_case_so_resume_finds_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    wanted = str(uuid.uuid4())
    server.enqueue(reply("ok"), reply("still here"))
    done = stayer(
        "-p", "hi", f"--session-id={wanted.upper()}", "--output-format", "json",
        cwd=tmp_path, env=server.env(),
    )  # fmt: skip
    assert done.status == 0, done.stderr
    assert json.loads(done.stdout)["session_id"] == wanted
    again = stayer("-p", "--resume", wanted.upper(), "--output-format", "json", "--", "again",
                   cwd=tmp_path, env=server.env())  # fmt: skip
    assert again.status == 0, again.stderr
    assert json.loads(again.stdout)["session_id"] == wanted
    assert len(server.requests[1].messages) == 3


def test_the_id_of_a_saved_session_cannot_start_another(
    server: FakeModelServer, tmp_path: Path
) -> None:
    wanted = str(uuid.uuid4())
    server.enqueue(reply("ok"))
    first = stayer("-p", "hi", "--session-id", wanted, cwd=tmp_path, env=server.env())
    assert first.status == 0, first.stderr
    done = stayer("-p", "hi", "--session-id", wanted, cwd=tmp_path, env=server.env())

    assert (done.status, done.stderr) == (
        2,
        f"stayer: session {wanted} already exists; use --resume {wanted} to go on with it, "
        "or give another id\n",
    )
    assert len(server.requests) == 1


def test_a_session_id_with_continue_needs_fork_session_and_then_names_the_fork(
    server: FakeModelServer, tmp_path: Path
) -> None:
    wanted = str(uuid.uuid4())
    server.enqueue(reply("one"), reply("two"))
    first = stayer("-p", "first", "--output-format", "json", cwd=tmp_path, env=server.env())
    assert first.status == 0, first.stderr
    refused = stayer("-p", "-c", "--session-id", wanted, "--", "more", cwd=tmp_path,
                     env=server.env())  # fmt: skip
    assert (refused.status, refused.stderr) == (
        2,
        "stayer: a session id with --resume or --continue needs --fork-session (the fork gets "
        "the id); leave the id out to go on under the resumed session's own\n",
    )
    fork = stayer("-p", "-c", "--fork-session", "--session-id", wanted, "--output-format",
                  "json", "--", "more", cwd=tmp_path, env=server.env())  # fmt: skip
    assert fork.status == 0, fork.stderr
    assert json.loads(fork.stdout)["session_id"] == wanted != json.loads(first.stdout)["session_id"]
    assert len(server.requests[1].messages) == 3


def test_a_directory_sharing_a_folder_name_does_not_continue_the_others_session(
    server: FakeModelServer, tmp_path: Path
) -> None:
    underscore, dot = tmp_path / "my_proj", tmp_path / "my.proj"
    underscore.mkdir()
    dot.mkdir()
    server.enqueue(reply("the plan"), reply("hello"))
    first = stayer("-p", "secret plan", "--output-format", "json", cwd=underscore,
                   env=server.env())  # fmt: skip
    assert first.status == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]

    again = stayer("-p", "-c", "go on", cwd=dot, env=server.env())
    assert again.status == 2 and again.stderr.startswith("stayer: no saved session to continue")
    listing = stayer("-p", "--resume", "--", "go on", cwd=dot, env=server.env())
    assert listing.stderr == "stayer: no saved session to resume in this folder; start one first\n"
    named = stayer("-p", "--resume", session_id, "--", "go on", cwd=dot, env=server.env())
    assert named.status == 0, named.stderr
    assert named.stderr == (
        f"stayer: session {session_id} was recorded in {underscore.resolve()}, not here "
        f"({dot.resolve()}); going on here\n"
    )
    assert len(server.requests) == 2 and len(server.requests[1].messages) == 3


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
@pytest.mark.parametrize(
    ("flags", "env", "complaint"),
    [
        ((), {}, "no model provider is configured"),
        (("--model", "anthropic:"), {"ANTHROPIC_API_KEY": "k"}, "names no model"),
        (("--session-id", "x"), {"ANTHROPIC_API_KEY": "k"}, "is not a UUID"),
        (("--continue",), {"ANTHROPIC_API_KEY": "k"}, "no saved session to continue"),
        (("--permission-mode", "yolo"), {"ANTHROPIC_API_KEY": "k"}, "unknown permission mode"),
    ],
)
def test_a_configuration_error_still_prints_one_json_result(
    tmp_path: Path,
    output_format: str,
    flags: tuple[str, ...],
    env: dict[str, str],
    complaint: str,
) -> None:
    done = stayer(
        "-p", "hi", "--output-format", output_format, "--verbose", *flags, cwd=tmp_path, env=env
    )

    assert done.status == 2
    (stderr_line,) = done.stderr.splitlines()
    assert complaint in stderr_line
    (result,) = done.json_lines()
    message = stderr_line.removeprefix("stayer: ")
    assert result == {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": message,
        "stop_reason": None,
        "terminal_reason": "turn_setup_failed",
        "session_id": result["session_id"],
        "total_cost_usd": 0.0,
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
        "modelUsage": {},
        "permission_denials": [],
        "errors": [message],
        "uuid": result["uuid"],
    }
    assert uuid.UUID(result["session_id"]) and uuid.UUID(result["uuid"])


def test_text_mode_configuration_errors_leave_stdout_empty(tmp_path: Path) -> None:
    done = stayer("-p", "hi", cwd=tmp_path, env={})
    assert (done.status, done.stdout) == (2, "")
    assert "no model provider is configured" in done.stderr


def test_a_1m_model_alias_goes_out_bare_with_the_long_context_beta(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("ok"))
    done = stayer(
        "-p", "hi", "--model", "sonnet[1m]", "--betas", "extra-beta-1", "--output-format",
        "stream-json", "--verbose", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    (request,) = server.requests
    assert request.body["model"] == "claude-sonnet-5-5"
    assert request.headers["anthropic-beta"] == "context-1m-2025-08-07,extra-beta-1"
    init, *_, result = done.json_lines()
    assert init["model"] == "claude-sonnet-5-5[1m]"
    usage = result["modelUsage"]["claude-sonnet-5-5[1m]"]
    assert (usage["contextWindow"], usage["maxOutputTokens"]) == (1_000_000, 32_000)


def test_model_usage_reports_the_ordinary_window_without_1m(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("ok"))
    done = stayer(
        "-p", "hi", "--model", "claude-haiku-4-5", "--output-format", "json", cwd=tmp_path,
        env=server.env(),
    )  # fmt: skip
    assert done.status == 0, done.stderr
    assert "anthropic-beta" not in server.requests[0].headers
    usage = json.loads(done.stdout)["modelUsage"]["claude-haiku-4-5"]
    assert (usage["contextWindow"], usage["maxOutputTokens"]) == (200_000, 32_000)


def test_resume_without_an_id_takes_a_choice_on_a_terminal(
    server: FakeModelServer, tmp_path: Path
) -> None:
    import os
    import pty
    import select
    import subprocess
    import sys

    from tests.e2e.cli import clean_env

    server.enqueue(reply("First."), reply("Second."), reply("Back in the first."))
    for prompt in ("the first session", "the second session"):
        assert stayer("-p", prompt, cwd=tmp_path, env=server.env()).status == 0

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "--resume", "--output-format", "json", "--",
         "go on"],
        cwd=tmp_path, env=clean_env(server.env()), stdin=terminal, stderr=terminal,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(terminal)
    shown = b""
    while b"Resume which session? (number)" not in shown:
        ready, _, _ = select.select([controller], [], [], 20)
        assert ready, f"no question on the terminal; it showed {shown!r}"
        shown += os.read(controller, 4096)
    listing = shown.decode().splitlines()
    assert "the second session" in listing[0] and "the first session" in listing[1]
    os.write(controller, b"2\n")
    out, _ = process.communicate(timeout=30)
    os.close(controller)

    assert process.returncode == 0
    assert json.loads(out)["result"] == "Back in the first."
    texts = [block["text"] for m in server.requests[2].messages for block in m["content"]]
    assert [text for text in texts if not is_listing(text)] == [
        "the first session",
        "First.",
        "go on",
    ]
