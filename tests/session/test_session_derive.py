"""`Session.derive`: a child session that shares its parent's client and bounds, made with no
file or process I/O, and `Session.open` keeping every session's I/O off the event loop."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
import stayer.session.derive  # loaded before the audit below, which would see its import
from stayer.errors import ConfigError
from stayer.events import Compacted, Event, Finished, PermissionRequested, SubagentEvent, Terminal
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.fakes.tools import Delegate

_AUDITED: list[tuple[int, str, str]] = []
"""(thread id, event, detail) of the file opens and process starts seen while recording."""
_RECORDING = threading.Event()
_WATCHED = ("open", "subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.scandir")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING.is_set() and event in _WATCHED:
        _AUDITED.append((threading.get_ident(), event, str(args[0]) if args else ""))


sys.addaudithook(_audit)  # for the whole test process; it records only while asked to


async def allow(_request: PermissionRequested) -> Decision:
    return Decision("allow")


def options(server: FakeModelServer, cwd: Path, **more: Any) -> QueryOptions:
    env = {**server.env(), "STAYER_CONFIG_DIR": str(cwd / "config")}
    return QueryOptions(cwd=cwd, env=env, persist_session=False, **more)


async def submit(session: stayer.Session, prompt: str) -> list[Event]:
    return [event async for event in session.submit(prompt)]


def system_text(body: Any) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "".join(part.get("text", "") for part in system or [])


async def test_a_child_has_its_own_conversation_prompt_and_tools_on_its_parents_connection(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply("parent's answer"), reply("child's answer"), reply("parent again"))
        async with stayer.Session(options(server, tmp_path)) as parent:
            await submit(parent, "hello")
            child = parent.derive(system_prompt="You review diffs.", tools="Read,Grep")
            async with child:
                events = await submit(child, "review this")
            await submit(parent, "and now?")

        last = events[-1]
        assert isinstance(last, Finished) and last.terminal is Terminal.COMPLETED
        parent_first, child_call, parent_second = server.requests
        assert system_text(child_call.body) == "You review diffs."
        assert {tool["name"] for tool in child_call.body["tools"]} == {"Read", "Grep"}
        # the child's own conversation, not the parent's
        assert [message["role"] for message in child_call.messages] == ["user"]
        assert "review this" in str(child_call.messages[0]["content"])
        assert len(parent_second.messages) == 3  # the parent's goes on without the child's
        assert "You review diffs." not in system_text(parent_second.body)
        # one client, one pool: every request came over the same connection
        assert {request.peer for request in server.requests} == {parent_first.peer}
        assert child.session_id != parent.session_id


@pytest.mark.parametrize(
    ("parent_mode", "asked", "child_mode"),
    [
        ("default", "bypassPermissions", "default"),
        ("default", "acceptEdits", "default"),
        ("default", "dontAsk", "dontAsk"),
        ("acceptEdits", "plan", "plan"),
        ("bypassPermissions", "acceptEdits", "acceptEdits"),
        ("plan", "default", "plan"),
        ("plan", "dontAsk", "plan"),  # dontAsk lets through what allow rules name: plan does not
        ("dontAsk", "plan", "dontAsk"),  # plan asks what dontAsk refuses
        ("acceptEdits", None, "acceptEdits"),
    ],
)
async def test_a_childs_permission_mode_never_lets_through_more_than_its_parents(
    tmp_path: Path, parent_mode: str, asked: str | None, child_mode: str
) -> None:
    with FakeModelServer() as server:
        opts = options(server, tmp_path, permission_mode=parent_mode, can_use_tool=allow)
        async with stayer.Session(opts) as parent:
            child = parent.derive(permission_mode=asked)
            assert child.permission_mode == child_mode
            child.set_permission_mode("bypassPermissions")  # never past its parent's
            assert child.permission_mode == parent_mode
            assert parent.permission_mode == parent_mode  # its own state: the parent's untouched
            await child.aclose()


@pytest.mark.parametrize(
    ("parent_mode", "asked", "switch", "child_mode"),
    [
        ("bypassPermissions", None, "plan", "plan"),
        ("bypassPermissions", "acceptEdits", "default", "default"),
        ("acceptEdits", None, "dontAsk", "dontAsk"),
        ("bypassPermissions", "plan", "default", "plan"),  # already stricter: it stays
        ("acceptEdits", "default", "bypassPermissions", "default"),  # a looser parent: no change
    ],
)
async def test_a_parents_switch_to_a_stricter_mode_reaches_its_children_at_once(
    tmp_path: Path, parent_mode: str, asked: str | None, switch: str, child_mode: str
) -> None:
    with FakeModelServer() as server:
        opts = options(
            server,
            tmp_path,
            permission_mode=parent_mode,
            can_use_tool=allow,
            allow_dangerously_skip_permissions=True,  # the parent may switch into bypass
        )
        async with stayer.Session(opts) as parent:
            child = parent.derive(permission_mode=asked)
            grandchild = child.derive()
            parent.set_permission_mode(switch)
            assert (child.permission_mode, grandchild.permission_mode) == (child_mode, child_mode)
            child.set_permission_mode("bypassPermissions")  # never past its parent's, as it is
            if switch != "bypassPermissions":
                assert child.permission_mode == switch
            await grandchild.aclose()
            await child.aclose()


async def test_deriving_reads_no_file_and_starts_no_process(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Use tabs.\n")
    with FakeModelServer() as server:
        async with stayer.Session(options(server, project)) as parent:
            _AUDITED.clear()
            _RECORDING.set()
            try:
                child = parent.derive(system_prompt="child", tools="Read")
            finally:
                _RECORDING.clear()
            await child.aclose()
    assert _AUDITED == []


async def test_a_child_closes_nothing_its_parent_still_uses(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply("child"), reply("parent"))
        async with stayer.Session(options(server, tmp_path)) as parent:
            async with parent.derive() as child:
                await submit(child, "one")
            events = await submit(parent, "two")  # the shared client still works
        last = events[-1]
        assert isinstance(last, Finished) and last.terminal is Terminal.COMPLETED


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": "Read,Teleport"}, "the parent has no Teleport"),
        ({"model": "gpt-5.5"}, "served by openai, and a child session uses its parent's"),
    ],
)
async def test_a_child_asking_for_what_cannot_be_had_is_refused_in_one_line(
    tmp_path: Path, kwargs: dict[str, str], message: str
) -> None:
    with FakeModelServer() as server:
        async with stayer.Session(options(server, tmp_path)) as parent:
            with pytest.raises(ConfigError) as refused:
                parent.derive(tools=kwargs.get("tools"), model=kwargs.get("model"))
            assert message in str(refused.value)


async def test_fifty_sessions_open_at_once_with_none_of_their_io_on_the_event_loop(
    tmp_path: Path,
) -> None:
    """Settings, memory files, the git snapshot and the model client's set-up are read and
    probed in worker threads: the event loop's own thread opens no file and starts no process
    (the longest stall meanwhile is a figure in the README: `benchmarks/open_stall.py`)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Keep it short.\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Read(.env)"]}}')
    loop_thread = threading.get_ident()
    with FakeModelServer() as server:
        _AUDITED.clear()
        _RECORDING.set()
        try:
            sessions = await asyncio.gather(
                *(stayer.Session.open(options(server, project)) for _ in range(50))
            )
        finally:
            _RECORDING.clear()
        for session in sessions:
            await session.aclose()
    on_the_loop = [(event, detail) for thread, event, detail in _AUDITED if thread == loop_thread]
    assert on_the_loop == []
    assert any(event == "subprocess.Popen" for _, event, _ in _AUDITED)  # git did run: elsewhere
    assert len({session.session_id for session in sessions}) == 50


async def test_set_model_answers_the_next_prompt_with_another_model_and_keeps_the_talk(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply("first"), reply("second"))
        async with stayer.Session(options(server, tmp_path)) as session:
            await submit(session, "one")
            await session.set_model("haiku")
            events = await submit(session, "two")
            with pytest.raises(ConfigError, match=r"names no model"):
                await session.set_model("[1m]")
        first, second = server.requests
        assert (first.model, second.model) == ("claude-opus-5-5", "claude-haiku-5-5")
        assert "Model: claude-haiku-5-5" in system_text(second.body)
        assert len(second.messages) == 3  # the conversation goes on
        assert {request.peer for request in server.requests} == {first.peer}  # same client
        last = events[-1]
        assert isinstance(last, Finished) and last.terminal is Terminal.COMPLETED


async def test_clear_starts_over_under_a_new_session_and_transcript(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply("first"), reply("second"))
        opts = replace(options(server, tmp_path), persist_session=True)
        async with stayer.Session(opts) as session:
            before, old_path = session.session_id, session.transcript_path
            first = await submit(session, "one")
            await session.clear()
            second = await submit(session, "two")
            new_path = session.transcript_path
        assert session.session_id != before
        assert isinstance(first[0], stayer.SessionStarted) and first[0].session_id == before
        started = second[0]
        assert (
            isinstance(started, stayer.SessionStarted) and started.session_id == session.session_id
        )
        assert len(server.requests[1].messages) == 1  # nothing of the old conversation
        assert old_path is not None and new_path is not None and old_path != new_path
        assert (
            old_path.exists()
            and "two" in new_path.read_text()
            and "two" not in old_path.read_text()
        )


async def test_a_tool_spawns_a_subagent_through_the_sessions_seam(tmp_path: Path) -> None:
    """`ToolContext.spawn_subagent` is a child session of the one running the tool: it shares
    the model client, starts its own conversation, and its events come out as the call's."""
    model = ScriptedProvider(
        [
            tool_call("Delegate", {"task": "look around"}, id="t1"),
            text("the helper's answer"),  # the child's call, through the same client
            text("done"),
        ]
    )
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    opts = QueryOptions(
        cwd=tmp_path,
        env=env,
        provider=model,
        persist_session=False,
        extra_tools=[Delegate()],
        allowed_tools="Delegate",
    )
    async with stayer.Session(opts) as session:
        events = await submit(session, "delegate it")

    child_request = model.requests[1]
    assert [message.role for message in child_request.messages] == ["user"]
    assert "look around" in str(child_request.messages[0].content)
    nested = [event for event in events if isinstance(event, SubagentEvent)]
    assert nested and {event.parent_tool_use_id for event in nested} == {"t1"}
    inner_finished = nested[-1].event
    assert isinstance(inner_finished, Finished)
    assert inner_finished.result_text == "the helper's answer"
    last = events[-1]
    assert isinstance(last, Finished) and last.result_text == "done"
    model.assert_done()


async def test_compact_summarises_now_with_the_users_focus_and_goes_on_from_it(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider(
        [text("first answer"), text("Summary: the user said one."), text("second answer")]
    )
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    opts = QueryOptions(cwd=tmp_path, env=env, provider=model, persist_session=False)
    async with stayer.Session(opts) as session:
        await submit(session, "one")
        compacting = [event async for event in session.compact("keep the numbers")]
        await submit(session, "two")

    (compacted,) = [event for event in compacting if isinstance(event, Compacted)]
    assert (compacted.trigger, compacted.method) == ("manual", "summary")
    asked = str(model.requests[1].messages[-1].content)
    assert "focus on this: keep the numbers" in asked
    after = model.requests[2].messages
    assert "Summary: the user said one." in str(after[0].content)
    assert "first answer" not in str([m.content for m in after])
    model.assert_done()


async def test_a_child_never_gets_a_tool_its_parent_lacks(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with stayer.Session(options(server, tmp_path, tools="Read,Glob")) as parent:
            child = parent.derive()
            assert set(child.setup.params.tools.names) == {"Read", "Glob"}
            with pytest.raises(ConfigError, match="the parent has no Bash"):
                parent.derive(tools="Read,Bash")
            await child.aclose()
