"""Process execution: the only package in stayer that starts processes.

Everything else (the Bash tool, Grep and Glob through ripgrep, hooks) goes through `run_command`
or `run_argv`, so timeouts, output caps and process-group cleanup live in one place; `capture`
keeps and cuts their output.
"""

from stayer.exec.capture import Captured, cut_streams, omission_marker, truncate_middle
from stayer.exec.process import CommandResult, kill_everything_now, run_argv, run_command

__all__ = [
    "Captured",
    "CommandResult",
    "cut_streams",
    "kill_everything_now",
    "omission_marker",
    "run_argv",
    "run_command",
    "truncate_middle",
]
