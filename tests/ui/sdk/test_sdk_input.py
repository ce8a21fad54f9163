"""Reading the SDK's standard input: lines as they come from the descriptor, however they are
cut, and what each line asks for."""

from __future__ import annotations

import base64
import json
import os
import threading

from stayer.messages import ImageBlock, TextBlock
from stayer.ui.sdk.frames import BadInput, UserInput, read_frame
from stayer.ui.sdk.stdin_lines import CHUNK, StdinLines, TooLong


async def test_lines_come_whole_however_the_reads_cut_them() -> None:
    reading, writing = os.pipe()
    long = b"x" * (3 * CHUNK + 5)  # spans several reads
    lines = StdinLines(reading)

    def feed() -> None:
        for piece in (b'{"a":', b"1}\n" + long[:CHUNK], long[CHUNK:] + b"\n\nlast"):
            os.write(writing, piece)
        os.close(writing)

    threading.Thread(target=feed).start()
    got = []
    while (line := await lines.next()) is not None:
        got.append(line)
    os.close(reading)

    assert got == [b'{"a":1}', long, b"", b"last"]  # the last one counts without its newline
    assert await lines.next() is None


async def test_a_line_over_the_limit_is_dropped_up_to_its_newline() -> None:
    reading, writing = os.pipe()
    limit = 2 * CHUNK
    lines = StdinLines(reading, limit=limit)
    giant = b'{"type": "user", ' + b"x" * (5 * CHUNK)

    def feed() -> None:
        for piece in (b"first\n" + giant[:CHUNK], giant[CHUNK:], b"\nnext\n", b"y" * limit):
            os.write(writing, piece)
        os.close(writing)

    threading.Thread(target=feed).start()
    got = []
    while (line := await lines.next()) is not None:
        got.append(line)
    os.close(reading)

    # a user line over the limit is owed a result; one just at the limit is whole
    assert got[0] == b"first" and got[2:] == [b"next", b"y" * limit]
    assert isinstance(got[1], TooLong) and got[1].bad_input().user
    assert f"longer than {limit} bytes" in got[1].error


def test_a_reply_over_the_limit_names_the_request_it_answered() -> None:
    reply = b'{"type": "control_response", "response": {"subtype": "success", '
    assert TooLong(1, reply + b'"request_id": "stayer_7", "response": {').answered() == "stayer_7"
    assert not TooLong(1, reply).bad_input().user
    assert TooLong(1, b'{"type": "user", "request_id": "stayer_7"').answered() is None


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(8)).decode()


def _image(media_type: str, data: str) -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _user(content: object, **more: object) -> bytes:
    return json.dumps(
        {"type": "user", "message": {"role": "user", "content": content}, **more}
    ).encode()


def test_user_messages_become_prompts() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert read_frame(_user("hi", uuid="u-1")) == UserInput("hi", "u-1")
    assert read_frame(_user([{"type": "text", "text": "see"}, image])) == UserInput(
        (TextBlock("see"), ImageBlock("image/png", PNG)), None
    )


def test_control_frames_are_the_channels_and_blank_lines_nothing() -> None:
    frame = {"type": "control_request", "request_id": "r", "request": {"subtype": "interrupt"}}
    assert read_frame(json.dumps(frame).encode()) == frame
    assert read_frame(b"   ") is None


def test_what_cannot_be_used_says_why_and_whether_a_result_is_owed() -> None:
    url_image = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    cases = {
        b"\xff\xfe": ("not UTF-8", False),
        b"{nope": ("not JSON", False),
        b"[1, 2]": ("not a JSON object", False),
        b'{"type": "keep_going"}': ("unknown input message type 'keep_going'", False),
        _user("   "): ("empty", True),
        _user([]): ("non-empty list", True),
        _user([{"type": "text", "text": " "}]): ("empty", True),
        _user([{"type": "tool_result", "tool_use_id": "t"}]): ("'tool_result'", True),
        _user([url_image]): ("base64 source", True),
        _user([_image("text/html", PNG)]): ("'text/html' is not taken", True),
        _user([_image("image/png", "!!notbase64")]): ("not base64", True),
        _user([_image("image/png", "AA=")]): ("not base64", True),
        _user([_image("image/jpeg", PNG)]): ("says image/jpeg but its data is image/png", True),
        _user([{"type": "text"}]): ("malformed", True),
        json.dumps({"type": "user", "message": "hi"}).encode(): ('"role": "user"', True),
    }
    for line, (words, owed) in cases.items():
        found = read_frame(line)
        assert isinstance(found, BadInput), line
        assert words in found.error and found.user is owed, (line, found)
