"""Whether a session's Bash commands run sandboxed, the sandbox they run in (`--sandbox`), and
the places the permission check lets the other tools reach (`places_of`).

Where bubblewrap cannot run, a session that asked for the sandbox does not start: running the
commands unsandboxed instead would be the very thing the user asked not to happen. The
bubblewrap program is `bwrap` on PATH unless `STAYER_BWRAP` names another.

The file tools are held to the sandbox's places by the permission check, not by bubblewrap
(they run in our own process). They name the sandbox's private /tmp by its real path (a folder
``stayer-sandbox-tmp-…`` in the machine's temporary directory), which is what Bash sees as /tmp:
a path means one file to every tool that is not a shell, and a denial of a /tmp path says where
the shell's /tmp really is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from stayer.errors import ConfigError
from stayer.exec import Sandbox, make_sandbox, sandbox_problem
from stayer.permissions import Confinement, Places
from stayer.tools.base import ToolContext

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
        f"--sandbox: bubblewrap cannot run here ({problem}); {remedy}, or run without --sandbox "
        "(and without the settings' sandbox.enabled)"
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


def places_of(ctx: ToolContext | None) -> Places:
    """Where the session's calls may reach besides its working directories, as the context
    holds it now (its sandbox is made last, as the session opens)."""
    if ctx is None:
        return Places()
    session_dir = None if ctx.session_dir is None else ctx.session_dir.resolve()
    sandbox = ctx.sandbox
    if sandbox is None:
        return Places(session_dir)
    tmp = None if sandbox.tmp is None else sandbox.tmp.resolve()
    return Places(session_dir, Confinement(tmp, sandbox.network))
