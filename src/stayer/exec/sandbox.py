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

A few places inside the working directories stay read-only even there: what makes code run
outside the sandbox later, with no command of the model's (`GUARDED`): the agent's own settings
(`.claude/`, `.stayer/`, whose hooks the next session runs), git's config and hooks, `.mcp.json`,
the editors' task folders, `.envrc`, hook managers' folders. Those that exist are bound
read-only over the writable directory; `.claude/` and `.stayer/`, where missing, get an empty
read-only folder of ours in their place (so an empty folder of that name appears in the project
the first time), since creating them is enough to plant a hook. Commands that change git's
config (`git config`, `git remote add`, `git push -u`) fail inside the sandbox.

Whether bubblewrap can run at all (installed, user namespaces allowed, not forbidden by a
container) is asked once with ``bwrap ... true`` (`sandbox_problem`) and remembered.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.exec.probe import run_probes

DEFAULT_BWRAP = "bwrap"
_PROBE_TIMEOUT_S = 10.0
_PROBE_BYTES = 4_000
_ROOT = Path("/")


class Sandbox(Struct, frozen=True):
    """How to run a command sandboxed: what it may write, and whether it may use the network.

    `writable` are absolute paths (directories or files) the command may change; `tmp` is a
    directory of ours it sees as /tmp (None: an empty tmpfs per command); `bwrap` is the
    bubblewrap program to run (a name looked up on PATH, or a path).
    """

    writable: tuple[Path, ...]
    network: bool = False
    tmp: Path | None = None
    bwrap: str = DEFAULT_BWRAP
    empty: Path | None = None
    """An empty folder of ours, bound read-only where a guarded folder is missing."""

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
        for path in dict.fromkeys(self.writable):
            line += self._guarded(path)
        line += ["--unshare-all", *(["--share-net"] if self.network else [])]
        line += ["--cap-drop", "ALL", "--die-with-parent", "--chdir", str(cwd), "--", *argv]
        return line

    def _guarded(self, root: Path) -> list[str]:
        """Read-only binds for the guarded places in a writable folder that is one."""
        if not root.is_dir():
            return []
        line: list[str] = []
        for name in GUARDED:
            place = root / name
            if os.path.lexists(place):
                real = place.resolve()
                if real.is_relative_to(root):  # a link out of the folder is read-only anyway
                    line += ["--ro-bind", str(real), str(real)]
            elif name in _CREATED_GUARDED and self.empty is not None:
                line += ["--ro-bind", str(self.empty), str(place)]
        return line


GUARDED = (
    ".claude", ".stayer", ".mcp.json", ".claude.json", ".git/config", ".git/hooks",
    ".git/info", ".gitmodules", ".envrc", ".vscode", ".idea", ".husky", ".githooks",
    "lefthook.yml", ".lefthook.yml", ".pre-commit-config.yaml",
)  # fmt: skip
"""Places in a working directory that make code run outside the sandbox later: read-only in
it (see the module docstring)."""
_CREATED_GUARDED = frozenset({".claude", ".stayer"})


def make_sandbox(writable: Sequence[Path], *, network: bool, bwrap: str = DEFAULT_BWRAP) -> Sandbox:
    """A sandbox for a session, with a private /tmp of its own; `close_sandbox` removes it."""
    tmp = Path(tempfile.mkdtemp(prefix="stayer-sandbox-tmp-"))
    empty = Path(tempfile.mkdtemp(prefix="stayer-sandbox-empty-"))
    empty.chmod(0o555)
    return Sandbox(tuple(path.resolve() for path in writable), network, tmp, bwrap, empty)


def close_sandbox(sandbox: Sandbox) -> None:
    """Remove the sandbox's private /tmp and what its commands left in it."""
    if sandbox.tmp is not None:
        shutil.rmtree(sandbox.tmp, ignore_errors=True)
    if sandbox.empty is not None:
        with contextlib.suppress(OSError):
            sandbox.empty.rmdir()


_answers: dict[Sandbox, str] = {}
_answers_lock = threading.Lock()


def sandbox_problem(sandbox: Sandbox, *, cwd: Path) -> str:
    """Why `sandbox` cannot run commands here, in one line; "" when it can.

    Runs ``true`` inside it once; the answer is kept for every later sandbox that differs only
    in its /tmp (each session has its own)."""
    key = replace(sandbox, tmp=None, empty=None)
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
