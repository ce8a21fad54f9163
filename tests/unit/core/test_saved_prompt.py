"""A prompt too large for the window: saved whole, sent as a head and a reference."""

from __future__ import annotations

from pathlib import Path

from stayer.context.saved_prompt import plain_prompt, save_prompt
from stayer.messages import ImageBlock, TextBlock, ToolResultBlock, UserMessage


def test_the_text_is_saved_whole_and_the_head_ends_at_a_line(tmp_path: Path) -> None:
    text = "".join(f"row {n:05d}\n" for n in range(10_000))  # 100,000 characters
    image = ImageBlock("image/png", "aGk=")
    saved = save_prompt(UserMessage((TextBlock(text), image)), tmp_path, head_tokens=1_000)
    assert saved is not None
    message, path = saved
    assert path.parent == tmp_path and path.read_text() == text
    first, second = message.content
    assert second == image  # what is not text goes as it was
    assert isinstance(first, TextBlock)
    note, head = first.text.split("]\n\n", 1)
    assert f"saved unchanged at {path}" in note and "10,001 lines" in note
    assert text.startswith(head + "\n") and len(head) <= 4_000
    assert f"from line {head.count(chr(10)) + 2:,}," in note
    again = save_prompt(UserMessage((TextBlock(text),)), tmp_path, head_tokens=1_000)
    assert again is not None and again[1] == path  # the same text is saved once


def test_a_prompt_that_fits_or_cannot_be_saved_is_left_alone(tmp_path: Path) -> None:
    assert save_prompt(UserMessage.of_text("short"), tmp_path, head_tokens=100) is None
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    big = UserMessage.of_text("z" * 10_000)
    assert save_prompt(big, blocked / "prompts", head_tokens=100) is None


def test_only_the_users_words_are_a_prompt() -> None:
    words = UserMessage.of_text("hi")
    assert plain_prompt(words) is words
    results = UserMessage((ToolResultBlock("toolu_1", (TextBlock("out"),)),))
    assert plain_prompt(results) is None
