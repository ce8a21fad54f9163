"""A run's process ends without the interpreter walking its heap again: the full collections
Python makes while shutting down cost about 0.1 s on a busy machine between the `result` line
and the end of the process, and find nothing a finished run needs. Not a timing: what is
checked is that the heap is frozen by the time the interpreter's exit handlers run, on a
finished run and on a refused one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

PROBE = (
    "import atexit, gc, sys;"
    "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, file=sys.stderr));"
    "from stayer.cli import main; main(sys.argv[1:])"
)


def run_probe(*args: str, cwd: Path, server: FakeModelServer) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", PROBE, *args]
    return subprocess.run(
        command, cwd=cwd, env=clean_env(server.env()), capture_output=True, text=True, timeout=60
    )


def test_a_finished_run_ends_with_its_result_and_a_frozen_heap(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("hello"))
    done = run_probe("-p", "hi", "--output-format", "json", cwd=tmp_path, server=server)
    assert (done.returncode, json.loads(done.stdout)["result"]) == (0, "hello"), done.stderr
    assert done.stderr.splitlines()[-1] == "frozen True"


def test_a_refused_command_line_ends_the_same_way(server: FakeModelServer, tmp_path: Path) -> None:
    done = run_probe("-p", "hi", "stray", cwd=tmp_path, server=server)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "frozen True"
