"""The edges a review found: blank text, consumers that leave early, kills mid-summary, lost
records, unusable paths, and what redaction touches."""

from __future__ import annotations

import json
import os
import stat
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
from inline_snapshot import snapshot

import stayer
from stayer.events import Event, Finished, Terminal
from stayer.messages import (
    AssistantMessage,
    HistoryProblem,
    TextBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    history_problems,
)
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.repair import INTERRUPTED_NOTE, repair
from stayer.session.session import Session
from stayer.session.transcript import Scrubber, TranscriptWriter, load, summaries
from tests.event_form import stream


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config"), **more.pop("env", {})}
    return QueryOptions(cwd=tmp_path, provider=model, permission_mode="bypassPermissions",
                        env=env, **more)  # fmt: skip


async def submit(session: Session, prompt: str) -> list[Event]:
    return [event async for event in session.submit(prompt)]


def test_a_blank_text_block_is_a_problem_and_repair_takes_it_out() -> None:
    blank = AssistantMessage((TextBlock("\n\n"),), id="msg_blank")
    broken = (UserMessage.of_text("go"), blank, UserMessage.of_text("[Request interrupted]"))
    assert history_problems(broken) == [HistoryProblem("blank_text", 1)]
    assert repair(broken).messages == (
        UserMessage((TextBlock("go"), TextBlock("[Request interrupted]"))),
    )


async def test_a_run_ending_on_a_blank_answer_does_not_keep_it(tmp_path: Path) -> None:
    model = ScriptedProvider([text("  "), text(" \n"), text("\t")])
    async with Session(options(tmp_path, model)) as session:
        events = await submit(session, "hi")
    # A blank answer is taken back, the model nudged, then asked again, and the run ends.
    assert stream(events, {tmp_path: "<tmp>"}) == snapshot(
        [
            {
                "type": "session_started",
                "model": "scripted",
                "provider": "scripted",
                "cwd": "<tmp>",
                "permission_mode": "bypassPermissions",
                "context_window": 32768,
                "max_output_tokens": 8192,
            },
            {"type": "request_started", "turn": 1},
            {"type": "withdrawn", "reason": "recovering: empty_response_nudge"},
            {"type": "continuing", "reason": "empty_response_nudge"},
            {"type": "request_started", "turn": 1},
            {"type": "withdrawn", "reason": "recovering: empty_response_resend"},
            {"type": "continuing", "reason": "empty_response_resend"},
            {"type": "request_started", "turn": 1},
            {
                "type": "finished",
                "terminal": "empty_response",
                "message": (
                    "The model gave no visible answer 3 times in a row, even when asked again."
                ),
                "num_turns": 1,
                "usage": {
                    "input_tokens": 300,
                    "output_tokens": 60,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
                "cost_usd": 0.0,
                "result_text": "",
                "stop_reason": "end_turn",
                "model_usage": [
                    {
                        "model": "scripted",
                        "usage": {
                            "input_tokens": 300,
                            "output_tokens": 60,
                            "cache_read_input_tokens": 0,
                            "cache_creation_input_tokens": 0,
                        },
                        "cost_usd": 0.0,
                        "context_window": 32768,
                        "max_output_tokens": 8192,
                    }
                ],
            },
        ]
    )
    end = events[-1]
    assert isinstance(end, Finished)
    assert history_problems(end.messages) == []
    (only,) = end.messages  # the prompt (with the nudge merged in), and no blank answer
    assert isinstance(only, UserMessage) and only.content[0] == TextBlock("hi")


async def test_an_empty_prompt_is_refused_in_one_line(tmp_path: Path) -> None:
    async with Session(options(tmp_path, ScriptedProvider([]))) as session:
        with pytest.raises(stayer.ConfigError, match="the prompt is empty"):
            session.submit("  ")


async def test_a_consumer_that_leaves_early_leaves_the_session_usable(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [tool_call("Bash", {"command": "echo done > mark.txt"}), text("ran"), text("again")]
    )
    async with Session(options(tmp_path, model)) as session:
        async with aclosing(session.submit("make the mark")) as events:
            async for event in events:
                if isinstance(event, stayer.ToolCallFinished):
                    break  # the caller has seen enough
        assert (tmp_path / "mark.txt").exists()
        again = await submit(session, "go on")  # not refused as busy

    end = again[-1]
    assert isinstance(end, Finished) and end.terminal is Terminal.COMPLETED
    sent = model.requests[-1].messages
    assert history_problems(sent) == []
    assert isinstance(sent[1], AssistantMessage) and sent[1].tool_uses  # the work is kept
    assert TextBlock(INTERRUPTED_NOTE) in sent[-1].content


async def test_an_interrupt_before_the_first_event_still_stops_the_run(tmp_path: Path) -> None:
    model = ScriptedProvider([text("never asked")])
    async with Session(options(tmp_path, model)) as session:
        events = session.submit("hi")
        session.interrupt()
        end = [event async for event in events][-1]
    assert isinstance(end, Finished) and end.terminal is Terminal.ABORTED_STREAMING
    assert model.requests == []  # stopped before the model was asked anything


async def test_tool_results_are_on_disk_before_a_summary_is_asked_for(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    box: list[Session] = []

    def summary(request: ModelRequest) -> Reply:
        path = box[0].transcript_path
        assert path is not None
        seen.append([json.loads(line)["type"] for line in path.read_text().splitlines()])
        return text("NOTES")

    big = Reply(
        (ToolUseBlock("toolu_1", "Bash", {"command": "true"}),),
        usage=Usage(input_tokens=190_000),
    )
    model = ScriptedProvider([big, summary, text("done")])
    async with Session(options(tmp_path, model)) as session:
        box.append(session)
        await submit(session, "work")
    # the results too, not only the call: the call's as it finished, then its round's
    assert seen == [["user", "assistant", "user", "user"]]


def test_a_lost_middle_record_costs_that_record_not_all_before_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter(path, session_id="s", cwd=str(tmp_path))
    turns: list[UserMessage | AssistantMessage] = [
        UserMessage.of_text("one"),
        AssistantMessage((TextBlock("1"),), id="m1"),
        UserMessage.of_text("two"),
        AssistantMessage((TextBlock("2"),), id="m2"),
    ]
    writer.sync(turns)
    writer.close()
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], *lines[3:]]) + "\n")  # the third record is lost

    loaded = load(path)
    assert loaded.messages == (turns[0], turns[1], turns[3])
    assert loaded.warnings == (
        f"{path}: 1 record(s) point to a parent the file does not hold; the conversation was "
        "joined across the gap in file order",
    )
    assert repair(loaded.messages).messages[0] == turns[0]


def test_a_malformed_record_is_skipped_and_a_bad_file_hides_no_other(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    record = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user",
              "content": ["not a block"], "usage": "x"}}  # fmt: skip
    bad.write_text(json.dumps(record) + "\n")
    assert load(bad).warnings == (f"{bad}: 1 unreadable message record(s) skipped",)
    good = tmp_path / "good.jsonl"
    writer = TranscriptWriter(good, session_id="good", cwd=str(tmp_path))
    writer.sync((UserMessage.of_text("hello"),))
    writer.close()
    listed = summaries(tmp_path, cwd=tmp_path)
    assert sorted(summary.session_id for summary in listed) == ["bad", "good"]


def test_the_listed_prompt_leaves_out_the_notes_added_for_the_model(tmp_path: Path) -> None:
    path = tmp_path / "planned.jsonl"
    writer = TranscriptWriter(path, session_id="planned", cwd=str(tmp_path))
    note = TextBlock("<system-reminder>\nPlan mode is on.\n</system-reminder>")
    writer.sync((UserMessage((TextBlock("fix the parser"), note)),))
    writer.close()
    assert [s.first_prompt for s in summaries(tmp_path, cwd=tmp_path)] == ["fix the parser"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"STAYER_CONFIG_DIR": "~nosuchuser-stayer/x"}, "no such home directory"),
        ({"STAYER_CONFIG_DIR": "/etc/passwd"}, "cannot keep sessions in /etc/passwd/projects/"),
    ],
)
def test_a_config_folder_that_cannot_hold_sessions_is_one_line(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    opts = QueryOptions(cwd=tmp_path, provider=ScriptedProvider([]), env=env)
    with pytest.raises(stayer.ConfigError, match=message) as refused:
        Session(opts)
    assert "\n" not in str(refused.value)


def test_only_names_that_say_secret_are_redacted_and_thinking_is_left_whole() -> None:
    scrub = Scrubber.of(
        {
            "GIT_AUTHOR_NAME": "Alice Smith",
            "PWD": "/home/alice/project",
            "OLDPWD": "/home/alice/elsewhere",
            "MYSQL_PWD": "hunter2-hunter2",
            "DATABASE_URL": "postgres://app:s3cr3t-pw@db:5432/app",
            "OPENAI_API_KEY": "sk-abcdefgh12345",
        }
    )
    record = {
        "text": "Alice Smith used hunter2-hunter2 and s3cr3t-pw with sk-abcdefgh12345 in "
        "/home/alice/project",
        "content": [{"type": "thinking", "thinking": "sk-abcdefgh12345", "signature": "sig"}],
    }
    assert scrub.record(record) == {
        "text": "Alice Smith used [MYSQL_PWD redacted] and [DATABASE_URL password redacted] "
        "with [OPENAI_API_KEY redacted] in /home/alice/project",
        "content": [{"type": "thinking", "thinking": "sk-abcdefgh12345", "signature": "sig"}],
    }


async def test_a_saved_prompt_is_private_and_not_kept_without_persistence(tmp_path: Path) -> None:
    from msgspec.structs import replace

    huge = "line of a pasted log\n" * 60_000
    for persist in (True, False):
        model = ScriptedProvider([text("read")])
        async with Session(options(tmp_path, model, persist_session=persist)) as session:
            folder = session.setup.params.compaction.saved_prompts
            params = replace(session.setup.params, context_window=200_000)
            session.setup = replace(session.setup, params=params)
            await submit(session, huge)
        if persist:
            assert folder is not None
            (saved,) = folder.iterdir()
            assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
        else:
            assert folder is None
            assert model.requests[0].messages[0].content[0] == TextBlock(huge)


async def test_leaving_at_the_first_event_keeps_the_conversation_it_began_with(
    tmp_path: Path,
) -> None:
    earlier = (UserMessage.of_text("before"), AssistantMessage((TextBlock("noted"),), id="m0"))
    model = ScriptedProvider([text("after")])
    async with Session(options(tmp_path, model, history=earlier)) as session:
        async with aclosing(session.submit("first")) as events:
            async for _event in events:
                break  # left at SessionStarted, before the model was asked anything
        await submit(session, "again")
    sent = model.requests[0].messages
    assert sent[:2] == earlier  # the conversation it began with is still there
