"""The commands that only tell: /cost (what the session has used) and /status (what it runs
with). Both may run while the agent works; neither changes anything."""

from __future__ import annotations

from pathlib import Path

from stayer._version import __version__

from .commands_entry import Command
from .figures import duration, money
from .surface import Repl


def table(rows: list[tuple[str, str]]) -> str:
    """Label and value per line, the values in one column."""
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label + ':':<{width + 1}}  {value}".rstrip() for label, value in rows)


async def _cost(repl: Repl, argument: str) -> None:
    totals = repl.totals
    runs = f"{totals.runs} run" + ("" if totals.runs == 1 else "s")
    used = (
        f"{totals.input_tokens:,} in, {totals.output_tokens:,} out, "
        f"{totals.cache_read_tokens:,} cache read, {totals.cache_write_tokens:,} cache write"
    )
    repl.say(
        table(
            [
                ("Cost", f"{money(totals.cost_usd)} over {runs} (at list prices)"),
                ("Tokens", used),
                ("API time", duration(totals.api_duration_ms)),
                ("Wall time", duration(totals.wall_duration_ms)),
            ]
        )
    )


def _home_short(path: str) -> str:
    """`path` with the home directory written `~`."""
    home = str(Path.home())
    if path == home or path.startswith(home + "/"):
        return "~" + path[len(home) :]
    return path


def _listed(paths: tuple[str, ...]) -> str:
    return ", ".join(_home_short(path) for path in paths) if paths else "none"


async def _status(repl: Repl, argument: str) -> None:
    session = repl.session
    started = session.setup.started
    transcript = session.transcript_path
    rows = [
        ("Version", f"stayer {__version__}"),
        ("Session", started.session_id),
        ("Directory", _home_short(started.cwd)),
        ("Model", started.model),
        ("Provider", started.provider),
        ("Permission mode", session.permission_mode),
        ("Settings files", _listed(started.settings_files)),
        ("Memory files", _listed(started.memory_files)),
        ("Transcript", "not kept" if transcript is None else _home_short(str(transcript))),
    ]
    lines = [table(rows)]
    lines += [f"  note: {note}" for note in (*started.memory_notes, *session.warnings)]
    repl.say("\n".join(lines))


cost_command = Command(
    "cost", "what this session has cost: money, tokens, time", _cost, while_running=True
)
status_command = Command(
    "status",
    "version, session, model, permission mode, settings and memory files",
    _status,
    while_running=True,
)
