"""The REPL's view: what an event sequence prints once, and what stays live to be redrawn."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Sequence
from pathlib import Path

from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Event,
    Finished,
    SessionStarted,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolStatus,
)
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
)
from stayer.ui.repl.ansi import plain
from stayer.ui.repl.view import View


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(width: int = 80, *, color: bool = False, live_rows: int = 16) -> tuple[View, Clock]:
    clock = Clock()
    return View(width=lambda: width, color=color, now=clock, live_rows=live_rows), clock


def lines(items: Sequence[str]) -> list[str]:
    """What the committed items show, line by line, without colour."""
    return plain("".join(items)).splitlines()


def feed_all(view: View, events: Sequence[Event]) -> list[str]:
    out: list[str] = []
    for event in events:
        out += view.feed(event)
    return out


def text_events(answer: str, piece: int = 3) -> list[Event]:
    deltas: list[Event] = [
        TextDelta(0, answer[start : start + piece]) for start in range(0, len(answer), piece)
    ]
    return [BlockStarted(0, "text"), *deltas, BlockCompleted(0, TextBlock(answer))]


def result(tool_use_id: str, text: str, name: str, status: ToolStatus = "completed") -> Event:
    block = ToolResultBlock(tool_use_id, (TextBlock(text),), is_error=status != "completed")
    return ToolCallFinished(tool_use_id, name, status, block, 12.0)


def finished(terminal: Terminal = Terminal.COMPLETED, message: str = "") -> Finished:
    usage = Usage(input_tokens=1200, output_tokens=34)
    return Finished(terminal, message, 2, usage, 0.01234, "", None, 4200.0, 3000.0)


# --- markdown while streaming ---------------------------------------------------------------


def test_a_token_is_live_at_once_even_mid_line() -> None:
    view, _ = make()
    assert view.feed(BlockStarted(0, "text")) == []
    assert view.feed(TextDelta(0, "Hel")) == []
    assert view.live() == "Hel"
    assert view.feed(TextDelta(0, "lo **wor")) == []
    assert view.live() == "Hello wor"  # the unclosed bold is drawn as it will be, not as **


def test_a_finished_paragraph_is_printed_once_and_leaves_the_live_tail() -> None:
    view, _ = make()
    view.feed(BlockStarted(0, "text"))
    view.feed(TextDelta(0, "First *paragraph*.\n"))
    assert view.live() == "First paragraph."
    out = view.feed(TextDelta(0, "\nSecond"))
    assert lines(out) == ["First paragraph."]
    assert view.live() == "\nSecond"  # a blank line between it and what is printed
    assert lines(view.feed(BlockCompleted(0, TextBlock("")))) == ["", "Second"]
    assert view.live() == ""


def test_markdown_is_rendered_with_colour_when_colour_is_on() -> None:
    view, _ = make(color=True)
    out = feed_all(view, text_events("# Title\n\nSome **bold** words.\n"))
    joined = "".join(out)
    assert "\x1b[1m" in joined  # bold
    assert lines(out) == ["Title", "", "Some bold words."]


ANSWER = textwrap.dedent(
    """\
    # Steps

    We read the configuration, check every field against the schema and report each
    problem on a line of its own, so the person can fix them all at once.

    1. Parse the file
    2. Validate it
       against the schema
    3. Report

    ```python
    def check(config: dict[str, object]) -> list[str]:
        problems = []
        for key, value in config.items():
            if value is None:
                problems.append(f"{key} is missing")
        return problems
    ```

    | field | type |
    |-------|------|
    | name  | str  |
    | port  | int  |

    That is all.
    """
)


def test_streamed_output_is_what_the_whole_answer_renders_to_every_line_once() -> None:
    for width in (40, 120):
        whole, _ = make(width)
        expected = lines(whole.replay([AssistantMessage((TextBlock(ANSWER),))]))
        for piece in (1, 5, 50):
            view, _ = make(width)
            assert lines(feed_all(view, text_events(ANSWER, piece))) == expected, (width, piece)


def test_a_tall_block_prints_its_head_early_and_only_the_rest_at_the_end() -> None:
    code = "```\n" + "".join(f"row {n}\n" for n in range(1, 61)) + "```\n"
    view, _ = make(40, live_rows=16)
    out: list[str] = []
    view.feed(BlockStarted(0, "text"))
    for line in code.splitlines(keepends=True):
        out += view.feed(TextDelta(0, line))
        assert len(view.live().splitlines()) <= 16
    assert len(lines(out)) > 40  # most of it was printed while it streamed
    out += view.feed(BlockCompleted(0, TextBlock(code)))
    assert [line.strip() for line in lines(out)] == [f"row {n}" for n in range(1, 61)]
    assert view.live() == ""


def test_thinking_is_dim_and_collapsed() -> None:
    view, clock = make(color=True)
    view.feed(BlockStarted(0, "thinking"))
    view.feed(ThinkingDelta(0, "First I look at the file.\nThen I decide"))
    assert plain(view.live()).splitlines() == ["✻ Thinking…", "  Then I decide"]
    assert "\x1b[2" in view.live()
    clock.now += 7.4
    out = view.feed(BlockCompleted(0, ThinkingBlock("...", "sig")))
    assert lines(out) == ["✻ Thought for 7s"]
    assert "\x1b[2" in out[0]
    assert view.live() == ""


# --- tools ----------------------------------------------------------------------------------


def test_a_running_call_shows_a_spinner_its_time_and_latest_output() -> None:
    view, clock = make()
    assert view.feed(ToolCallStarted("t1", "Bash", {"command": "make test"})) == []
    first = view.live()
    assert first.endswith("Bash(make test) · 0s")
    clock.now += 2.3
    view.feed(ToolCallProgress("t1", "compiling\nlinking\n"))
    shown = view.live().splitlines()
    assert shown[0].endswith("Bash(make test) · 2s")
    assert shown[0][0] != first[0]  # the spinner moved on
    assert shown[1:] == ["  ⎿  compiling", "     linking"]


def test_a_finished_call_prints_its_line_and_a_short_result() -> None:
    view, _ = make()
    view.feed(ToolCallStarted("t1", "Bash", {"command": "ls"}))
    out = view.feed(result("t1", "a\nb\nc\nd\ne\n", "Bash"))
    assert lines(out) == [
        "● Bash(ls)",
        "  ⎿  a",
        "     b",
        "     c",
        "     … +2 lines (ctrl+o to expand)",
    ]
    assert view.live() == ""
    assert lines(view.expand_last()) == [
        "",
        "● Bash(ls)",
        "  ⎿  a",
        "     b",
        "     c",
        "     d",
        "     e",
    ]


def test_a_failed_call_is_red() -> None:
    view, _ = make(color=True)
    view.feed(ToolCallStarted("t1", "Read", {"file_path": "/nope"}))
    out = view.feed(result("t1", "Error: no such file", "Read", "failed"))
    assert "\x1b[31mError: no such file" in out[0]


def test_calls_running_at_once_are_all_live_and_print_in_the_order_they_finish() -> None:
    view, _ = make()
    view.feed(ToolCallStarted("a", "Bash", {"command": "sleep 2"}))
    view.feed(ToolCallStarted("b", "Glob", {"pattern": "*.py"}))
    live = view.live().splitlines()
    assert [line[2:] for line in live] == ["Bash(sleep 2) · 0s", "Glob(*.py) · 0s"]
    out = view.feed(result("b", "x.py", "Glob"))
    assert lines(out)[0] == "● Glob(*.py)"
    assert view.live().endswith("Bash(sleep 2) · 0s")
    out = view.feed(result("a", "", "Bash"))
    assert lines(out)[1:3] == ["● Bash(sleep 2)", "  ⎿  (no output)"]


def test_an_edit_shows_the_diff_against_the_file_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("a = 1\nb = 2\n")
    view, _ = make(color=True)
    view.feed(SessionStarted("s", "m", "p", (), str(tmp_path), "default"))
    view.feed(
        ToolCallStarted(
            "e", "Edit", {"file_path": str(target), "old_string": "b = 2", "new_string": "b = 3"}
        )
    )
    target.write_text("a = 1\nb = 3\n")  # the tool ran
    out = view.feed(result("e", "Edited", "Edit"))
    shown = lines(out)
    assert shown[1:] == [
        "  ⎿  Updated app.py with 1 addition and 1 removal",
        "         1   a = 1",
        "         2 - b = 2",
        "         2 + b = 3",
    ]
    diff_rows = out[0].splitlines()
    assert "\x1b[31m" in diff_rows[3] and "\x1b[32m" in diff_rows[4]


def test_a_changed_todo_list_is_shown_instead_of_the_result() -> None:
    view, _ = make()
    todos: list[JSON] = [{"content": "fix", "status": "in_progress"}]
    view.feed(ToolCallStarted("t", "TodoWrite", {"todos": todos}))
    done = ToolCallFinished(
        "t",
        "TodoWrite",
        "completed",
        ToolResultBlock("t", (TextBlock("saved"),)),
        1.0,
        data={"oldTodos": [], "newTodos": todos},
    )
    assert lines(view.feed(done)) == ["● TodoWrite(1 task)", "  ⎿  ◐ fix"]


def test_an_interrupted_call_is_printed_once() -> None:
    view, _ = make()
    view.feed(ToolCallStarted("t", "Bash", {"command": "sleep 100"}))
    assert lines(view.flush()) == ["● Bash(sleep 100)", "  ⎿  Interrupted"]
    assert view.live() == ""
    assert view.feed(result("t", "Error: interrupted", "Bash", "failed")) == []


# --- notices and the end of a run -------------------------------------------------------------


def test_the_end_of_a_run_is_one_dim_line() -> None:
    view, _ = make(120, color=True)
    out = view.feed(finished())
    assert lines(out) == ["2 turns · $0.0123 · 1,234 tokens · 4.2s"]
    assert out[0].startswith("\x1b[2m")
    stopped = lines(view.feed(finished(Terminal.ABORTED_STREAMING, "interrupted by the user")))
    assert stopped[-1] == (
        "aborted_streaming (interrupted by the user) · 2 turns · $0.0123 · 1,234 tokens · 4.2s"
    )


def test_a_run_that_ends_prints_what_was_live() -> None:
    view, _ = make()
    view.feed(BlockStarted(0, "text"))
    view.feed(TextDelta(0, "Half a sent"))
    assert lines(view.feed(finished())) == [
        "Half a sent",
        "",
        "2 turns · $0.0123 · 1,234 tokens · 4.2s",
    ]
    assert view.live() == ""


# --- the rest of the contract --------------------------------------------------------------


def test_the_prompt_is_echoed_with_a_marker() -> None:
    view, _ = make(color=True)
    out = view.user_prompt("fix the tests\nplease")
    assert lines(out) == ["> fix the tests", "  please"]
    assert "\x1b[1m" in out[0]


def test_notices_are_coloured_by_level() -> None:
    view, _ = make(color=True)
    assert "\x1b[31m" in view.notice("broken", level="error")[0]
    assert "\x1b[33m" in view.notice("careful", level="warning")[0]
    assert lines(view.notice("fine")) == ["", "fine"]


def test_a_resumed_conversation_is_shown_as_it_was_live() -> None:
    view, _ = make()
    history: list[Message] = [
        UserMessage.of_text("list the files"),
        AssistantMessage(
            (
                TextBlock("Let me **look**."),
                ToolUseBlock("t1", "Bash", {"command": "ls"}),
            )
        ),
        UserMessage((ToolResultBlock("t1", (TextBlock("a.py\nb.py"),)),)),
        AssistantMessage((TextBlock("Two files:\n\n- a.py\n- b.py"),)),
    ]
    assert lines(view.replay(history)) == [
        "> list the files",
        "",
        "Let me look.",
        "",
        "● Bash(ls)",
        "  ⎿  a.py",
        "     b.py",
        "",
        "Two files:",
        "",
        " • a.py",
        " • b.py",
    ]


def test_a_permission_dialog_shows_the_command_in_full() -> None:
    view, _ = make()
    shown = view.describe_call(
        "Bash", {"command": "rm -rf build\nmake all", "description": "Rebuild"}
    )
    assert plain(shown).splitlines() == [
        "● Bash(rm -rf build …)",
        "  rm -rf build",
        "  make all",
        "  description: Rebuild",
    ]


def test_a_permission_dialog_shows_the_diff_an_edit_would_make(tmp_path: Path) -> None:
    read: list[Path] = []

    def reader(path: Path) -> str | None:
        read.append(path)
        return "one\ntwo\n"

    view = View(width=lambda: 80, color=False, read=reader, cwd=str(tmp_path))
    edit: dict[str, JSON] = {"file_path": "f.txt", "old_string": "two", "new_string": "2"}
    shown = plain(view.describe_call("Edit", edit)).splitlines()
    assert shown == ["● Edit(f.txt)", "    1   one", "    2 - two", "    2 + 2"]
    assert read == [tmp_path / "f.txt"]


def test_a_permission_dialog_for_an_unreadable_file_shows_the_new_content(tmp_path: Path) -> None:
    view, _ = make()
    write: dict[str, JSON] = {"file_path": str(tmp_path / "missing" / "x"), "content": "hello\n"}
    assert plain(view.describe_call("Write", write)).splitlines()[1:] == ["    1 + hello"]


def test_feed_is_one_match_over_the_events_ending_in_assert_never() -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(View.feed)))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    statements = [node for node in function.body if not isinstance(node, ast.Expr)]
    assert len(statements) == 1 and isinstance(statements[0], ast.Match)
    last = statements[0].cases[-1].body[0]
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    assert isinstance(last.value.func, ast.Name) and last.value.func.id == "assert_never"


def test_a_long_one_line_paragraph_prints_its_head_early_wrapped_as_the_whole_would_be() -> None:
    words = " ".join(f"word{n}" for n in range(400))
    paragraph = f"{words} with **bold words** and a [link](https://example.com) at the end."
    for width in (40, 120):
        whole, _ = make(width)
        expected = lines(whole.replay([AssistantMessage((TextBlock(paragraph),))]))
        view, _ = make(width, live_rows=16)
        out: list[str] = []
        view.feed(BlockStarted(0, "text"))
        printed_early = 0
        for start in range(0, len(paragraph), 7):
            out += view.feed(TextDelta(0, paragraph[start : start + 7]))
            assert len(view.live().splitlines()) <= 20  # about the budget, never the whole
            printed_early = len(lines(out))
        assert printed_early > len(expected) - 20
        out += view.feed(BlockCompleted(0, TextBlock(paragraph)))
        assert lines(out) == expected, width


def test_a_huge_pasted_prompt_is_echoed_cut_short() -> None:
    view, _ = make(40)
    pasted = "\n".join(f"line {n}" for n in range(5000))
    shown = lines(view.user_prompt(pasted))
    assert shown[0] == "> line 0" and len(shown) == 41
    assert shown[-1] == "  … +4960 lines"
    one_line = lines(view.user_prompt("x" * 100_000))
    assert len(one_line) == 42 and one_line[-1] == "  … (cut here)"  # a gap, 40 rows, the cut
