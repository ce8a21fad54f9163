"""Process execution: the only package in stayer that starts processes.

Everything else (the Bash tool, Grep and Glob through ripgrep, hooks) goes through `run_command`
or `run_argv`, so timeouts, output caps and process-group cleanup live in one place.
"""

from stayer.exec.process import (
    CommandResult,
    kill_everything_now,
    omission_marker,
    run_argv,
    run_command,
    truncate_middle,
)

__all__ = [
    "CommandResult",
    "kill_everything_now",
    "omission_marker",
    "run_argv",
    "run_command",
    "truncate_middle",
]
