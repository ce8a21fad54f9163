"""Where and when a benchmark ran: the facts written beside its samples in `--json` files."""

from __future__ import annotations

import datetime
import math
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def git_head() -> str:
    """The short commit the benchmark ran at, or "unknown"."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def describe() -> dict[str, Any]:
    """The time, commit, interpreter, platform, CPU count and load average, JSON-ready."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_head": git_head(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": list(load),
    }
