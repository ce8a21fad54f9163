"""A result that bounds itself reaches the model whole: no line between a page's start and the
offset it names is lost, following that offset reaches the end of the file, and a command's cut
output keeps its one true marker (SPEC §5.5).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from stayer.events import Terminal
from stayer.messages import ToolResultBlock, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, Step, text, tool_call
from stayer.tools.base import MAX_RESULT_CHARS
from stayer.tools.builtin.bash import BashTool
from stayer.tools.builtin.read import ReadTool
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Overflowing

_CONTINUE = re.compile(r"Read again with offset=(\d+) to continue\.\)$")
_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")


def _last_result(request: ModelRequest) -> ToolResultBlock:
    message = request.messages[-1]
    assert isinstance(message, UserMessage)
    (result,) = results_in(message)
    return result


def _follow(path: Path) -> Callable[[ModelRequest], Reply]:
    """What a careful model does with a page: read on from the offset it names, or stop."""

    def step(request: ModelRequest) -> Reply:
        found = _CONTINUE.search(_last_result(request).text)
        if found is None:
            return text("read it all")
        offset = int(found[1])  # each call an id of its own, as the API gives them
        return tool_call("Read", {"file_path": str(path), "offset": offset}, id=f"toolu_{offset}")

    return step


def _numbered_lines(page: str) -> list[tuple[int, str]]:
    """The (number, text) pairs of a page; every other line must be a note after a blank line."""
    body, _, _ = page.partition("\n\n")
    pairs = []
    for line in body.split("\n"):
        match = _NUMBERED.match(line)
        assert match is not None, f"not a numbered line: {line[:80]!r}"
        pairs.append((int(match[1]), match[2]))
    return pairs


async def test_reading_a_200_kb_file_page_by_page_loses_no_line(tmp_path: Path) -> None:
    lines = [f"{n:05d} " + "x" * 94 for n in range(1, 2001)]  # 2,000 lines of 100 characters
    path = tmp_path / "big.txt"
    path.write_text("".join(line + "\n" for line in lines))
    steps: list[Step] = [tool_call("Read", {"file_path": str(path)}), *[_follow(path)] * 6]
    model = ScriptedProvider(steps)
    events = await run(make_params(model, [ReadTool()], tmp_path), strict=False)

    assert finished(events).terminal is Terminal.COMPLETED
    pages = [_last_result(request) for request in model.requests[1:]]
    seen: list[tuple[int, str]] = []
    for page in pages:
        assert not page.is_error
        assert len(page.text) <= MAX_RESULT_CHARS
        assert "omitted" not in page.text and "were cut" not in page.text
        numbered = _numbered_lines(page.text)
        found = _CONTINUE.search(page.text)
        if found is not None:  # the offset it names is the line right after the last shown
            assert int(found[1]) == numbered[-1][0] + 1
        seen += numbered
    assert seen == list(enumerate(lines, start=1))
    assert len(pages) == 3
    assert _CONTINUE.search(pages[-1].text) is None
    # Each full page is as long as the cap allows: one more line would not have fitted.
    assert all(len(page.text) + len(lines[0]) + 8 > MAX_RESULT_CHARS for page in pages[:-1])


async def test_a_self_bounded_result_over_the_cap_keeps_its_start_and_says_so(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([tool_call("Overflowing", {}, id="t1"), text("ok")])
    await run(make_params(model, [Overflowing()], tmp_path))

    (answer,) = results_in(model.requests[1].messages[-1])
    full = Overflowing.text()
    shown, note = answer.text.split("\n\n[", 1)
    limit = Overflowing.max_result_chars
    assert len(answer.text) <= limit
    assert full.startswith(shown + "\n")  # a whole-line prefix: nothing inside it is missing
    dropped = len(full) - len(shown)
    assert note == (
        f"Overflowing returned {len(full)} characters, more than the {limit} one "
        f"result may hold, so its last {dropped} characters were dropped here; nothing above "
        "was left out. Any note about where to continue was among them: go on from the last "
        "line shown.]"
    )


async def test_a_command_printing_5_mb_reaches_the_model_with_one_true_marker(
    tmp_path: Path,
) -> None:
    command = "seq -f '%099g' 1 50000"  # 5,000,000 characters
    model = ScriptedProvider([tool_call("Bash", {"command": command}, id="t1"), text("ok")])
    await run(make_params(model, [BashTool()], tmp_path))

    (answer,) = results_in(model.requests[1].messages[-1])
    printed = "".join(f"{n:099d}\n" for n in range(1, 50_001)).rstrip()
    match = re.fullmatch(
        r"(?s)(.*)\n\n\.\.\. \[(\d+) characters of stdout omitted\] \.\.\.\n\n(.*)", answer.text
    )
    assert match is not None, answer.text[-300:]
    head, omitted, tail = match.groups()
    assert "omitted" not in head + tail and "were cut" not in tail
    assert printed.startswith(head) and printed.endswith(tail)
    assert int(omitted) == len(printed) - len(head) - len(tail)
