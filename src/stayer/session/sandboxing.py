"""Whether a session's Bash commands run sandboxed, and the sandbox they run in (`--sandbox`).

Where bubblewrap cannot run, a session that asked for the sandbox does not start: running the
commands unsandboxed instead would be the very thing the user asked not to happen. The
bubblewrap program is `bwrap` on PATH unless `STAYER_BWRAP` names another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from stayer.errors import ConfigError
from stayer.exec import Sandbox, make_sandbox, sandbox_problem

from .options import QueryOptions


def check_sandbox(
    options: QueryOptions, env: Mapping[str, str], *, cwd: Path, directories: Sequence[Path]
) -> None:
    """Raise `ConfigError` in one line when the session asked for a sandbox it cannot have."""
    if not options.sandbox:
        return
    wanted = Sandbox((cwd, *directories), network=options.sandbox_network, bwrap=_bwrap(env))
    problem = sandbox_problem(wanted, cwd=cwd)
    if not problem:
        return
    missing = problem.startswith("could not start")
    remedy = (
        "install the bubblewrap package (apt-get install bubblewrap)"
        if missing
        else "allow user namespaces here (a container may forbid them)"
    )
    raise ConfigError(
        f"--sandbox: bubblewrap cannot run here ({problem}); {remedy}, or run without --sandbox"
    )


def session_sandbox(
    options: QueryOptions, env: Mapping[str, str], *, cwd: Path, directories: Sequence[Path]
) -> Sandbox | None:
    """The sandbox the session's commands run in (checked by `check_sandbox`), with a private
    /tmp the session removes when it closes; None without `sandbox`."""
    if not options.sandbox:
        return None
    return make_sandbox((cwd, *directories), network=options.sandbox_network, bwrap=_bwrap(env))


def _bwrap(env: Mapping[str, str]) -> str:
    return env.get("STAYER_BWRAP") or "bwrap"
