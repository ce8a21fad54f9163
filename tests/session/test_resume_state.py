"""A resumed session takes back the model's todo list and the permission mode it was left in,
from its transcript; a mode given to the new run wins, and bypassPermissions never comes back
from a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stayer.events import Event, Finished, SessionStarted
from stayer.messages import JSON
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.session.transcript import load
from stayer.tools.base import TodoItem

FIXTURE = Path(__file__).parents[1] / "fixtures" / "claude-code-transcripts"
TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
]
ITEMS = [
    TodoItem("Read the code", "completed", "Reading the code"),
    TodoItem("Fix the bug", "in_progress", "Fixing the bug"),
]
BYPASS_NOTE = (
    "the session was left in bypassPermissions mode, which a transcript never turns back on; "
    "going on in the mode this run starts in (pass --dangerously-skip-permissions to go on as "
    "before)"
)


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    return QueryOptions(cwd=tmp_path, provider=model, env=env, **more)


async def submit(session: Session, prompt: str) -> list[Event]:
    return [event async for event in session.submit(prompt)]


async def saved_session(tmp_path: Path, **more: Any) -> str:
    """A session that wrote a todo list (left open: the run's stop check then sends the model
    back, and it ends anyway); its id."""
    model = ScriptedProvider(
        [tool_call("TodoWrite", {"todos": TODOS}), text("Working on it."), text("Still on it.")]
    )
    async with Session(options(tmp_path, model, **more)) as session:
        events = await submit(session, "fix it")
    assert isinstance(events[-1], Finished)
    return session.session_id


def todos(session: Session) -> list[TodoItem]:
    return list(session.setup.params.tool_context.todos)


async def test_the_todo_list_comes_back_with_the_session(tmp_path: Path) -> None:
    session_id = await saved_session(tmp_path, permission_mode="acceptEdits")

    async with Session(options(tmp_path, ScriptedProvider([]), resume=session_id)) as resumed:
        assert todos(resumed) == ITEMS


async def test_a_fork_records_the_list_in_its_own_file(tmp_path: Path) -> None:
    session_id = await saved_session(tmp_path, permission_mode="acceptEdits")
    forked = options(tmp_path, ScriptedProvider([]), resume=session_id, fork_session=True)
    async with Session(forked) as fork:
        assert todos(fork) == ITEMS
        fork_id = fork.session_id

    async with Session(options(tmp_path, ScriptedProvider([]), resume=fork_id)) as again:
        assert todos(again) == ITEMS


async def test_the_mode_comes_back_named_unless_the_run_gives_one(tmp_path: Path) -> None:
    session_id = await saved_session(tmp_path, permission_mode="acceptEdits")

    model = ScriptedProvider([text("ok")])
    async with Session(options(tmp_path, model, resume=session_id)) as resumed:
        assert resumed.permission_mode == "acceptEdits"
        started = (await submit(resumed, "go on"))[0]
        assert isinstance(started, SessionStarted) and started.permission_mode == "acceptEdits"
        assert (
            "going on in acceptEdits permission mode, as the session was left; "
            "--permission-mode chooses another"
        ) in resumed.warnings

    given = options(tmp_path, ScriptedProvider([]), resume=session_id, permission_mode="plan")
    async with Session(given) as resumed:
        assert resumed.permission_mode == "plan"
        assert not any("permission mode" in warning for warning in resumed.warnings)


async def test_a_mode_asking_less_comes_back_only_from_stayer_s_own_folder(
    tmp_path: Path,
) -> None:
    session_id = await saved_session(tmp_path, permission_mode="acceptEdits")
    saved = next((tmp_path / "config" / "projects").glob(f"*/{session_id}.jsonl"))
    shared = tmp_path / "shared.jsonl"  # the same file, handed over from elsewhere
    shared.write_bytes(saved.read_bytes())

    model = ScriptedProvider([])
    async with Session(options(tmp_path, model, resume=str(shared))) as resumed:
        assert resumed.permission_mode == "default"
        assert (
            "the session was left in acceptEdits permission mode, which comes back only for a "
            "session stayer saved itself; going on in the mode this run starts in (pass "
            "--permission-mode acceptEdits to go on as before)"
        ) in resumed.warnings


async def test_a_mode_switched_last_thing_is_what_comes_back(tmp_path: Path) -> None:
    session_id = await saved_session(tmp_path)
    async with Session(options(tmp_path, ScriptedProvider([]), resume=session_id)) as resumed:
        assert resumed.permission_mode == "default"
        assert resumed.warnings == ()
        resumed.set_permission_mode("plan")  # and nothing written after it

    async with Session(options(tmp_path, ScriptedProvider([]), resume=session_id)) as again:
        assert again.permission_mode == "plan"


@pytest.mark.parametrize("given", [None, "dangerously"])
async def test_bypass_comes_back_only_when_the_run_turns_it_on(
    tmp_path: Path, given: str | None
) -> None:
    session_id = await saved_session(tmp_path, permission_mode="bypassPermissions")
    path = next((tmp_path / "config" / "projects").glob(f"*/{session_id}.jsonl"))
    assert load(path).permission_mode == "bypassPermissions"

    mode = "bypassPermissions" if given else None  # what --dangerously-skip-permissions passes
    more = options(tmp_path, ScriptedProvider([]), resume=session_id, permission_mode=mode)
    async with Session(more) as resumed:
        if given:
            assert resumed.permission_mode == "bypassPermissions"
            assert BYPASS_NOTE not in resumed.warnings
        else:
            assert resumed.permission_mode == "default"
            assert BYPASS_NOTE in resumed.warnings


async def test_a_claude_code_file_gives_its_mode_and_its_last_todo_list(tmp_path: Path) -> None:
    (fixture,) = FIXTURE.glob("*.jsonl")
    assert load(fixture).permission_mode == "bypassPermissions"  # recorded, never restored

    prompt = {"type": "user", "message": {"role": "user", "content": "plan it"}}
    call = {"type": "tool_use", "id": "toolu_t", "name": "TodoWrite", "input": {"todos": TODOS}}
    answer = {"type": "assistant", "message": {"role": "assistant", "id": "m", "content": [call]}}
    result = {"type": "tool_result", "tool_use_id": "toolu_t", "content": "saved"}
    results = {"type": "user", "message": {"role": "user", "content": [result]}}
    records = [
        {**record, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None}
        for n, record in enumerate([prompt, answer, results])
    ]
    path = tmp_path / "claude.jsonl"
    path.write_text("".join(json.dumps({**r, "permissionMode": "plan"}) + "\n" for r in records))

    loaded = load(path)

    assert (loaded.permission_mode, loaded.todos) == ("plan", tuple(TODOS))


def test_a_recorded_list_is_held_to_what_todo_write_accepts() -> None:
    from stayer.session.resume_state import recorded_todos
    from stayer.session.transcript import Loaded
    from stayer.tools.builtin.todo import MAX_TODO_CHARS, MAX_TODOS

    whole = {"content": "Do it", "status": "pending", "activeForm": "Doing it"}
    broken: list[JSON] = [
        "not a task",
        {**whole, "status": "someday"},
        {**whole, "content": "  "},
        {**whole, "activeForm": "x" * (MAX_TODO_CHARS + 1)},
    ]
    loaded = Loaded((), (), None, 0, (), todos=(*broken, *[whole] * (MAX_TODOS + 5)))

    assert recorded_todos(loaded) == [TodoItem("Do it", "pending", "Doing it")] * MAX_TODOS
