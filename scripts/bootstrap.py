"""Set up (or refresh) the project's virtual environment from the lock file.

Needs nothing but Python 3.11+: it installs a pinned `uv` into `.cache/uv`, then makes `.venv`
match `uv.lock` exactly. It does nothing when the lock has not changed since the last run, so
the wrappers `./stayer` and `./test` can call it every time.

It also installs bubblewrap (`bwrap`, which `--sandbox` runs Bash commands under) and tmux (the
terminal the REPL's tests drive, as a person would) from Debian's packages when they are missing
and apt-get is there and we are root. That is never fatal: without bubblewrap `--sandbox`
refuses to start and its tests skip, each saying why; without tmux the REPL's tests skip. A
failed attempt is remembered in `.cache/<package>-failed`, so a machine that cannot install it
is not asked again on every run; delete the file to try again.

And it installs the reference MCP server `mcp-server-time`, which the MCP client's tests talk
to, into a virtual environment of its own, `.cache/mcp-server-time/` (its `mcp` pin must never
meet stayer's). That is never fatal either, and a failure is remembered the same way.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

UV_VERSION = "0.13.9"
MCP_SERVER_TIME = "mcp-server-time==2026.10.19"
ROOT = Path(__file__).resolve().parent.parent
STAMP = ROOT / ".venv" / ".stayer-lock-stamp"


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ("uv.lock", "pyproject.toml"):
        digest.update((ROOT / name).read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def _uv() -> Path:
    home = ROOT / ".cache" / "uv"
    uv = home / "bin" / "uv"
    if uv.exists():
        return uv
    print(f"stayer: installing uv {UV_VERSION} into .cache/uv (first run only)", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", f"uv=={UV_VERSION}"],
        check=True,
    )
    return uv


def _apt_install(package: str) -> str:
    """Install a Debian package; what went wrong, or "" when it is installed."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package]
    # A fresh image has no package lists: read them only when the install needs them.
    for step in ([install], [["apt-get", "update", "-qq"], install]):
        failed = ""
        for argv in step:
            done = subprocess.run(argv, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                lines = (done.stderr or done.stdout).strip().splitlines()
                failed = f"{' '.join(argv[:2])} failed: {lines[-1] if lines else done.returncode}"
                break
        if not failed:
            return ""
    return failed


def _system_program(program: str, package: str, why: str) -> None:
    """Install `package` (for `program`) where it is missing and we may; only ever says why
    not. A failed attempt is remembered in `.cache/<package>-failed`."""
    failed_file = ROOT / ".cache" / f"{package}-failed"
    if shutil.which(program) or failed_file.exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return  # not ours to install: what needs it, and its tests, say what is missing
    print(f"stayer: installing {package} with apt-get ({why})", file=sys.stderr)
    problem = _apt_install(package)
    if problem:
        failed_file.parent.mkdir(parents=True, exist_ok=True)
        failed_file.write_text(problem + "\n")
        print(
            f"stayer: could not install {package} ({problem}); {why} will not work here "
            f"(delete {failed_file.relative_to(ROOT)} to try again)",
            file=sys.stderr,
        )


def _mcp_server_time() -> None:
    """Install the reference MCP server into `.cache/mcp-server-time/` when it is missing;
    only ever says why not. A failed attempt is remembered in `.cache/mcp-server-time-failed`."""
    home = ROOT / ".cache" / "mcp-server-time"
    stamp = home / ".stayer-installed"
    failed_file = ROOT / ".cache" / "mcp-server-time-failed"
    if failed_file.exists() or (stamp.exists() and stamp.read_text() == MCP_SERVER_TIME):
        return
    print(f"stayer: installing {MCP_SERVER_TIME} into .cache/mcp-server-time", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    python = home / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", MCP_SERVER_TIME]
    done = subprocess.run(install, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        problem = f"pip install failed: {lines[-1] if lines else done.returncode}"
        failed_file.write_text(problem + "\n")
        print(
            f"stayer: could not install {MCP_SERVER_TIME} ({problem}); the tests that use it "
            f"skip (delete {failed_file.relative_to(ROOT)} to try again)",
            file=sys.stderr,
        )
        return
    stamp.write_text(MCP_SERVER_TIME)


def main() -> int:
    if sys.version_info < (3, 11):
        print("stayer needs Python 3.11 or newer; run this with python3.11+", file=sys.stderr)
        return 1
    (ROOT / ".cache").mkdir(exist_ok=True)
    with open(ROOT / ".cache" / "bootstrap.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two at once (./stayer beside ./test) take turns
        return _set_up()


def _set_up() -> int:
    _system_program("bwrap", "bubblewrap", "--sandbox")
    _system_program("tmux", "tmux", "the terminal UI's tests, which drive it in tmux")
    _mcp_server_time()
    fingerprint = _fingerprint()
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        return 0
    env = dict(os.environ, UV_PROJECT_ENVIRONMENT=str(ROOT / ".venv"))
    result = subprocess.run(
        [str(_uv()), "sync", "--locked", "--quiet", "--python", sys.executable],
        cwd=ROOT,
        env=env,
    )
    if result.returncode != 0:
        print("stayer: setting up .venv failed (see above)", file=sys.stderr)
        return result.returncode
    STAMP.write_text(fingerprint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
