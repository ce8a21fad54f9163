"""A caller's own tools: the README's example runs as written, and bad tools are refused in one
line each."""

from __future__ import annotations

import runpy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.errors import ConfigError
from stayer.messages import TextBlock, ToolResultBlock
from stayer.providers.scripted import text, tool_call
from tests.e2e.cli import MODEL_VARIABLES
from tests.e2e.conversations import sent
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.unit.core.readme_tool_example import CountInput, WordCount
from tests.unit.tools.test_schemas import BUILTIN_ORDER

EXAMPLE = Path(__file__).with_name("readme_tool_example.py")
BUILTINS = BUILTIN_ORDER


def test_the_readme_example_runs_its_tool_for_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("one two\nthree\n")
    monkeypatch.chdir(tmp_path)
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with FakeModelServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        call = ToolCall("toolu_1", "WordCount", {"path": "notes.txt"})
        server.enqueue(reply(call), reply("notes.txt has 3 words."))
        runpy.run_path(str(EXAMPLE), run_name="__main__")

    assert capsys.readouterr().out == "notes.txt has 3 words.\n"
    first, second = server.requests
    tools: Any = first.body["tools"]
    assert [tool["name"] for tool in tools] == [*BUILTINS, "WordCount"]
    assert {k: v for k, v in tools[-1].items() if k != "cache_control"} == {
        "name": "WordCount",
        "description": "Count the words in a text file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"title": "Path", "type": "string"}},
            "required": ["path"],
        },
    }
    assert sent(second)[-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "notes.txt has 3 words"}],
            }
        ],
    }


async def _run(tmp_path: Path, extra: Sequence[Any], **options: Any) -> stayer.ScriptedProvider:
    model = stayer.ScriptedProvider(
        [tool_call("WordCount", {"path": "a.txt"}, id="toolu_1"), text("done")]
    )
    chosen = stayer.QueryOptions(cwd=tmp_path, provider=model, extra_tools=extra, **options)
    async for _ in stayer.query("count", options=chosen):
        pass
    return model


async def test_a_tools_selection_limits_the_built_ins_and_keeps_the_callers_tools(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("a b")
    model = await _run(tmp_path, [WordCount()], tools="Read,WordCount")

    assert [spec.name for spec in model.requests[0].tools] == ["Read", "WordCount"]
    (result,) = model.requests[1].messages[-1].content
    assert result == ToolResultBlock("toolu_1", (TextBlock("a.txt has 2 words"),))


async def test_a_deny_rule_hides_a_callers_tool(tmp_path: Path) -> None:
    model = await _run(tmp_path, [WordCount()], disallowed_tools="WordCount")
    assert [spec.name for spec in model.requests[0].tools] == BUILTINS


class Misnamed(WordCount):
    name = "Word Count"


class Bash(WordCount):
    name = "Bash"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            [Bash()],
            "extra tool name 'Bash' is a built-in tool's; give each tool its own name",
        ),
        (
            [WordCount(), WordCount()],
            "extra tool name 'WordCount' is another extra tool's; give each tool its own name",
        ),
        (
            [WordCount],
            "extra_tools takes stayer.Tool instances, not <class "
            "'tests.unit.core.readme_tool_example.WordCount'> (pass WordCount(), not the class)",
        ),
        (
            [CountInput(path="x")],
            "extra_tools takes stayer.Tool instances, not CountInput(path='x')",
        ),
        (
            [Misnamed()],
            "tool Misnamed has name 'Word Count'; a tool name is 1 to 64 letters, digits, "
            "'_' or '-'",
        ),
    ],
)
async def test_a_bad_extra_tool_is_refused_in_one_line(
    tmp_path: Path, extra: Sequence[Any], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        await _run(tmp_path, extra)
    assert str(refused.value) == message


def test_the_readme_shows_the_example_this_file_runs() -> None:
    from pathlib import Path

    readme = Path(__file__).resolve().parents[3] / "README.md"
    example = (Path(__file__).parent / "readme_tool_example.py").read_text()
    assert f"```python\n{example.rstrip()}\n```" in readme.read_text()
