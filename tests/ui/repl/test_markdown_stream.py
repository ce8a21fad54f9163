"""Streamed markdown is cut into blocks, each handed back once, as soon as it is complete."""

from __future__ import annotations

from stayer.ui.repl.markdown_stream import MarkdownStream

ANSWER = (
    "# Plan\n"
    "First we read the file,\n"
    "then we change it.\n"
    "\n"
    "- one\n"
    "- two\n"
    "  still two\n"
    "\n"
    "- three\n"
    "\n"
    "```python\n"
    "x = 1\n"
    "\n"
    "y = 2\n"
    "```\n"
    "| a | b |\n"
    "|---|---|\n"
    "| 1 | 2 |\n"
    "\n"
    "> quoted\n"
    "\n"
    "Title\n"
    "=====\n"
    "---\n"
    "The end"
)

BLOCKS = [
    "# Plan",
    "First we read the file,\nthen we change it.",
    "- one\n- two\n  still two\n\n- three",
    "```python\nx = 1\n\ny = 2\n```",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "> quoted",
    "Title\n=====",
    "---",
    "The end",
]


def _streamed(text: str, piece: int) -> tuple[list[str], MarkdownStream]:
    stream = MarkdownStream()
    done: list[str] = []
    for start in range(0, len(text), piece):
        done += stream.feed(text[start : start + piece])
    return done, stream


def test_blocks_are_the_same_however_the_text_is_cut() -> None:
    for piece in (1, 2, 3, 7, len(ANSWER)):
        done, stream = _streamed(ANSWER, piece)
        assert done + stream.close() == BLOCKS, piece


def test_the_growing_block_and_the_line_being_written_are_pending() -> None:
    stream = MarkdownStream()
    assert stream.feed("Hello wor") == []
    assert stream.pending() == "Hello wor"
    assert stream.feed("ld.\nAnd mo") == []
    assert stream.pending() == "Hello world.\nAnd mo"
    assert stream.kind == "paragraph"
    assert stream.feed("re.\n\nNext") == ["Hello world.\nAnd more."]
    assert stream.pending() == "Next"


def test_a_code_block_stays_whole_until_its_fence_closes() -> None:
    stream = MarkdownStream()
    assert stream.feed("```\na\n\n\nb\n``") == []
    assert stream.kind == "code"
    assert stream.feed("`\n") == ["```\na\n\n\nb\n```"]


def test_a_longer_fence_is_not_closed_by_a_shorter_one() -> None:
    stream = MarkdownStream()
    assert stream.feed("````\n```\ninside\n```\n") == []
    assert stream.feed("````\n") == ["````\n```\ninside\n```\n````"]


def test_a_heading_is_complete_at_the_end_of_its_line() -> None:
    stream = MarkdownStream()
    assert stream.feed("## Step one") == []
    assert stream.feed("\nThen") == ["## Step one"]


def test_a_block_of_another_kind_ends_the_one_before_it() -> None:
    stream = MarkdownStream()
    assert stream.feed("Some words\n- an item\n") == ["Some words"]
    assert stream.feed("| a |\n") == ["- an item"]


def test_only_blanks_leave_no_block() -> None:
    stream = MarkdownStream()
    assert stream.feed("\n\n\n") == []
    assert stream.close() == []


def test_what_is_shown_of_the_pending_block_closes_open_emphasis() -> None:
    stream = MarkdownStream()
    stream.feed("Some **bold and `co")
    assert stream.pending() == "Some **bold and `co"
    assert stream.pending_shown() == "Some **bold and `co`**"
    code = MarkdownStream()
    code.feed("```\nx = `a")
    assert code.pending_shown() == "```\nx = `a"


def test_a_tall_code_block_is_cut_into_blocks_that_render_alone() -> None:
    stream = MarkdownStream()
    stream.feed("```py\na\nb\nc\nd\ne\n")
    assert stream.split(2) == "```py\na\nb\nc\n```"
    assert stream.feed("```\n") == ["```py\nd\ne\n```"]


def test_a_list_is_cut_only_before_an_item() -> None:
    stream = MarkdownStream()
    stream.feed("- a\n- b\n  more b\n  and more\n- c\n")
    assert stream.split(2) == "- a"
    assert stream.close() == ["- b\n  more b\n  and more\n- c"]
    table = MarkdownStream()
    table.feed("| a |\n|---|\n| 1 |\n| 2 |\n")
    assert table.split(1) is None


def test_a_paragraph_is_cut_where_the_caller_says() -> None:
    stream = MarkdownStream()
    stream.feed("one two three fo")
    assert stream.in_paragraph
    assert stream.split_at(len("one two")) == "one two"
    assert stream.pending() == "three fo"
    assert stream.feed("ur.\n\n") == ["three four."]
    heading = MarkdownStream()
    heading.feed("# Head")
    assert not heading.in_paragraph and heading.split_at(2) is None
