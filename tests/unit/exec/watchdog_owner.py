"""A stand-in for stayer in the watchdog's tests: a process of its own that starts commands
through `stayer.exec` and can be killed without killing the test.

Run as a script; each line on stdin is one order, answered by one line on stdout:
``watch CMD`` starts ``bash -c CMD`` in a group of its own, watched, and answers its pgid;
``start CMD`` does the same unwatched; ``wait PGID`` waits for that group's shell to exit and
then releases the group; ``probe CMD`` runs CMD as a probe (it blocks, so it answers only if
the probe ends); ``command CMD`` runs CMD through `run_command` (likewise); ``watchdog``
answers the watchdog's pid. The end of stdin is a normal exit.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from stayer.exec import run_command, run_probes
from stayer.exec.watchdog import WATCHDOG, ensure_watchdog, release_group, watch_group


def main() -> None:
    shells: dict[int, subprocess.Popen[bytes]] = {}
    for line in sys.stdin:
        order, _, rest = line.rstrip("\n").partition(" ")
        sys.stdout.write(obey(order, rest, shells) + "\n")
        sys.stdout.flush()


def obey(order: str, rest: str, shells: dict[int, subprocess.Popen[bytes]]) -> str:
    if order in ("watch", "start"):
        ensure_watchdog()
        shell = subprocess.Popen(
            ["bash", "-c", rest],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # the test's pipe must close when the owner dies
        )
        if order == "watch":
            watch_group(shell.pid)
        shells[shell.pid] = shell
        return str(shell.pid)
    if order == "wait":
        shells[int(rest)].wait()
        release_group(int(rest))
        return "released"
    if order == "probe":
        argv = [["bash", "-c", rest]]
        (probed,) = run_probes(argv, cwd=Path.cwd(), env=None, timeout_s=600, max_bytes=100)
        return str(probed.exit_code)
    if order == "command":
        result = asyncio.run(run_command(rest, cwd=Path.cwd(), env=None, timeout_s=600))
        return str(result.exit_code)
    if order == "watchdog":
        return str(WATCHDOG.pid)
    return f"unknown order {order!r}"


if __name__ == "__main__":
    main()
