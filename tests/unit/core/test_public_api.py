"""The public surface: a documented `__all__`, nothing done on import, and `query()` works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import stayer
from stayer.events import Finished, SessionStarted, Terminal, TextDelta
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import text
from tests.unit.tools.test_schemas import BUILTIN_ORDER


def test_importing_stayer_loads_nothing_heavy() -> None:
    code = (
        "import sys, stayer; "
        "heavy = ('httpx', 'pydantic', 'asyncio', 'stayer.loop', 'tree_sitter'); "
        "heavy = [m for m in heavy if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""


def test_every_exported_name_resolves() -> None:
    for name in stayer.__all__:
        assert getattr(stayer, name) is not None, name
    assert sorted(stayer.__all__) == sorted(set(stayer.__all__))


async def test_query_yields_the_session_the_stream_and_one_finish(tmp_path: Path) -> None:
    model = stayer.ScriptedProvider([text("Hello from the script.")])
    options = stayer.QueryOptions(cwd=tmp_path, provider=model)
    events = [event async for event in stayer.query("hi", options=options)]

    assert isinstance(events[0], SessionStarted)
    assert events[0].cwd == str(tmp_path.resolve())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello from the script."
    assert isinstance(events[-1], Finished)
    assert events[-1].terminal is Terminal.COMPLETED
    assert events[-1].result_text == "Hello from the script."
    (request,) = model.requests
    assert str(tmp_path.resolve()) in request.system
    assert [spec.name for spec in request.tools] == BUILTIN_ORDER


async def test_a_history_that_ends_on_a_user_message_takes_the_prompt_into_it(
    tmp_path: Path,
) -> None:
    model = stayer.ScriptedProvider([text("Back again.")])
    failed_run = (UserMessage.of_text("first"),)  # a run that failed before any answer
    options = stayer.QueryOptions(cwd=tmp_path, provider=model, history=failed_run)
    events = [event async for event in stayer.query("second", options=options)]

    assert isinstance(events[-1], Finished) and events[-1].terminal is Terminal.COMPLETED
    (request,) = model.requests
    assert request.messages == (UserMessage((TextBlock("first"), TextBlock("second"))),)


def test_the_public_names_agree_everywhere_they_are_listed() -> None:
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(stayer))
    typed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                typed |= {alias.name for alias in statement.names}
                for alias in statement.names:  # each name is imported from where it loads
                    assert stayer._HOMES[alias.name] == statement.module, alias.name
    public = set(stayer.__all__) - {"__version__"}
    assert public == set(stayer._HOMES) == typed
    assert sorted(stayer.__all__) == stayer.__all__
    for name in public:  # and each one really loads
        assert getattr(stayer, name) is not None
