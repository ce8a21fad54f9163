"""Cutting output once: what is kept, and a marker whose count is everything not shown."""

from __future__ import annotations

import re

from stayer.exec import Captured, cut_streams, truncate_middle
from stayer.exec.capture import HeadTail


def test_truncate_middle_keeps_short_text() -> None:
    assert truncate_middle("abc", 10) == ("abc", 0)


def test_truncate_middle_cuts_at_line_boundaries_within_the_limit() -> None:
    text = "".join(f"line {n}\n" for n in range(1000))
    cut, omitted = truncate_middle(text, 200)
    head, tail = cut.split(f"\n\n... [{omitted} characters omitted] ...\n\n")
    assert len(cut) <= 200
    assert text.startswith(head) and head.endswith("\n")
    assert text.endswith(tail) and tail.startswith("line ")
    assert len(head) + len(tail) + omitted == len(text)


def test_streams_that_fit_are_joined_by_a_newline() -> None:
    streams = [("stdout", Captured("out")), ("stderr", Captured("err"))]
    assert cut_streams(streams, 100) == ("out\nerr", 0)


def test_streams_already_cut_get_one_marker_counting_both_cuts() -> None:
    stdout = "".join(f"o{n:04d}\n" for n in range(2000))  # 12,000 characters
    stderr = "".join(f"e{n:04d}\n" for n in range(2000))
    kept = []
    for text in (stdout, stderr):
        collector = HeadTail(600)
        for start in range(0, len(text), 97):
            collector.add(text[start : start + 97])
        kept.append(collector.captured())
    assert [k.omitted for k in kept] == [len(stdout) - 600, len(stderr) - 600]

    text, omitted = cut_streams([("stdout", kept[0]), ("stderr", kept[1])], 400)
    match = re.fullmatch(r"(?s)(.*)\n\n\.\.\. \[(.*)\] \.\.\.\n\n(.*)", text)
    assert match is not None
    head, marker, tail = match.groups()
    assert len(text) <= 400
    assert stdout.startswith(head) and stderr.endswith(tail)
    from_stdout, from_stderr = len(stdout) - len(head), len(stderr) - len(tail)
    assert marker == (
        f"{from_stdout + from_stderr} characters omitted: {from_stdout} of stdout, "
        f"{from_stderr} of stderr"
    )
    assert omitted == from_stdout + from_stderr


def test_a_marker_names_only_the_streams_that_lost_text() -> None:
    stdout = "x" * 5000
    text, omitted = cut_streams([("stdout", Captured(stdout)), ("stderr", Captured("boom"))], 300)
    assert text.endswith("\nboom")
    assert f"[{omitted} characters of stdout omitted]" in text
    shown = len(text) - len(f"\n\n... [{omitted} characters of stdout omitted] ...\n\n\nboom")
    assert omitted == len(stdout) - shown


def test_a_stream_ending_in_whitespace_strips_what_was_kept() -> None:
    assert Captured("a  \n").rstrip() == Captured("a")
    assert Captured("head", "tail \n\n", 10).rstrip() == Captured("head", "tail", 10)
    assert Captured(" \n").blank and not Captured("", "", 3).blank
