"""A session killed with SIGKILL at any moment resumes whole: what was flushed is a valid
conversation once repaired, it holds everything the model was sent, and `--resume` goes on
with it over the real wire.

The real CLI runs a scripted session against the fake server: Bash, then Write and Bash in
parallel, a Bash that waits for the test, a Read, and an answer. It is killed at moments chosen
by a seeded random draw (after N lines of its stream-json, deltas included) and at named ones:
while an answer is held mid-stream by the server, once the Write's file lands, while a tool
runs. Each time the transcript is read back (`load`) and repaired (`repair`), and must be:

* valid for the API (`history_problems` finds nothing);
* complete up to the last flushed record: the last request the server saw is a prefix of it,
  and it is itself a prefix of the conversation of the same session run to its end;
* resumable: `stayer -p "go on" --resume <id>` sends exactly the repaired conversation with the
  prompt (a call that got no result answered as of unknown outcome, an unfinished turn noted),
  the server accepts it, and the session's file then holds the whole of it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from stayer.messages import (
    JSON,
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    UserMessage,
    history_problems,
)
from stayer.session.repair import INTERRUPTED_NOTE, UNKNOWN_OUTCOME, Repaired, repair
from stayer.session.transcript import load
from tests.e2e.cli import start_streaming, stayer
from tests.e2e.conversations import continued, sent, transcript_of, wire
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Reply, Response, Thinking, ToolCall, reply

PROMPT = "Set up the work folder and check it."
BUSY = "tool-running"
"""The file the waiting Bash call makes once it runs."""
GO = "tool-may-finish"
"""The file the waiting Bash call waits for."""
WAIT_FOR_GO = f"until [ -e {GO} ]; do sleep 0.01; done"
ROOT = "<root>"
FINAL = "a.txt holds one and b.txt holds two."
SEED = 2026
KILLS_AT_RANDOM = 8
WAIT_S = 20.0


def script(root: Path, *, hold: bool = False) -> list[Response]:
    """The session's answers; with `hold`, the server keeps the second one mid-stream, once
    its first call has streamed whole, until the client goes away."""
    answers: list[Reply] = [
        reply(
            Thinking("Make the folder first."),
            "Making the folder.",
            ToolCall("toolu_k1", "Bash", {"command": "mkdir work && echo one > work/a.txt"}),
        ),
        reply(
            ToolCall("toolu_k2", "Write", {"file_path": f"{root}/work/b.txt", "content": "two\n"}),
            ToolCall("toolu_k3", "Bash", {"command": "cat work/a.txt"}),
        ),
        reply(
            "Counting, then waiting.",
            ToolCall(
                "toolu_k4",
                "Bash",
                {"command": f"wc -c < work/b.txt && touch {BUSY} && {WAIT_FOR_GO}"},
            ),
        ),
        reply(ToolCall("toolu_k5", "Read", {"file_path": f"{root}/work/b.txt"})),
        reply(FINAL),
    ]
    if not hold:
        return list(answers)
    stream = answers[1].render("anthropic")
    return [answers[0], stream.paused(at=stream.index_of("toolu_k3")), *answers[2:]]


# --- running and killing the CLI --------------------------------------------------------------


@dataclass(frozen=True)
class Kill:
    """When to kill: after `lines` lines of output, once `made` exists in the session's
    folder, or while the server holds the second answer mid-stream."""

    lines: int | None = None
    made: str | None = None
    held: bool = False


@dataclass(frozen=True)
class Run:
    root: Path
    session_id: str
    requests: list[RecordedRequest]
    lines: int

    @property
    def transcript(self) -> Path:
        return transcript_of(self.root, self.session_id)


def run_session(root: Path, kill: Kill | None) -> Run:
    """Run the scripted session in `root`, killed as `kill` says (None: to its end)."""
    root.mkdir()
    session_id = str(uuid.uuid4())
    waiting = kill is not None and kill.made == BUSY
    if not waiting:
        (root / GO).touch()
    with FakeModelServer(allow_unused=True) as server:
        server.enqueue(*script(root, hold=kill is not None and kill.held))
        process = start_streaming(root, server.env(), PROMPT, session_id)
        lines = 0
        try:
            if kill is not None:
                lines = _until_killed(process, root, server, kill)
                process.send_signal(signal.SIGKILL)
            rest, errors = process.communicate(timeout=WAIT_S)
        finally:
            if process.poll() is None:  # a failed wait: do not leave it running
                process.kill()
                process.communicate()
            (root / GO).touch()  # a call left waiting by the kill ends too
        # a kill after a late line can land once the session has ended by itself: a
        # finished transcript must resume just the same
        ended = (0,) if kill is None else (-signal.SIGKILL, 0) if kill.lines else (-signal.SIGKILL,)
        assert process.returncode in ended, errors
        return Run(root, session_id, server.requests, lines + len(rest.splitlines()))


def _until_killed(
    process: subprocess.Popen[str], root: Path, server: FakeModelServer, kill: Kill
) -> int:
    """Wait for the moment to kill; returns the lines read until then."""
    assert process.stdout is not None
    if kill.held:
        server.wait_for_requests(2, timeout_s=WAIT_S)
        started = [False]

        def first_call_streamed(line: str) -> bool:
            started[0] = started[0] or "toolu_k2" in line
            return started[0] and "content_block_stop" in line

        return _read_until(process.stdout, first_call_streamed)
    if kill.made is not None:
        made = root / kill.made
        _wait_for(lambda: made.exists() or process.poll() is not None)
        assert made.exists(), f"the session ended before it made {kill.made}"
        return 0
    assert kill.lines is not None
    count = [0]

    def counted(_: str) -> bool:
        count[0] += 1
        return count[0] == kill.lines

    return _read_until(process.stdout, counted)


def _read_until(stdout: IO[str], done: Callable[[str], bool]) -> int:
    for number, line in enumerate(stdout, start=1):
        if done(line):
            return number
    raise AssertionError("the session ended before the moment to kill it")


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the moment to kill"
        time.sleep(0.005)


# --- comparing conversations ------------------------------------------------------------------


def rooted(conversation: list[JSON], root: Path) -> list[JSON]:
    """A conversation with the session's folder written as <root>, to compare across runs."""
    text = json.dumps(conversation).replace(str(root.resolve()), ROOT)
    return list(json.loads(text))


def resume(run: Run, prompt: str, answer: str) -> RecordedRequest:
    """`stayer -p PROMPT --resume <id>` in the session's folder; the request it sent."""
    with FakeModelServer() as server:
        server.enqueue(reply(answer))
        done = stayer(
            "-p", prompt, "--resume", run.session_id, "--output-format", "json",
            "--dangerously-skip-permissions", cwd=run.root, env=server.env(),
        )  # fmt: skip
        assert done.status == 0, done.stderr
        assert json.loads(done.stdout)["session_id"] == run.session_id
        (request,) = server.requests
    return request


# --- the proofs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Whole:
    """The session run to its end: its conversation (<root> for its folder), its output lines."""

    conversation: list[JSON]
    lines: int


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Whole:
    run = run_session(tmp_path_factory.mktemp("whole") / "session", None)
    loaded = load(run.transcript)
    assert loaded.warnings == ()
    assert len(run.requests) == 5
    conversation = wire(loaded.messages)
    # the file holds the last request and the answer to it: the whole conversation
    assert conversation[:-1] == sent(run.requests[-1])
    assert conversation[-1] == wire([AssistantMessage((TextBlock(FINAL),))])[0]
    return Whole(rooted(conversation, run.root), run.lines)


def _prefix_of(held: list[JSON], conversation: list[JSON]) -> bool:
    """Whether `held` begins `conversation`; its last answer may be the start of one (an answer
    is on record up to a call before the call runs, while the rest of it still streams), and
    the results after it those of the calls that had finished, in call order (each is on
    record as its call finishes, maybe before the rest of its answer has streamed)."""
    if len(held) > len(conversation):
        return False
    for index, (part, whole) in enumerate(zip(held, conversation, strict=False)):
        if part != whole and (index < len(held) - 2 or not _part_of(part, whole)):
            return False
    return True


def _part_of(part: JSON, whole: JSON) -> bool:
    """Whether `part` is the start of the answer `whole`, or some of the results `whole`."""
    assert isinstance(part, dict) and isinstance(whole, dict)
    blocks, all_blocks = part.get("content"), whole.get("content")
    assert isinstance(blocks, list) and isinstance(all_blocks, list)
    if part.get("role") != whole.get("role"):
        return False
    if part.get("role") == "assistant":
        return blocks == all_blocks[: len(blocks)]
    finished = [block for block in all_blocks if block in blocks]
    return blocks == finished and all(
        isinstance(block, dict) and block["type"] == "tool_result" for block in blocks
    )


def check_killed(run: Run, whole: Whole) -> tuple[list[JSON], Repaired]:
    """The killed session's transcript, repaired, is valid and complete, and it is resumed;
    returns what the file held (<root> for the session's folder) and its repair."""
    loaded = load(run.transcript)
    assert loaded.session_id == run.session_id
    assert all("last write was cut short" in warning for warning in loaded.warnings), (
        loaded.warnings
    )
    held = rooted(wire(loaded.messages), run.root)
    seen = rooted(sent(run.requests[-1]), run.root) if run.requests else []
    assert held[: len(seen)] == seen  # everything the model was sent was flushed first
    assert _prefix_of(held, whole.conversation)  # and nothing else, in order
    repaired = repair(loaded.messages)
    assert history_problems(repaired.messages) == []

    note = [INTERRUPTED_NOTE] if repaired.interrupted else []
    request = resume(run, "go on", "Picked it up.")
    expected = continued(repaired.messages, [*note, "go on"])
    assert sent(request) == expected
    answer = wire([AssistantMessage((TextBlock("Picked it up."),))])
    assert wire(load(run.transcript).messages) == [*expected, *answer]
    return held, repaired


@pytest.mark.parametrize("draw", range(KILLS_AT_RANDOM))
def test_a_kill_at_a_random_line_resumes_whole(draw: int, whole: Whole, tmp_path: Path) -> None:
    # distinct moments over the whole session, the same ones on every run
    lines = random.Random(SEED).sample(range(1, whole.lines), KILLS_AT_RANDOM)[draw]
    run = run_session(tmp_path / "session", Kill(lines=lines))
    check_killed(run, whole)


def test_a_kill_while_an_answer_streams_resumes_noting_the_cut_turn(
    whole: Whole, tmp_path: Path
) -> None:
    run = run_session(tmp_path / "session", Kill(held=True))
    _, repaired = check_killed(run, whole)

    # the held answer's first call started as soon as its block streamed, and was on record
    # before it ran: the conversation keeps the answer up to it, with the call's result when it
    # finished before the kill (a Write is quick; its result is on record as it finishes), else
    # its outcome unknown, and the next prompt says the turn was cut
    assert len(run.requests) == 2
    assert rooted(wire(repaired.messages[:3]), run.root) == whole.conversation[:3]
    answer, results = repaired.messages[3:]
    assert isinstance(answer, AssistantMessage)
    assert [call.id for call in answer.tool_uses] == ["toolu_k2"]
    unknown = ToolResultBlock("toolu_k2", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
    written = TextBlock(f"Created {run.root}/work/b.txt (1 line).")
    assert results in (
        UserMessage((unknown,)),
        UserMessage((ToolResultBlock("toolu_k2", (written,)),)),
    )
    if results != UserMessage((unknown,)):
        assert (run.root / "work" / "b.txt").read_text() == "two\n"
    assert repaired.interrupted


def test_a_kill_once_a_tool_wrote_its_file_resumes_whole(whole: Whole, tmp_path: Path) -> None:
    run = run_session(tmp_path / "session", Kill(made="work/b.txt"))
    held, _ = check_killed(run, whole)

    # a call whose effect can be seen was on disk before it ran (its answer may still have
    # been streaming: then it is on record up to the call)
    assert len(held) >= 4 and _prefix_of(held[:4], whole.conversation)
    assert held[3]["content"][0]["id"] == "toolu_k2"


def test_a_kill_while_a_tool_runs_resumes_with_its_outcome_unknown(
    whole: Whole, tmp_path: Path
) -> None:
    run = run_session(tmp_path / "session", Kill(made=BUSY))
    _, repaired = check_killed(run, whole)

    assert len(run.requests) == 3
    unknown = ToolResultBlock("toolu_k4", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
    assert repaired.messages[-1] == UserMessage((unknown,))
    assert rooted(wire(repaired.messages[:-1]), run.root) == whole.conversation[:6]
    assert repaired.interrupted


def test_a_record_torn_by_a_kill_mid_write_costs_that_record_only(tmp_path: Path) -> None:
    run = run_session(tmp_path / "session", None)
    full = load(run.transcript).messages
    data = run.transcript.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = random.Random(7).randrange(last + 1, len(data) - 1)
    run.transcript.write_bytes(data[:cut])  # what a kill during the last write leaves

    first = resume(run, "go on", "Picked it up.")
    # the final answer is lost with its record; the conversation ends on the Read's result
    assert sent(first) == continued(full[:-1], [INTERRUPTED_NOTE, "go on"])
    # and the resumed session's records are whole after the torn one: a second resume has
    # everything
    second = resume(run, "and then?", "Nothing else.")
    assert sent(second) == [
        *sent(first),
        *wire([AssistantMessage((TextBlock("Picked it up."),))]),
        {"role": "user", "content": [{"type": "text", "text": "and then?"}]},
    ]
