"""The shell sandbox: Bash commands run under bubblewrap (`bwrap`), the working directories
writable, everything else read-only, and no network unless it is allowed.

The command sees the machine's own root read-only, a minimal /dev, its own /proc, and a
private /tmp: a directory of the session's (`Sandbox.tmp`, so what one call leaves there the
next finds, as it would unsandboxed), or a fresh tmpfs per command when there is none. The
working directories are bound writable over that, so one under /tmp still works. It runs in
namespaces of its own (user, pid, ipc, uts, cgroup, and network unless `network`), with every
capability dropped, so a root inside cannot remount anything writable.

Two choices keep process control as it is unsandboxed. No ``--new-session``: the command stays
in the process group we start (exec gives every process a session of its own, so it has no
terminal to inject into anyway), so a timeout or KillShell signals the command itself, SIGTERM
first, as it would without the sandbox. ``--die-with-parent`` and the pid namespace then see
that nothing outlives it: when the command's shell ends, whatever it left running in the
background goes with it (unsandboxed it would be left running; inside a sandbox it could not
be reached any more).

Whether bubblewrap can run at all (installed, user namespaces allowed, not forbidden by a
container) is asked once with ``bwrap ... true`` (`sandbox_problem`) and remembered.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from stayer.exec.probe import run_probes

DEFAULT_BWRAP = "bwrap"
_PROBE_TIMEOUT_S = 10.0
_PROBE_BYTES = 4_000
_ROOT = Path("/")


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How to run a command sandboxed: what it may write, and whether it may use the network.

    `writable` are absolute paths (directories or files) the command may change; `tmp` is a
    directory of ours it sees as /tmp (None: an empty tmpfs per command); `bwrap` is the
    bubblewrap program to run (a name looked up on PATH, or a path).
    """

    writable: tuple[Path, ...]
    network: bool = False
    tmp: Path | None = None
    bwrap: str = DEFAULT_BWRAP

    def allowing(self, *paths: Path) -> Sandbox:
        """The same sandbox with `paths` writable too."""
        return replace(self, writable=(*self.writable, *paths))

    def wrap(self, argv: Sequence[str], *, cwd: Path) -> list[str]:
        """`argv` as a bubblewrap command line that runs it inside the sandbox, in `cwd`."""
        # Later mounts cover earlier ones: the writable paths go last, so that one under /tmp
        # is not hidden by it; only a writable root has to come first, or it would hide
        # /dev, /proc and /tmp.
        root = "--bind" if _ROOT in self.writable else "--ro-bind"
        line = [self.bwrap, root, "/", "/", "--dev", "/dev", "--proc", "/proc"]
        line += ["--tmpfs", "/tmp"] if self.tmp is None else ["--bind", str(self.tmp), "/tmp"]
        for path in dict.fromkeys(self.writable):
            if path != _ROOT:
                line += ["--bind", str(path), str(path)]
        line += ["--unshare-all", *(["--share-net"] if self.network else [])]
        line += ["--cap-drop", "ALL", "--die-with-parent", "--chdir", str(cwd), "--", *argv]
        return line


def make_sandbox(writable: Sequence[Path], *, network: bool, bwrap: str = DEFAULT_BWRAP) -> Sandbox:
    """A sandbox for a session, with a private /tmp of its own; `close_sandbox` removes it."""
    tmp = Path(tempfile.mkdtemp(prefix="stayer-sandbox-tmp-"))
    return Sandbox(tuple(path.resolve() for path in writable), network, tmp, bwrap)


def close_sandbox(sandbox: Sandbox) -> None:
    """Remove the sandbox's private /tmp and what its commands left in it."""
    if sandbox.tmp is not None:
        shutil.rmtree(sandbox.tmp, ignore_errors=True)


_answers: dict[Sandbox, str] = {}
_answers_lock = threading.Lock()


def sandbox_problem(sandbox: Sandbox, *, cwd: Path) -> str:
    """Why `sandbox` cannot run commands here, in one line; "" when it can.

    Runs ``true`` inside it once; the answer is kept for every later sandbox that differs only
    in its /tmp (each session has its own)."""
    key = replace(sandbox, tmp=None)
    with _answers_lock:
        known = _answers.get(key)
    if known is not None:
        return known
    (result,) = run_probes(
        [key.wrap(["true"], cwd=cwd)],
        cwd=cwd,
        env=None,
        timeout_s=_PROBE_TIMEOUT_S,
        max_bytes=_PROBE_BYTES,
    )
    if result.exit_code is None:
        answer = result.problem or "bubblewrap gave no answer"
    elif result.exit_code != 0:
        lines = result.stderr.strip().splitlines()
        answer = lines[-1] if lines else f"bubblewrap exited with status {result.exit_code}"
    else:
        answer = ""
    with _answers_lock:
        _answers[key] = answer
    return answer
