"""A session killed (SIGKILL) in the middle of a round of tool calls keeps what the calls that
had finished returned: each result is on disk as its call finishes, as the model would see it
(a PostToolUse hook's addition included), so `--resume` sends it, and only the call that was
still running is answered as of unknown outcome.

The real CLI runs against the fake server: one answer makes two Bash calls; the first prints and
ends (a project hook adds context to its result), the second makes a file, prints a line and
waits for a file the test never makes. A call that changes something never runs beside another,
so the second starts once the first has ended; the session writes a result before it passes its
event on, and the events come in the order they happened: once the second call's line reaches
stdout (a `tool_progress` line), the first one's result is on disk, and the test kills stayer.
"""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path

from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
)
from stayer.session.listings import is_listing
from stayer.session.repair import INTERRUPTED_NOTE, UNKNOWN_OUTCOME
from stayer.session.transcript import load
from tests.e2e.cli import start_streaming, stayer
from tests.e2e.conversations import continued, sent, transcript_of, wire
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

PROMPT = "Check both."
FIRST = {"command": "echo first done"}
SECOND = {"command": "touch waiting && echo waiting && until [ -e never ]; do sleep 0.01; done"}
HOOK_SAYS = "The first check was looked over."
WAIT_S = 30.0


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    said = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": HOOK_SAYS}}
    hook = {"type": "command", "command": f"echo '{json.dumps(said)}'"}
    settings = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    return root


def _killed_mid_round(root: Path, session_id: str) -> None:
    """Run the session until the second call prints, then kill it."""
    with FakeModelServer(allow_unused=True) as server:
        server.enqueue(
            reply(ToolCall("toolu_m1", "Bash", FIRST), ToolCall("toolu_m2", "Bash", SECOND)),
            reply("never asked for"),
        )
        process = start_streaming(root, server.env(), PROMPT, session_id)
        try:
            assert process.stdout is not None
            for line in process.stdout:
                event = json.loads(line)
                if event["type"] == "tool_progress" and event["tool_use_id"] == "toolu_m2":
                    break
            else:
                raise AssertionError("stayer ended before the second call printed")
            process.send_signal(signal.SIGKILL)
            _, errors = process.communicate(timeout=WAIT_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == -signal.SIGKILL, errors
        assert len(server.requests) == 1


def test_a_kill_mid_round_keeps_the_finished_calls_result(tmp_path: Path) -> None:
    root = _project(tmp_path)
    session_id = str(uuid.uuid4())
    _killed_mid_round(root, session_id)

    answer = AssistantMessage(
        (ToolUseBlock("toolu_m1", "Bash", FIRST), ToolUseBlock("toolu_m2", "Bash", SECOND))
    )
    finished = ToolResultBlock("toolu_m1", (TextBlock(f"first done\n\n{HOOK_SAYS}"),))
    loaded = load(transcript_of(root, session_id))
    first = loaded.messages[0]  # the prompt, then what the session lists for the model
    listing = [b for b in first.content if isinstance(b, TextBlock) and is_listing(b.text)]
    asked = UserMessage((TextBlock(PROMPT), *listing))
    # the file holds the finished call's result, exactly as the model would have read it
    assert wire(loaded.messages) == wire([asked, answer, UserMessage((finished,))])

    with FakeModelServer() as server:
        server.enqueue(reply("Picked it up."))
        done = stayer(
            "-p", "go on", "--resume", session_id, "--output-format", "json",
            "--dangerously-skip-permissions", cwd=root, env=server.env(),
        )  # fmt: skip
        assert done.status == 0, done.stderr
        (request,) = server.requests

    unknown = ToolResultBlock("toolu_m2", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
    resumed: list[Message] = [asked, answer, UserMessage((finished, unknown))]
    assert history_problems(resumed) == []
    assert sent(request) == continued(resumed, [INTERRUPTED_NOTE, "go on"])
