"""Process execution: the only package in stayer that starts processes.

Everything else (the Bash tool, Grep and Glob through ripgrep, hooks) goes through `run_command`
or `run_argv`, so timeouts, output caps and process-group cleanup live in one place; `capture`
keeps and cuts their output, and `lines` hands it to whoever watches as whole lines.
`run_probes` is the synchronous cousin for the few quick questions a session asks before it
starts (git), side by side under one deadline. `BackgroundShells` keeps a session's commands
that run on in the background (Bash's ``run_in_background``). A `Sandbox` runs shell commands,
in the foreground or the background, under bubblewrap (`sandbox`). Every process group started
here is watched by one `watchdog` process, which stops what is left of them once stayer is gone,
`kill -9` included.
"""

from stayer.exec.background import BackgroundShell, BackgroundShells, ShellOutput, ShellStatus
from stayer.exec.capture import Captured, Spool, cut_streams, omission_marker, truncate_middle
from stayer.exec.lines import OutputLines
from stayer.exec.probe import ProbeResult, run_probes
from stayer.exec.process import CommandResult, kill_everything_now, run_argv, run_command
from stayer.exec.sandbox import Sandbox, close_sandbox, make_sandbox, sandbox_problem

__all__ = [
    "BackgroundShell",
    "BackgroundShells",
    "Captured",
    "CommandResult",
    "OutputLines",
    "ProbeResult",
    "Sandbox",
    "ShellOutput",
    "ShellStatus",
    "Spool",
    "close_sandbox",
    "cut_streams",
    "kill_everything_now",
    "make_sandbox",
    "omission_marker",
    "run_argv",
    "run_command",
    "run_probes",
    "sandbox_problem",
    "truncate_middle",
]
