"""A result over its tool's limit is saved whole to the session's folder; the model gets a
preview and the path, and can Read the rest. With no folder (the session is not kept) the old
cut stays.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from pydantic import BaseModel

from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.base import DEFAULT_RESULT_CHARS, Tool, ToolContext, ToolOutput
from stayer.tools.builtin import bash_saved
from stayer.tools.builtin.bash import BashTool
from stayer.tools.builtin.read import ReadTool
from tests.fakes.loop_harness import make_params, results_in, run
from tests.fakes.tools import Overflowing

_NOTE = re.compile(
    r"\[This result has (\d+) characters \((\d+) lines\), more than the (\d+) one result may "
    r"hold here, so it was saved to (\S+)\. Its start and end follow\. To see the rest, "
    r"Read that file with offset and limit \(in lines\), or Grep it for what you need\.\]\n\n"
)


class _Nothing(BaseModel):
    pass


class Wide(Tool[_Nothing]):
    """Returns 80,000 characters: over the default limit of 50,000."""

    name = "Wide"
    description = "Return a lot of text."
    input_model = _Nothing

    @staticmethod
    def text() -> str:
        return "".join(f"{n:07d} " + "w" * 72 + "\n" for n in range(1_000))

    async def call(self, tool_input: _Nothing, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.text())


def _saved(answer_text: str, limit: int) -> tuple[Path, str]:
    """The saved file's path and the preview shown after the note (checked against `limit`)."""
    match = _NOTE.match(answer_text)
    assert match is not None, answer_text[:300]
    assert int(match[3]) == limit
    path = Path(match[4])
    whole = path.read_text(encoding="utf-8")
    lines = whole.count("\n") + (0 if whole.endswith("\n") else 1)
    assert (int(match[1]), int(match[2])) == (len(whole), lines)
    return path, answer_text[match.end() :]


async def test_a_long_result_is_saved_whole_and_the_model_sees_its_ends_and_path(
    tmp_path: Path,
) -> None:
    session = tmp_path / "session"
    model = ScriptedProvider([tool_call("Wide", {}, id="toolu_wide"), text("ok")])
    await run(make_params(model, [Wide()], tmp_path, session_dir=session))

    (answer,) = results_in(model.requests[1].messages[-1])
    path, shown = _saved(answer.text, DEFAULT_RESULT_CHARS)
    assert path == session / "tool-results" / "toolu_wide.txt"
    assert path.read_text(encoding="utf-8") == Wide.text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(answer.text) < 4_000
    head, marker = shown.split("\n\n... [", 1)
    omitted, tail = marker.split(" characters omitted] ...\n\n", 1)
    assert head.startswith("0000000 ") and Wide.text().startswith(head)
    assert tail.endswith("0000999 " + "w" * 72 + "\n") and Wide.text().endswith(tail)
    assert int(omitted) == len(Wide.text()) - len(head) - len(tail)


async def test_bash_saves_all_it_printed_and_the_model_reads_on_from_the_file(
    tmp_path: Path,
) -> None:
    session = tmp_path / "session"
    command = "seq -f 'line %g' 1 12000; echo 'a warning' >&2"
    expected = "".join(f"line {n}\n" for n in range(1, 12_001)) + "a warning\n"
    saved_at: list[Path] = []

    def read_on(request: ModelRequest) -> Reply:
        (answer,) = results_in(request.messages[-1])
        path, _ = _saved(answer.text, 30_000)
        saved_at.append(path)
        return tool_call("Read", {"file_path": str(path), "offset": 6_000, "limit": 2}, id="r1")

    model = ScriptedProvider(
        [tool_call("Bash", {"command": command}, id="toolu_bash"), read_on, text("ok")]
    )
    await run(make_params(model, [BashTool(), ReadTool()], tmp_path, session_dir=session))

    (bash_answer,) = results_in(model.requests[1].messages[-1])
    _, shown = _saved(bash_answer.text, 30_000)
    assert shown.startswith("line 1\nline 2\n") and shown.endswith("line 12000\na warning")
    cut = re.fullmatch(
        r"(?s)(.*)\n\n\.\.\. \[(\d+) characters of stdout omitted\] \.\.\.\n\n(.*)", shown
    )
    assert cut is not None
    head, omitted, tail = cut.groups()
    assert int(omitted) == len(expected.rstrip()) - len(head) - len(tail)
    (path,) = saved_at
    assert path == session / "tool-results" / "toolu_bash.txt"
    assert path.read_text(encoding="utf-8") == expected
    assert sorted(p.name for p in path.parent.iterdir()) == ["toolu_bash.txt"]
    (read_answer,) = results_in(model.requests[2].messages[-1])
    assert read_answer.text.splitlines()[:2] == ["  6000\tline 6000", "  6001\tline 6001"]


async def test_bash_output_that_fits_leaves_no_file(tmp_path: Path) -> None:
    session = tmp_path / "session"
    model = ScriptedProvider([tool_call("Bash", {"command": "seq 1 3"}, id="t1"), text("ok")])
    await run(make_params(model, [BashTool()], tmp_path, session_dir=session))

    (answer,) = results_in(model.requests[1].messages[-1])
    assert answer.text == "1\n2\n3"
    assert list((session / "tool-results").iterdir()) == []


async def test_with_no_session_folder_a_long_result_keeps_the_middle_cut(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            tool_call("Wide", {}, id="t1"),
            tool_call("Bash", {"command": "seq -f 'line %g' 1 12000"}, id="t2"),
            text("ok"),
        ]
    )
    await run(make_params(model, [Wide(), BashTool()], tmp_path))

    (wide,) = results_in(model.requests[1].messages[-1])
    (bash,) = results_in(model.requests[2].messages[-1])
    assert "was saved to" not in wide.text + bash.text
    assert len(wide.text) <= DEFAULT_RESULT_CHARS and len(bash.text) <= 30_000
    assert wide.text.endswith("characters of this result were cut; narrow the request to see them]")
    assert re.search(r"\n\n\.\.\. \[\d+ characters of stdout omitted\] \.\.\.\n\n", bash.text)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


async def test_bash_says_when_the_file_holds_less_than_the_command_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_saved, "MAX_SAVED_CHARS", 40_000)
    session = tmp_path / "session"
    command = "seq -f 'line %g' 1 12000"  # 107,893 characters
    model = ScriptedProvider([tool_call("Bash", {"command": command}, id="t1"), text("ok")])
    await run(make_params(model, [BashTool()], tmp_path, session_dir=session))

    (answer,) = results_in(model.requests[1].messages[-1])
    path, shown = _saved(answer.text, 30_000)
    whole = "".join(f"line {n}\n" for n in range(1, 12_001))
    assert path.read_text(encoding="utf-8") == whole[:40_000]
    assert shown.endswith(
        f"line 12000\n(The file holds only the first 40000 characters of stdout; the command "
        f"printed {len(whole) - 40_000} more, which were not kept.)"
    )


async def test_a_self_bounded_result_that_overflows_is_saved_whole(tmp_path: Path) -> None:
    session = tmp_path / "session"
    model = ScriptedProvider([tool_call("Overflowing", {}, id="t1"), text("ok")])
    await run(make_params(model, [Overflowing()], tmp_path, session_dir=session))

    (answer,) = results_in(model.requests[1].messages[-1])
    path, shown = _saved(answer.text, Overflowing.max_result_chars)
    assert path.read_text(encoding="utf-8") == Overflowing.text()
    assert shown.endswith("\n(continue at 5000)")  # its own note on where to go on survives
