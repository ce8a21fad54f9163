"""Large pastes: collapsed to a placeholder in the input, sent whole and exact; short ones typed
in; terminal line breaks made LF; a placeholder the person changed is plain text."""

from __future__ import annotations

import asyncio
import random

from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from stayer.ui.repl.paste import MAX_CHARS, Pastes, is_large, line_count, paste_bindings

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def awkward_text(size: int) -> str:
    """About `size` characters of tabs, CRLF, lone CR, unicode, trailing spaces and lines that
    look like placeholders."""
    pieces = [
        "plain line\n",
        "\tindented\twith tabs\r\n",
        "unicode é 漢字 🙂 ∑\n",
        "[pasted 3 lines]\n",
        "[pasted #2 40 lines]\n",
        "trailing spaces   \n",
        "lone CR\r",
        "\\backslash \\1 \\g<0> $1\n",
        "\n",
    ]
    chooser = random.Random(17)
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(chooser.choice(pieces))
    return "".join(out)


def test_a_100_kb_paste_round_trips_byte_for_byte() -> None:
    pastes = Pastes()
    big = awkward_text(100_000)
    placeholder = pastes.add(big)
    typed = f"please look at this:\n{placeholder}\nthanks"
    sent = pastes.expand(typed)
    assert sent == f"please look at this:\n{big}\nthanks"
    assert sent.encode() == f"please look at this:\n{big}\nthanks".encode()


def test_placeholders_name_the_lines_and_are_numbered_after_the_first() -> None:
    pastes = Pastes()
    assert pastes.add("a\nb\nc\nd\n") == "[pasted 4 lines]"
    assert pastes.add("x" * 900) == "[pasted #2 1 line]"
    assert pastes.add("1\n2\n3\n4\n5") == "[pasted #3 5 lines]"


def test_several_pastes_expand_each_to_its_own_text_in_one_pass() -> None:
    pastes = Pastes()
    first = "one\n[pasted #2 4 lines]\nthree\nfour"  # looks like the second's placeholder
    second = "w\nx\ny\nz"
    p1, p2 = pastes.add(first), pastes.add(second)
    assert p2 == "[pasted #2 4 lines]"
    assert pastes.expand(f"{p2} and {p1}") == f"{second} and {first}"


def test_an_edited_or_deleted_placeholder_is_plain_text() -> None:
    pastes = Pastes()
    placeholder = pastes.add("a\nb\nc\nd")
    edited = placeholder.replace("4", "5")
    assert pastes.expand(f"{edited} and more") == f"{edited} and more"
    assert pastes.expand("nothing left") == "nothing left"


def test_a_placeholder_already_typed_is_not_reused() -> None:
    pastes = Pastes()
    typed = "I typed [pasted 4 lines] myself"
    placeholder = pastes.add("a\nb\nc\nd", current=typed)
    assert placeholder != "[pasted 4 lines]"
    assert pastes.expand(f"{typed} {placeholder}") == f"{typed} a\nb\nc\nd"


def test_clearing_forgets_the_pastes_and_restarts_the_numbers() -> None:
    pastes = Pastes()
    placeholder = pastes.add("a\nb\nc\nd")
    pastes.add("e\nf\ng\nh")
    pastes.clear()
    assert len(pastes) == 0
    assert pastes.expand(placeholder) == placeholder
    assert pastes.add("a\nb\nc\nd") == "[pasted 4 lines]"


def test_the_threshold_is_more_than_three_lines_or_800_characters() -> None:
    assert not is_large("a\nb\nc")
    assert not is_large("a\nb\nc\n")  # a final line break starts no fourth line
    assert is_large("a\nb\nc\nd")
    assert not is_large("x" * MAX_CHARS)
    assert is_large("x" * (MAX_CHARS + 1))
    assert [line_count(text) for text in ("", "a", "a\n", "a\nb", "\n\n")] == [0, 1, 1, 2, 2]


def submitted(data: str, pastes: Pastes, *, typed_before: str = "") -> str:
    """What a real prompt session reads when `data` is pasted (bracketed) and Enter pressed."""

    async def read() -> str:
        with create_pipe_input() as pipe:
            session: PromptSession[str] = PromptSession(
                input=pipe,
                output=DummyOutput(),
                key_bindings=paste_bindings(pastes),  # the session puts these after its own
            )
            # from a thread: the pipe holds 64 KB, the rest waits for the session to read
            text = typed_before + PASTE_START + data + PASTE_END + "\r"
            sending = asyncio.get_running_loop().run_in_executor(None, pipe.send_text, text)
            result = await session.prompt_async()
            await sending
            return result

    return asyncio.run(read())


def test_a_large_bracketed_paste_enters_the_input_as_its_placeholder() -> None:
    pastes = Pastes()
    big = awkward_text(100_000).replace("\r", "")  # what the terminal sends, LF only
    typed = submitted(big.replace("\n", "\r"), pastes, typed_before="see ")  # sent as CR
    assert typed == f"see [pasted {line_count(big)} lines]"
    assert pastes.expand(typed) == f"see {big}"


def test_a_short_paste_is_typed_in_with_its_line_breaks_made_lf() -> None:
    pastes = Pastes()
    assert submitted("one\r\ntwo\rthree", pastes) == "one\ntwo\nthree"
    assert len(pastes) == 0
