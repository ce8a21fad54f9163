"""Set up (or refresh) the project's virtual environment from the lock file.

Needs nothing but Python 3.11+: it installs a pinned `uv` into `.cache/uv`, then makes `.venv`
match `uv.lock` exactly. It does nothing when the lock has not changed since the last run, so
the wrappers `./stayer` and `./test` can call it every time.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

UV_VERSION = "0.13.9"
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


def main() -> int:
    if sys.version_info < (3, 11):
        print("stayer needs Python 3.11 or newer; run this with python3.11+", file=sys.stderr)
        return 1
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
