"""`QueryOptions.sandbox` on the scripted model: the Bash commands of a session run inside it
with every working directory (`add_dirs` too) writable; its private /tmp is gone when the
session closes, even when the session fails to open; without a working bubblewrap the session
refuses to open."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
from stayer.events import Finished
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.sandboxes import outside_tmp, skip_without_sandbox


def _options(cwd: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(cwd.parent / "config"), **more.pop("env", {})}
    return QueryOptions(cwd=cwd, provider=model, permission_mode="bypassPermissions",
                        env=env, sandbox=True, **more)  # fmt: skip


@pytest.fixture
def host_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this process makes its temporary files, so a test can see what is left there."""
    path = tmp_path / "host-tmp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


def _results(finished: Finished) -> list[str]:
    return [
        "".join(part.text for part in block.content if isinstance(part, TextBlock))
        for message in finished.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_the_working_directories_are_writable_and_nothing_else(
    tmp_path: Path, host_tmp: Path
) -> None:
    work, extra = tmp_path / "work", tmp_path / "extra"
    work.mkdir()
    extra.mkdir()
    skip_without_sandbox(work)
    with outside_tmp() as outside:
        command = f"touch a {extra}/b; touch {outside}/c 2>&1 | sed 's/.*: //'"
        model = ScriptedProvider([tool_call("Bash", {"command": command}), text("Done.")])
        async with Session(_options(work, model, add_dirs=[extra])) as session:
            events = [event async for event in session.submit("go")]
            assert session.setup.params.tool_context.sandbox is not None
        assert not (outside / "c").exists()
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert _results(finished) == ["Read-only file system"]
    assert (work / "a").exists() and (extra / "b").exists()
    assert list(host_tmp.iterdir()) == []  # the session's /tmp is removed as it closes


def _refusing_bwrap(path: Path) -> Path:
    """A bubblewrap that fails as it does where the kernel forbids user namespaces."""
    path.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("program", "remedy"),
    [
        ("missing", "install the bubblewrap package (apt-get install bubblewrap)"),
        ("refusing", "allow user namespaces here (a container may forbid them)"),
    ],
)
def test_without_a_working_bubblewrap_the_session_does_not_open(
    tmp_path: Path, program: str, remedy: str
) -> None:
    bwrap = tmp_path / "no-bwrap" if program == "missing" else _refusing_bwrap(tmp_path / "bw")
    options = _options(tmp_path, ScriptedProvider([]), env={"STAYER_BWRAP": str(bwrap)})
    with pytest.raises(stayer.ConfigError) as raised:
        Session(options)
    problem = (
        f"could not start {bwrap}: No such file or directory"
        if program == "missing"
        else "bwrap: No permissions to create new namespace"
    )
    assert str(raised.value) == (
        f"--sandbox: bubblewrap cannot run here ({problem}); {remedy}, or run without --sandbox "
        "(and without the settings' sandbox.enabled)"
    )


def test_a_session_that_fails_to_open_leaves_no_private_tmp(tmp_path: Path, host_tmp: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    skip_without_sandbox(work)
    config = tmp_path / "config-is-a-file"
    config.write_text("")
    options = _options(work, ScriptedProvider([]), env={"STAYER_CONFIG_DIR": str(config)})
    with pytest.raises(stayer.ConfigError, match="cannot keep sessions"):
        Session(options)
    assert list(host_tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("more", "network"),
    [
        ({}, "The network is off: downloads, package installs, git fetch and push fail"),
        ({"sandbox_network": True}, "The network is on."),
    ],
)
async def test_the_system_prompt_says_commands_run_sandboxed(
    tmp_path: Path, more: dict[str, Any], network: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    skip_without_sandbox(work)
    model = ScriptedProvider([text("ok")])
    async with Session(_options(work, model, **more)) as session:
        [_ async for _ in session.submit("go")]
    unsandboxed = ScriptedProvider([text("ok")])
    async with Session(replace(_options(work, unsandboxed), sandbox=False)) as session:
        [_ async for _ in session.submit("go")]

    system = model.requests[0].system
    assert "# Sandbox\nYour Bash commands run in a sandbox." in system
    assert "can write only inside the working directories" in system
    assert network in system
    assert "# Sandbox" not in unsandboxed.requests[0].system
