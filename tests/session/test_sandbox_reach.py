"""Under `--sandbox` the file tools are held to the sandbox's places (the working directories and
the sandbox's private /tmp, by its real path; reading may also open the session's folder) in
every mode, bypassPermissions included, and without `--sandbox-network` WebFetch is refused.
Decided by the session's own permission callback, then shown in a whole scripted session."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
from stayer.events import Finished, ToolCallFinished
from stayer.exec import close_sandbox
from stayer.loop.state import ToolCall
from stayer.messages import ToolResultBlock, UserMessage
from stayer.permissions import Decision
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.assemble import Setup
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare
from tests.sandboxes import skip_without_sandbox


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "notes.md").write_text("inside\n")
    (tmp_path / "beside").mkdir()
    (tmp_path / "beside" / "other.txt").write_text("outside\n")
    skip_without_sandbox(path)
    return path


def _options(work: Path, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(work.parent / "config")}
    more.setdefault("permission_mode", "bypassPermissions")
    return QueryOptions(cwd=work, provider=ScriptedProvider([]), env=env, sandbox=True, **more)


@pytest.fixture
def sandboxed(work: Path) -> Iterator[Setup]:
    setup = prepare(_options(work))
    assert setup.params.tool_context.sandbox is not None
    yield setup
    close_sandbox(setup.params.tool_context.sandbox)


async def decide(setup: Setup, tool: str, given: dict[str, Any]) -> Decision:
    made = setup.params.tools.tools()[tool]
    call = ToolCall(made, "toolu_1", made.input_model.model_validate(given))
    return await setup.params.can_use_tool(call)


def tmp_of(setup: Setup) -> Path:
    sandbox = setup.params.tool_context.sandbox
    assert sandbox is not None and sandbox.tmp is not None
    return sandbox.tmp


@pytest.mark.parametrize(
    ("tool", "given"),
    [
        ("Read", {"file_path": "{beside}/other.txt"}),
        ("Read", {"file_path": "/etc/hostname"}),
        ("Write", {"file_path": "{beside}/new.txt", "content": "x"}),
        ("Edit", {"file_path": "{beside}/other.txt", "old_string": "o", "new_string": "O"}),
        ("Grep", {"pattern": "x", "path": "/etc"}),
        ("Glob", {"pattern": "/etc/*.conf"}),
        ("Write", {"file_path": "{session}/planted.txt", "content": "x"}),  # read, not write
    ],
)
async def test_the_file_tools_stay_in_the_sandbox_even_in_bypass_mode(
    sandboxed: Setup, work: Path, tool: str, given: dict[str, str]
) -> None:
    session_dir = sandboxed.params.tool_context.session_dir
    assert session_dir is not None
    given = {
        key: value.replace("{beside}", str(work.parent / "beside")).replace(
            "{session}", str(session_dir)
        )
        for key, value in given.items()
    }
    decision = await decide(sandboxed, tool, given)
    assert decision.behavior == "deny"
    assert decision.reason.startswith(f"Permission to use {tool} on ")
    assert (
        f"under --sandbox the file tools reach only the working directories ({work}) and the "
        f"sandbox's temporary folder {tmp_of(sandboxed)} (which is /tmp to the shell)."
    ) in decision.reason
    assert "--add-dir" in decision.reason and "without --sandbox" in decision.reason


async def test_the_working_directories_the_sandboxes_tmp_and_the_session_folder_stay_open(
    sandboxed: Setup, work: Path
) -> None:
    tmp = tmp_of(sandboxed)
    session_dir = sandboxed.params.tool_context.session_dir
    assert session_dir is not None
    for tool, given in [
        ("Read", {"file_path": str(work / "notes.md")}),
        ("Write", {"file_path": str(work / "new.md"), "content": "x"}),
        ("Write", {"file_path": str(tmp / "scratch.txt"), "content": "x"}),
        ("Read", {"file_path": str(tmp / "scratch.txt")}),
        ("Read", {"file_path": str(session_dir / "tool-results" / "toolu_x.txt")}),
        ("Grep", {"pattern": "x"}),
    ]:
        decision = await decide(sandboxed, tool, given)
        assert decision.behavior == "allow", (tool, decision.reason)


async def test_a_tmp_path_is_refused_with_where_the_shells_tmp_really_is(sandboxed: Setup) -> None:
    decision = await decide(sandboxed, "Read", {"file_path": "/tmp/out.txt"})
    assert decision.behavior == "deny"
    tmp = tmp_of(sandboxed)
    assert f"What the shell keeps in /tmp/x is at {tmp}/x for the file tools." in decision.reason


async def test_a_shell_command_reads_the_sandboxes_tmp_unasked(work: Path) -> None:
    setup = prepare(_options(work, permission_mode="default"))
    try:
        decision = await decide(setup, "Bash", {"command": "cat /tmp/out.txt"})
    finally:
        sandbox = setup.params.tool_context.sandbox
        assert sandbox is not None
        close_sandbox(sandbox)
    assert decision.behavior == "allow", decision.reason
    # without the sandbox, /tmp is the machine's: outside the project, so it asks
    plain = prepare(QueryOptions(cwd=work, provider=ScriptedProvider([]), persist_session=False))
    made = plain.params.tools.tools()["Bash"]
    call = ToolCall(made, "toolu_1", made.input_model.model_validate({"command": "cat /tmp/x"}))
    assert (await plain.params.can_use_tool(call)).behavior == "ask"


@pytest.mark.parametrize(("network", "behavior"), [(False, "deny"), (True, "allow")])
async def test_webfetch_needs_the_sandboxes_network(
    work: Path, network: bool, behavior: str
) -> None:
    setup = prepare(_options(work, sandbox_network=network))
    try:
        decision = await decide(setup, "WebFetch", {"url": "https://example.com/", "prompt": "?"})
    finally:
        sandbox = setup.params.tool_context.sandbox
        assert sandbox is not None
        close_sandbox(sandbox)
    assert decision.behavior == behavior
    if not network:
        assert decision.reason == (
            "Permission to use WebFetch has been denied: the session runs under --sandbox "
            "without network access, so nothing may reach the network. Work without it; if it "
            "is essential, stop and say so (the user can run with --sandbox-network)."
        )


def follow_the_hint(request: ModelRequest) -> Reply:
    """A model that reads the last denial for where the shell's /tmp really is, and goes there."""
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    said = "".join(b.text for b in last.content if isinstance(b, ToolResultBlock))
    found = re.search(r"is at (\S+)/x for the file tools", said)
    assert found is not None, said
    return tool_call("Read", {"file_path": f"{found.group(1)}/out.txt"}, id="toolu_right")


async def test_what_bash_leaves_in_tmp_is_read_by_the_real_path_a_denial_names(
    work: Path,
) -> None:
    model = ScriptedProvider(
        [
            tool_call("Bash", {"command": "echo made in the sandbox > /tmp/out.txt"}),
            tool_call("Read", {"file_path": "/tmp/out.txt"}, id="toolu_wrong"),
            follow_the_hint,
            text("Read it."),
        ]
    )
    async with stayer.Session(replace(_options(work), provider=model)) as session:
        events = [event async for event in session.submit("go")]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.name, e.status) for e in finished] == [
        ("Bash", "completed"),
        ("Read", "denied"),
        ("Read", "completed"),
    ]
    assert "made in the sandbox" in finished[2].result.text
    assert isinstance(events[-1], Finished)
