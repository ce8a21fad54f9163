"""`--done-when COMMAND`: the harness, not the model, decides when the work is done.

Before a run may end as `completed`, the command runs in the working directory. Exit status 0
lets the run complete; anything else sends its output back to the model as the reason the work
is not finished (the loop's `stop_hook_blocking` branch, SPEC §3.3). No peer harness has this:
it turns "the model said it was done" into "the tests say it is done". The command gets the
run's environment without stayer's credentials (`stayer.exec.child_env`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stayer.exec import run_command
from stayer.exec.child_env import child_env
from stayer.loop.state import StopCheck

DONE_CHECK_TIMEOUT_S = 600.0
"""How long the check may run; one that takes longer fails."""

MAX_REPORT_CHARS = 10_000
"""How much of the check's output goes back to the model (its start and end)."""


def done_check(command: str, *, cwd: Path, env: Mapping[str, str]) -> StopCheck:
    """A stop check that runs `command` with bash; its objection is its output when it fails."""

    async def check() -> str | None:
        try:
            result = await run_command(
                command,
                cwd=cwd,
                env=child_env(env),
                timeout_s=DONE_CHECK_TIMEOUT_S,
                max_output_chars=MAX_REPORT_CHARS,
            )
        except OSError as exc:
            return f"The check `{command}` could not start: {exc}"
        if result.exit_code == 0 and not result.timed_out:
            return None
        if result.timed_out:
            how = f"did not finish within {DONE_CHECK_TIMEOUT_S:g} s"
        else:
            how = f"exited with status {result.exit_code}"
        output = "\n".join(part.rstrip() for part in (result.stdout, result.stderr) if part.strip())
        return f"The check `{command}` {how}." + (f" Its output:\n{output}" if output else "")

    return check
