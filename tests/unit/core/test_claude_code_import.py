"""Claude Code's own transcripts read back and continued: the real one in the shared fixtures
(written by Claude Code 2.1.332), and the shapes of its format that the real one lacks, written
here in its field names (a compaction boundary, a call the session ended in, parallel calls
written as a fan with a result between them).

`load()` + `repair()` must give the conversation exactly, and `stayer --resume PATH` must go on
with it under a new stayer session over the real wire, the fake server checking the API's
history rules on every request.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stayer.messages import (
    JSON,
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    history_problems,
)
from stayer.session.repair import INTERRUPTED_NOTE, UNKNOWN_OUTCOME, Repaired, repair
from stayer.session.transcript import TranscriptWriter, load
from tests.e2e.cli import stayer
from tests.e2e.conversations import continued, sent, transcript_of, wire
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import reply

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code-transcripts"
"""A real transcript written by Claude Code 2.1.332 (copied from the team's shared fixtures, so a
clean clone has it)."""
REAL_ID = "c0a253a2-b287-47f0-bd41-07da0571e0de"
REAL = FIXTURES / f"{REAL_ID}.jsonl"
MODEL = "claude-sonnet-4-5"

READ_ID = "toolu_01ZidFOBzbcH2JxAzFp010uh"
GREP_ID = "toolu_01WOKrGJqUkCT6ZjrOgbPMhQ"
GREP_ERROR = (
    "<tool_use_error>Error: No such tool available: Grep. Grep is not available in this "
    "session — search file contents with `grep` via the Bash tool instead.</tool_use_error>"
)
REAL_CONVERSATION: tuple[Message, ...] = (
    UserMessage((TextBlock("Fix the bug in calc.py."),)),
    # four records (thinking, text, Read, Grep): the Grep call and its result hang beside the
    # chain from the newest record, which passes through the Read call only
    AssistantMessage(
        (
            ThinkingBlock(
                "The user wants the bug fixed. Read calc.py first.", "c2lnbmF0dXJlLW9uZQ=="
            ),
            TextBlock("Let me look at the code."),
            ToolUseBlock(READ_ID, "Read", {"file_path": "/home/dev/calc-demo/calc.py"}),
            ToolUseBlock(GREP_ID, "Grep", {"pattern": "def add", "path": "/home/dev/calc-demo"}),
        ),
        id="msg_01PBNlFrn5zAebBETCvIImkT",
        model=MODEL,
        stop_reason="tool_use",
        usage=Usage(input_tokens=10067, output_tokens=38),
    ),
    # two records, in the order Claude Code sent them (its api-request-blob record says so):
    # the refused Grep answered at once, before the Read finished
    UserMessage(
        (
            ToolResultBlock(GREP_ID, (TextBlock(GREP_ERROR),), is_error=True),
            ToolResultBlock(READ_ID, (TextBlock("1\tdef add(a, b):\n2\t    return a - b\n3\t"),)),
        )
    ),
    AssistantMessage(
        (
            ToolUseBlock(
                "toolu_01elbGLiFdEWbEaYTfrvIKfg",
                "Edit",
                {
                    "replace_all": False,
                    "file_path": "/home/dev/calc-demo/calc.py",
                    "old_string": "return a - b",
                    "new_string": "return a + b",
                },
            ),
        ),
        id="msg_01rQARsC5oAEDcDR9bSZhnVk",
        model=MODEL,
        stop_reason="tool_use",
        usage=Usage(input_tokens=10318, output_tokens=24),
    ),
    UserMessage(
        (
            ToolResultBlock(
                "toolu_01elbGLiFdEWbEaYTfrvIKfg",
                (
                    TextBlock(
                        "The file /home/dev/calc-demo/calc.py has been updated successfully. "
                        "(file state is current in your context — no need to Read it back)"
                    ),
                ),
            ),
        )
    ),
    AssistantMessage(
        (
            ToolUseBlock(
                "toolu_01IUuPOL2KeMn33vqmXsmRfB",
                "Bash",
                {
                    "command": "python3 -c 'import calc; print(calc.add(2, 3))'",
                    "description": "Check add",
                },
            ),
        ),
        id="msg_01Whx0bCP6pWeZk1PvMQEvCI",
        model=MODEL,
        stop_reason="tool_use",
        usage=Usage(input_tokens=10464, output_tokens=22),
    ),
    UserMessage((ToolResultBlock("toolu_01IUuPOL2KeMn33vqmXsmRfB", (TextBlock("5"),)),)),
    AssistantMessage(
        (TextBlock("Fixed: add now returns a + b (prints 5)."),),
        id="msg_011VGrlTPRKkDh9SNq9SDM5F",
        model=MODEL,
        stop_reason="end_turn",
        usage=Usage(input_tokens=10576, output_tokens=10),
    ),
    # the second prompt, given with --continue
    UserMessage((TextBlock("What was wrong?"),)),
    AssistantMessage(
        (TextBlock("It subtracted instead of adding."),),
        id="msg_01Nth0vZ9bCBTSxaPqxKPykJ",
        model=MODEL,
        stop_reason="end_turn",
        usage=Usage(input_tokens=10651, output_tokens=8),
    ),
)
REAL_SKIPPED = 42
"""Every record of the fixture but its 14 message records (8 assistant, 6 user): attachments
(15), api-request, api-request-blob (5 each), queue-operation, tools-used (4 each), last-prompt
(3), atis-latch, cost-state (2 each), api-request-shape, mode (1 each)."""


# --- helpers ----------------------------------------------------------------------------------


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def resume_over_the_wire(
    transcript: Path, cwd: Path, prompt: str, answer: str
) -> tuple[RecordedRequest, dict[str, Any], Path]:
    """`stayer -p PROMPT --resume TRANSCRIPT` against a strict fake server: the request it
    sent, its JSON result, and the new session's transcript."""
    with FakeModelServer() as server:
        server.enqueue(reply(answer))
        done = stayer(
            "-p", prompt, "--resume", str(transcript), "--output-format", "json",
            cwd=cwd, env=server.env(),
        )  # fmt: skip
        assert done.status == 0, done.stderr
        (request,) = server.requests
    result = json.loads(done.stdout)
    assert result["result"] == answer
    return request, result, transcript_of(cwd, result["session_id"])


# --- the real transcript ----------------------------------------------------------------------


def test_the_real_transcript_loads_as_the_whole_conversation_it_holds() -> None:
    loaded = load(REAL)

    assert loaded.messages == REAL_CONVERSATION
    assert (loaded.session_id, loaded.skipped, loaded.warnings) == (REAL_ID, REAL_SKIPPED, ())
    # a finished conversation that Claude Code sent as it stands: nothing to repair
    assert repair(loaded.messages) == Repaired(REAL_CONVERSATION, (), interrupted=False)


def test_the_real_transcript_is_continued_under_a_new_stayer_session(tmp_path: Path) -> None:
    copy = tmp_path / "claude" / REAL.name
    copy.parent.mkdir()
    shutil.copyfile(REAL, copy)
    cwd = project(tmp_path)

    request, result, new = resume_over_the_wire(copy, cwd, "Add a test for add.", "Added.")

    assert sent(request) == continued(REAL_CONVERSATION, ["Add a test for add."])
    assert result["session_id"] != REAL_ID
    assert copy.read_bytes() == REAL.read_bytes()  # another harness's file is only read
    saved = load(new)
    assert saved.session_id == result["session_id"]
    assert saved.messages[:-1] == (
        *REAL_CONVERSATION,
        UserMessage((TextBlock("Add a test for add."),)),
    )
    assert isinstance(saved.messages[-1], AssistantMessage)
    assert saved.messages[-1].text == "Added."
    assert (saved.skipped, saved.warnings) == (0, ())


# --- shapes of the format the real transcript lacks -------------------------------------------


class ClaudeCodeFile:
    """A transcript written record by record with Claude Code 2.1.332's field names."""

    session_id = "5d2f8a71-3c4e-4b6a-9f10-2e7d8c9b0a13"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, JSON]] = []

    def add(self, kind: str, uuid: str, parent: str | None, **fields: JSON) -> str:
        """One chain record: common fields, then the record's own."""
        self.records.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/home/dev/calc-demo",
                "sessionId": self.session_id,
                "version": "2.1.332",
                "gitBranch": "main",
                "entrypoint": "cli",
                "type": kind,
                "uuid": uuid,
                "timestamp": "2026-11-30T09:12:44.101Z",
                **fields,
            }
        )
        return uuid

    def prompt(self, uuid: str, parent: str | None, text: str, **fields: JSON) -> str:
        return self.add("user", uuid, parent, message={"role": "user", "content": text}, **fields)

    def block(self, uuid: str, parent: str, answer: str, block: JSON, stop: str | None) -> str:
        """One content block of an answer, as its own record (stop_reason as written at the
        block's end: often still null)."""
        message = {
            "id": answer,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 2100, "output_tokens": 40},
        }
        return self.add("assistant", uuid, parent, message=message, requestId="req_011CV")

    def result(self, uuid: str, parent: str, call: str, text: str) -> str:
        content = [{"tool_use_id": call, "type": "tool_result", "content": text}]
        return self.add(
            "user",
            uuid,
            parent,
            message={"role": "user", "content": content},
            toolUseResult={"stdout": text, "stderr": "", "interrupted": False},
            sourceToolAssistantUUID=parent,
        )

    def side(self, kind: str, **fields: JSON) -> None:
        """A record beside the chain (no uuid)."""
        self.records.append({"type": kind, "sessionId": self.session_id, **fields})

    def write(self) -> Path:
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return self.path


@pytest.fixture
def claude_file(tmp_path: Path) -> Iterator[ClaudeCodeFile]:
    folder = tmp_path / "claude"
    folder.mkdir()
    yield ClaudeCodeFile(folder / f"{ClaudeCodeFile.session_id}.jsonl")


def bash(call: str, command: str) -> JSON:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}


def text(value: str) -> JSON:
    return {"type": "text", "text": value}


SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
    "Summary:\n1. Primary Request and Intent: fix add() in calc.py, then add tests.\n"
    "8. Current Work: the fix is in; tests come next."
)


def compacted_file(file: ClaudeCodeFile) -> Path:
    """A session compacted once: the boundary starts a new root, the summary hangs off it, and
    the work goes on after it."""
    file.prompt("u-1", None, "Fix the bug in calc.py.")
    file.block("a-1", "u-1", "msg_old", text("Fixed it."), "end_turn")
    file.side("last-prompt", lastPrompt="Fix the bug in calc.py.", leafUuid="a-1")
    file.add(
        "system", "b-1", None,
        subtype="compact_boundary", content="Conversation compacted", isMeta=False,
        level="info", logicalParentUuid="a-1",
        compactMetadata={"trigger": "auto", "preTokens": 167_012},
    )  # fmt: skip
    file.prompt("s-1", "b-1", SUMMARY, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    file.block("a-2", "s-1", "msg_new", text("Writing the tests now."), None)
    file.block("a-3", "a-2", "msg_new", bash("toolu_t1", "pytest -q"), "tool_use")
    file.result("r-1", "a-3", "toolu_t1", "2 passed")
    file.block("a-4", "r-1", "msg_last", text("Both tests pass."), "end_turn")
    return file.write()


AFTER_COMPACTION: tuple[Message, ...] = (
    UserMessage((TextBlock(SUMMARY),)),
    AssistantMessage(
        (
            TextBlock("Writing the tests now."),
            ToolUseBlock("toolu_t1", "Bash", {"command": "pytest -q"}),
        ),
        id="msg_new",
        model=MODEL,
        stop_reason="tool_use",
        usage=Usage(input_tokens=2100, output_tokens=40),
    ),
    UserMessage((ToolResultBlock("toolu_t1", (TextBlock("2 passed"),)),)),
    AssistantMessage(
        (TextBlock("Both tests pass."),),
        id="msg_last",
        model=MODEL,
        stop_reason="end_turn",
        usage=Usage(input_tokens=2100, output_tokens=40),
    ),
)


def test_a_compacted_transcript_resumes_from_its_summary(claude_file: ClaudeCodeFile) -> None:
    loaded = load(compacted_file(claude_file))

    assert loaded.messages == AFTER_COMPACTION
    # the two messages before the boundary, the boundary, and the last-prompt record
    assert (loaded.skipped, loaded.warnings) == (4, ())
    assert repair(loaded.messages) == Repaired(AFTER_COMPACTION, (), interrupted=False)


def test_a_compacted_transcript_is_continued_from_its_summary(
    claude_file: ClaudeCodeFile, tmp_path: Path
) -> None:
    path = compacted_file(claude_file)
    request, _, new = resume_over_the_wire(path, project(tmp_path), "And the docs?", "Done.")

    assert sent(request) == continued(AFTER_COMPACTION, ["And the docs?"])
    assert load(new).messages[: len(AFTER_COMPACTION)] == AFTER_COMPACTION


def interrupted_file(file: ClaudeCodeFile) -> Path:
    """A session that ended while a call ran: its record is the last one, with no result."""
    file.prompt("u-1", None, "Run the slow suite.")
    file.block(
        "a-1", "u-1", "msg_1", {"type": "thinking", "thinking": "Run it.", "signature": "c2ln"},
        None,
    )  # fmt: skip
    file.block("a-2", "a-1", "msg_1", text("Running it."), None)
    file.block("a-3", "a-2", "msg_1", bash("toolu_slow", "pytest -q tests/slow"), None)
    file.side("last-prompt", lastPrompt="Run the slow suite.", leafUuid="a-3")
    return file.write()


INTERRUPTED_ANSWER = AssistantMessage(
    (
        ThinkingBlock("Run it.", "c2ln"),
        TextBlock("Running it."),
        ToolUseBlock("toolu_slow", "Bash", {"command": "pytest -q tests/slow"}),
    ),
    id="msg_1",
    model=MODEL,
    usage=Usage(input_tokens=2100, output_tokens=40),
)
UNKNOWN = ToolResultBlock("toolu_slow", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)


def test_a_call_the_session_ended_in_gets_an_unknown_outcome(
    claude_file: ClaudeCodeFile,
) -> None:
    loaded = load(interrupted_file(claude_file))
    prompt = UserMessage((TextBlock("Run the slow suite."),))
    assert loaded.messages == (prompt, INTERRUPTED_ANSWER)
    assert loaded.skipped == 1

    repaired = repair(loaded.messages)

    assert repaired.messages == (prompt, INTERRUPTED_ANSWER, UserMessage((UNKNOWN,)))
    assert repaired.interrupted
    assert repaired.fixes == ("tool calls in message 1 get no result: toolu_slow",)
    assert history_problems(repaired.messages) == []


def test_a_call_the_session_ended_in_is_resumed_with_its_outcome_unknown(
    claude_file: ClaudeCodeFile, tmp_path: Path
) -> None:
    path = interrupted_file(claude_file)
    request, _, _ = resume_over_the_wire(path, project(tmp_path), "Go on.", "Checked.")

    assert sent(request) == wire(
        [
            UserMessage((TextBlock("Run the slow suite."),)),
            INTERRUPTED_ANSWER,
            UserMessage((UNKNOWN, TextBlock(INTERRUPTED_NOTE), TextBlock("Go on."))),
        ]
    )


def test_parallel_calls_with_a_result_between_them_join_into_one_round(
    claude_file: ClaudeCodeFile,
) -> None:
    # tools start while the answer streams: the first call's result can be written before the
    # second call's block, and the newest record descends from the first call's result only
    file = claude_file
    file.prompt("u-1", None, "Look around.")
    file.block("a-1", "u-1", "msg_1", text("Two looks."), None)
    file.block("a-2", "a-1", "msg_1", bash("toolu_ls", "ls"), None)
    file.result("r-1", "a-2", "toolu_ls", "calc.py")
    file.block("a-3", "a-2", "msg_1", bash("toolu_log", "git log -1"), "tool_use")
    file.result("r-2", "a-3", "toolu_log", "abc123 fix add")
    file.add("attachment", "t-1", "r-1", attachment={"type": "todo", "content": []})
    file.block("a-4", "t-1", "msg_2", text("One file, one commit."), "end_turn")

    loaded = load(file.write())

    assert loaded.messages == (
        UserMessage((TextBlock("Look around."),)),
        AssistantMessage(
            (
                TextBlock("Two looks."),
                ToolUseBlock("toolu_ls", "Bash", {"command": "ls"}),
                ToolUseBlock("toolu_log", "Bash", {"command": "git log -1"}),
            ),
            id="msg_1",
            model=MODEL,
            stop_reason="tool_use",
            usage=Usage(input_tokens=2100, output_tokens=40),
        ),
        UserMessage(
            (
                ToolResultBlock("toolu_ls", (TextBlock("calc.py"),)),
                ToolResultBlock("toolu_log", (TextBlock("abc123 fix add"),)),
            )
        ),
        AssistantMessage(
            (TextBlock("One file, one commit."),),
            id="msg_2",
            model=MODEL,
            stop_reason="end_turn",
            usage=Usage(input_tokens=2100, output_tokens=40),
        ),
    )
    assert loaded.skipped == 1  # the attachment
    assert history_problems(loaded.messages) == []


def test_a_result_a_rewritten_message_replaced_is_not_gathered_back(tmp_path: Path) -> None:
    # stayer's own file: a resumed session merges its prompt into the results that ended the
    # old one, and writes the merged message as a new branch beside them
    writer = TranscriptWriter(tmp_path / "s.jsonl", session_id="s", cwd=str(tmp_path))
    call = ToolUseBlock("toolu_1", "Bash", {"command": "ls"})
    asked = (UserMessage((TextBlock("Look."),)), AssistantMessage((call,), id="msg_1"))
    result = ToolResultBlock("toolu_1", (TextBlock("calc.py"),))
    writer.sync((*asked, UserMessage((result,))))
    merged = UserMessage((result, TextBlock("go on")))
    writer.sync((*asked, merged, AssistantMessage((TextBlock("Done."),), id="msg_2")))
    writer.close()

    loaded = load(writer.path)

    assert loaded.messages == (*asked, merged, AssistantMessage((TextBlock("Done."),), id="msg_2"))
    assert loaded.skipped == 1


def test_answers_that_share_an_id_stay_apart(tmp_path: Path) -> None:
    # some OpenAI-compatible servers give every answer the same id: a stayer answer after a
    # round of results is a new answer, not a further block of the one before
    writer = TranscriptWriter(tmp_path / "s.jsonl", session_id="s", cwd=str(tmp_path))
    conversation = (
        UserMessage((TextBlock("Look."),)),
        AssistantMessage((ToolUseBlock("call_1", "Bash", {"command": "ls"}),), id="chatcmpl-1"),
        UserMessage((ToolResultBlock("call_1", (TextBlock("calc.py"),)),)),
        AssistantMessage((TextBlock("One file."),), id="chatcmpl-1"),
    )
    writer.sync(conversation)
    writer.close()

    assert load(writer.path).messages == conversation


def test_an_old_branch_holding_the_same_answer_is_not_gathered_back(tmp_path: Path) -> None:
    # After a compaction the kept round is written again under the summary; the old copy of
    # that answer hangs off messages the conversation no longer has, and must stay out.
    from stayer.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock
    from stayer.messages import UserMessage as User

    call = ToolUseBlock("toolu_1", "Bash", {"command": "ls"})
    kept = AssistantMessage((call,), id="msg_kept")
    results = User((ToolResultBlock("toolu_1", (TextBlock("a.txt"),)),))
    writer = TranscriptWriter(tmp_path / "s.jsonl", session_id="s", cwd=str(tmp_path))
    writer.sync((User.of_text("work"), kept, results))
    summary = User.of_text("[notes]")
    writer.sync((summary, kept, results))
    writer.close()

    assert load(tmp_path / "s.jsonl").messages == (summary, kept, results)
