"""What every compaction keeps and where it stops (SPEC §3.1): pinned notes word for word, the
files read most recently as they are now, a prompt too large for the window saved whole, the
summariser told what it could not see, and a context that keeps refilling ended by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec.structs import replace
from pydantic import BaseModel, ConfigDict

from stayer.context.compact import PINS_INTRO, SUMMARY_INTRO
from stayer.context.saved_prompt import SAVED_NOTE
from stayer.events import Compacted, Continue, Continuing, Terminal
from stayer.loop.compaction import threshold
from stayer.loop.reattach import REATTACHED_INTRO
from stayer.loop.state import CompactPolicy, LoopParams, ToolCall
from stayer.messages import TextBlock, ToolUseBlock, Usage, UserMessage
from stayer.permissions import Decision
from stayer.providers.scripted import Fault, Reply, ScriptedProvider, text
from stayer.tools.base import Tool, ToolContext, ToolOutput
from stayer.tools.builtin.pin import PinTool
from stayer.tools.builtin.read import ReadTool
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo
from tests.loop.test_compaction import TOO_LONG, big_call, compactions


class ChangeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    text: str | None = None


class Change(Tool[ChangeInput]):
    """Rewrites a file, or deletes it when given no text: the world moving under the model."""

    name = "Change"
    description = "Rewrite or delete a file."
    input_model = ChangeInput

    async def call(self, tool_input: ChangeInput, ctx: ToolContext) -> ToolOutput:
        path = Path(tool_input.path)
        if tool_input.text is None:
            path.unlink()
        else:
            path.write_text(tool_input.text)
        return ToolOutput("changed")


def call(block_id: str, name: str, tool_input: dict[str, object], *, tokens: int = 100) -> Reply:
    block = ToolUseBlock(block_id, name, tool_input)
    return Reply((block,), usage=Usage(input_tokens=tokens, output_tokens=20))


def small_params(
    model: ScriptedProvider, tools: list[Tool[Any]], tmp_path: Path, **policy: Any
) -> LoopParams:
    params = make_params(model, tools, tmp_path)
    # A 40k window with 1k of output: the threshold is 40k - 1k - 13k = 26k tokens.
    compaction = CompactPolicy(**policy)
    return replace(params, compaction=compaction, context_window=40_000, max_tokens=1_000)


def intro_texts(model: ScriptedProvider, request: int) -> list[str]:
    first = model.requests[request].messages[0]
    assert isinstance(first, UserMessage)
    return [block.text for block in first.content if isinstance(block, TextBlock)]


def test_the_threshold_can_only_be_brought_forward() -> None:
    model = ScriptedProvider([])
    base = replace(make_params(model, [], Path(".")), context_window=200_000, max_tokens=32_000)
    assert threshold(base) == 167_000  # 200k - 20k reserve - 13k buffer, Claude Code's figure
    smaller = replace(base, compaction=CompactPolicy(window=100_000))
    assert threshold(smaller) == 67_000
    assert threshold(replace(base, compaction=CompactPolicy(window=500_000))) == 167_000
    assert threshold(replace(base, compaction=CompactPolicy(percent=50))) == 90_000
    assert threshold(replace(base, compaction=CompactPolicy(percent=99))) == 167_000


async def test_a_lower_threshold_compacts_a_history_the_usual_one_would_keep(
    tmp_path: Path,
) -> None:
    script = [big_call(1, input_tokens=15_000), text("NOTES"), text("done")]
    model = ScriptedProvider(script)
    events = await run(small_params(model, [Echo()], tmp_path, percent=30))  # 30% of 39k

    assert compactions(events) == [("auto", "summary")]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_the_models_pins_survive_every_compaction_word_for_word(tmp_path: Path) -> None:
    note = "Never run `make deploy`; the target is  production (two spaces kept)."
    model = ScriptedProvider(
        [
            call("toolu_pin", "Pin", {"note": note}),
            big_call(1, input_tokens=30_000),
            text("NOTES ONE"),
            big_call(2, input_tokens=30_000),
            text("NOTES TWO"),
            text("done"),
        ]
    )
    events = await run(small_params(model, [Echo(), PinTool()], tmp_path))

    assert compactions(events) == [("auto", "summary"), ("auto", "summary")]
    pinned = PINS_INTRO + f"- {note}"
    assert intro_texts(model, 3) == [SUMMARY_INTRO + "NOTES ONE", pinned]
    assert intro_texts(model, 5) == [SUMMARY_INTRO + "NOTES TWO", pinned]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_files_read_before_a_summary_are_shown_again_as_they_are_now(
    tmp_path: Path,
) -> None:
    notes, plan, gone = tmp_path / "notes.txt", tmp_path / "plan.txt", tmp_path / "gone.txt"
    notes.write_text("old line\n")
    plan.write_text("step 1\nstep 2\n")
    gone.write_text("soon deleted\n")
    model = ScriptedProvider(
        [
            call("toolu_r1", "Read", {"file_path": str(notes)}),
            call("toolu_r2", "Read", {"file_path": str(plan)}),
            call("toolu_r3", "Read", {"file_path": str(gone)}),
            # The files change after the model read them: what comes back is what they are now.
            call("toolu_c1", "Change", {"path": str(notes), "text": "new line\n"}),
            call("toolu_c2", "Change", {"path": str(gone)}),
            big_call(1, input_tokens=30_000),
            text("NOTES"),
            text("done"),
        ]
    )
    events = await run(small_params(model, [Echo(), ReadTool(), Change()], tmp_path))

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert compaction.reattached == (str(plan), str(notes))  # newest first; the gone file left out
    texts = intro_texts(model, 7)
    assert texts[0] == SUMMARY_INTRO + "NOTES"
    assert texts[1].startswith(REATTACHED_INTRO.format(path=plan))
    assert "     1\tstep 1\n     2\tstep 2" in texts[1]
    assert texts[2].startswith(REATTACHED_INTRO.format(path=notes))
    assert "     1\tnew line" in texts[2] and "old line" not in texts[2]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_shown_file_is_cut_to_its_share_and_says_where_to_go_on(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {n}\n" for n in range(1, 5_001)))
    model = ScriptedProvider(
        [
            call("toolu_r1", "Read", {"file_path": str(big), "limit": 3}),
            big_call(1, input_tokens=30_000),
            text("NOTES"),
            text("done"),
        ]
    )
    events = await run(
        small_params(model, [Echo(), ReadTool()], tmp_path, reattach_file_tokens=500)
    )

    shown = intro_texts(model, 3)[1]
    assert len(shown) <= 500 * 4 + 200
    last = shown.rsplit("\n", 2)
    assert last[-1].startswith("[... cut to save room; Read it again from line ")
    number = int(last[-2].split("\t")[0])
    assert last[-1] == f"[... cut to save room; Read it again from line {number + 1} for the rest.]"
    assert finished(events).terminal is Terminal.COMPLETED


async def test_the_summariser_says_when_the_oldest_messages_did_not_fit(tmp_path: Path) -> None:
    # The summariser's own budget is 40k - 16k - 13k = 11k tokens, about 44k characters: the
    # transcript of 30 rounds of 2k characters each does not fit, so the oldest are left out.
    rounds = [big_call(n) for n in range(30)]
    model = ScriptedProvider(
        [*rounds, big_call(30, input_tokens=30_000), text("NOTES"), text("ok")]
    )
    events = await run(small_params(model, [Echo()], tmp_path))

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert compaction.left_out > 0
    summary_text = model.requests[31].messages[0].content[0]
    assert isinstance(summary_text, TextBlock)
    assert f"[The {compaction.left_out} oldest messages were left out to fit.]" in summary_text.text


async def test_a_prompt_too_large_for_the_window_is_saved_and_sent_as_its_head(
    tmp_path: Path,
) -> None:
    lines = [f"log line {n}: " + "x" * 60 for n in range(3_000)]  # about 54k tokens
    prompt = "\n".join(lines)
    folder = tmp_path / "session" / "prompts"
    model = ScriptedProvider([text("I will read it in parts.")])
    events = await run(small_params(model, [Echo()], tmp_path, saved_prompts=folder), prompt)

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert (compaction.trigger, compaction.method) == ("auto", "saved_prompt")
    (saved,) = folder.iterdir()
    assert compaction.reattached == (str(saved),)
    assert saved.read_text() == prompt  # nothing the user gave is lost
    assert [r.purpose for r in model.requests] == ["main"]  # no summary of the request
    (sent,) = model.requests[0].messages
    sent_text = sent.content[0]
    assert isinstance(sent_text, TextBlock)
    note = SAVED_NOTE.format(chars=len(prompt), lines=3_000, path=saved, next=0)
    assert sent_text.text.startswith(note.split("(from line")[0])
    shown = sent_text.text.split("]\n\n", 1)[1]
    assert prompt.startswith(shown) and shown.endswith(lines[len(shown.splitlines()) - 1])
    assert f"from line {len(shown.splitlines()) + 1:,}," in sent_text.text
    assert compaction.tokens_after < threshold(small_params(model, [], tmp_path))
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_first_prompt_the_api_refuses_as_too_long_is_saved_and_sent_again(
    tmp_path: Path,
) -> None:
    prompt = "y" * 240_000  # about 60k tokens: past a quarter of the default 200k window
    folder = tmp_path / "prompts"
    model = ScriptedProvider([Fault(TOO_LONG), text("read it")])
    params = replace(
        make_params(model, [Echo()], tmp_path), compaction=CompactPolicy(saved_prompts=folder)
    )
    events = await run(params, prompt)

    assert compactions(events) == [("reactive", "saved_prompt")]
    assert Continuing(Continue.PROMPT_AS_FILE) in events
    (saved,) = folder.iterdir()
    assert saved.read_text() == prompt
    assert [r.purpose for r in model.requests] == ["main", "main"]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_context_that_refills_right_after_each_summary_ends_naming_the_output(
    tmp_path: Path,
) -> None:
    script: list[Reply | Fault] = []
    for n in range(3):
        script += [big_call(n, input_tokens=30_000), text(f"NOTES {n}")]
    script.append(call("toolu_huge", "Echo", {"text": "x" * 100}, tokens=30_000))
    model = ScriptedProvider(script)
    events = await run(small_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert compactions(events) == [("auto", "summary")] * 3
    assert end.terminal is Terminal.RAPID_REFILL
    assert "within 3 turns of each of the last 3 summaries" in end.message
    assert 'The largest tool output is Echo {"text": "' in end.message
    assert sum(1 for r in model.requests if r.purpose == "compact") == 3


async def test_a_refill_after_a_quiet_stretch_starts_the_count_again(tmp_path: Path) -> None:
    script: list[Reply | Fault] = [big_call(0, input_tokens=30_000), text("NOTES 0")]
    script += [call(f"toolu_q{n}", "Echo", {"text": "small"}) for n in range(4)]
    for n in range(1, 4):  # three summaries in a row after the quiet stretch: two refills
        script += [big_call(n, input_tokens=30_000), text(f"NOTES {n}")]
    script.append(text("done"))
    model = ScriptedProvider(script)
    events = await run(small_params(model, [Echo()], tmp_path))

    assert compactions(events) == [("auto", "summary")] * 4
    assert finished(events).terminal is Terminal.COMPLETED


async def test_files_the_kept_round_shows_are_not_shown_twice(tmp_path: Path) -> None:
    names = ["early", "b", "c", "d", "e"]
    for name in names:
        (tmp_path / f"{name}.txt").write_text(f"{name} text\n")
    reads = tuple(
        ToolUseBlock(f"toolu_{name}", "Read", {"file_path": str(tmp_path / f"{name}.txt")})
        for name in names[1:]
    )
    model = ScriptedProvider(
        [
            call("toolu_early", "Read", {"file_path": str(tmp_path / "early.txt")}),
            Reply(reads, usage=Usage(input_tokens=30_000, output_tokens=20)),
            text("NOTES"),
            text("done"),
        ]
    )
    events = await run(small_params(model, [ReadTool()], tmp_path))

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert compaction.reattached == (str(tmp_path / "early.txt"),)
    after = model.requests[3].messages
    assert len(after) == 3  # the summary, then the kept round with its four reads


async def test_a_read_that_was_denied_is_never_shown_again(tmp_path: Path) -> None:
    secret, notes = tmp_path / "secret.env", tmp_path / "notes.txt"
    secret.write_text("API_KEY=hunter2\n")
    notes.write_text("notes\n")

    async def no_secrets(call: ToolCall) -> Decision:
        path = getattr(call.input, "file_path", "")
        return Decision("deny", "no secrets") if path.endswith(".env") else Decision("allow")

    model = ScriptedProvider(
        [
            call("toolu_notes", "Read", {"file_path": str(notes)}),
            call("toolu_secret", "Read", {"file_path": str(secret)}),
            big_call(1, input_tokens=30_000),
            text("NOTES"),
            text("done"),
        ]
    )
    params = replace(small_params(model, [Echo(), ReadTool()], tmp_path), can_use_tool=no_secrets)
    events = await run(params)

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert compaction.reattached == (str(notes),)
    assert "hunter2" not in str(model.requests[4].messages)


async def test_a_file_the_rules_now_deny_is_not_read_again(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n")
    reads = 0

    async def once(call: ToolCall) -> Decision:
        nonlocal reads
        if call.tool.name != "Read":
            return Decision("allow")
        reads += 1
        return Decision("allow") if reads == 1 else Decision("deny", "not any more")

    model = ScriptedProvider(
        [
            call("toolu_notes", "Read", {"file_path": str(notes)}),
            big_call(1, input_tokens=30_000),
            text("NOTES"),
            text("done"),
        ]
    )
    params = replace(small_params(model, [Echo(), ReadTool()], tmp_path), can_use_tool=once)
    events = await run(params)

    (compaction,) = [e for e in events if isinstance(e, Compacted)]
    assert (compaction.reattached, reads) == ((), 2)


async def test_a_lower_threshold_does_not_make_a_prompt_that_fits_a_file(tmp_path: Path) -> None:
    prompt = "w" * 88_000  # about 22k tokens: well inside a 200k window
    folder = tmp_path / "prompts"
    model = ScriptedProvider([text("ok")])
    params = replace(
        make_params(model, [Echo()], tmp_path),
        compaction=CompactPolicy(percent=10, saved_prompts=folder),
    )
    events = await run(params, prompt)

    assert compactions(events) == []
    assert not folder.exists()
    assert model.requests[0].messages == (UserMessage.of_text(prompt),)
