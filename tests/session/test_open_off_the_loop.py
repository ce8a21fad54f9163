"""`Session.open` does the session's start-up I/O in a worker thread: while a slow `git` of
the git snapshot runs, the event loop goes on serving other tasks."""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

import stayer
import stayer.session.session as session_module
from stayer.errors import ConfigError
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from tests.sandboxes import skip_without_sandbox

SLOW_GIT = """#!/bin/sh
# says it started, then waits for the test's word before answering as an empty repository
echo "$$" > "{started}"
while [ ! -e "{release}" ]; do sleep 0.01; done
exit 0
"""


def fake_git(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A `git` on its own PATH folder, the FIFO it announces itself on, and the file that
    lets it go on."""
    bin_dir, started, release = tmp_path / "bin", tmp_path / "git-started", tmp_path / "release"
    bin_dir.mkdir()
    os.mkfifo(started)
    git = bin_dir / "git"
    git.write_text(SLOW_GIT.format(started=started, release=release))
    git.chmod(git.stat().st_mode | stat.S_IXUSR)
    return bin_dir, started, release


async def readable(fd: int) -> None:
    """Returns once something is written to the FIFO open at `fd`: only a running event loop
    can notice that."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, ready.set_result, None)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def test_the_event_loop_runs_while_the_git_snapshot_is_taken(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    bin_dir, started, release = fake_git(tmp_path)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STAYER_CONFIG_DIR": str(tmp_path / "config")}
    options = QueryOptions(
        cwd=project, env=env, provider=ScriptedProvider([text("hi")]), persist_session=False
    )

    heard = os.open(started, os.O_RDONLY | os.O_NONBLOCK)  # open for every git call to come
    try:
        git_running = asyncio.ensure_future(readable(heard))
        opening = asyncio.ensure_future(stayer.Session.open(options))
        ticked = asyncio.Event()
        ticker = asyncio.get_running_loop().call_soon(ticked.set)
        try:
            await asyncio.wait_for(git_running, timeout=10)  # git runs, and the loop heard it
            await ticked.wait()  # another piece of work got its turn meanwhile
            assert not opening.done()  # the session is still waiting for git
        finally:
            ticker.cancel()
            release.touch()
        session = await opening
    finally:
        os.close(heard)
    async with session:
        events = [event async for event in session.submit("go")]
    assert events[-1].__class__.__name__ == "Finished"


async def test_open_raises_what_the_constructor_raises(tmp_path: Path) -> None:
    options = QueryOptions(cwd=tmp_path / "missing", provider=ScriptedProvider([]))
    with pytest.raises(ConfigError, match="does not exist"):
        await stayer.Session.open(options)


async def test_a_caller_that_stops_waiting_leaves_no_private_tmp_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    skip_without_sandbox(project)
    host_tmp = tmp_path / "host-tmp"  # where the sandbox's private /tmp is made
    host_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(host_tmp))
    bin_dir, started, release = fake_git(tmp_path)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STAYER_CONFIG_DIR": str(tmp_path / "config")}
    options = QueryOptions(cwd=project, env=env, provider=ScriptedProvider([]), sandbox=True,
                           persist_session=False)  # fmt: skip

    tidied = threading.Event()  # set once the session opened for nobody is tidied up
    discard = session_module._discard

    def discard_and_tell(opened: Future[stayer.Session]) -> None:
        discard(opened)
        tidied.set()

    monkeypatch.setattr(session_module, "_discard", discard_and_tell)
    heard = os.open(started, os.O_RDONLY | os.O_NONBLOCK)
    try:
        opening = asyncio.ensure_future(stayer.Session.open(options))
        await asyncio.wait_for(readable(heard), timeout=10)
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening
        release.touch()
        assert await asyncio.to_thread(tidied.wait, 20)
    finally:
        release.touch()
        os.close(heard)
    assert list(host_tmp.iterdir()) == []
