"""/mcp (the session's MCP servers: state, where each is configured, where its log is; `/mcp
approve` lets a project's servers start), the MCP prompts as slash commands
(`/mcp__<server>__<prompt> [args]`, their text sent as the person's message), and the question
put as the REPL opens when the project's `.mcp.json` has servers waiting for approval.

A project's servers start programs on this computer, so the question shows, for each, all
that decides what runs: its command line as written, its folder, every environment variable
it sets (a `PATH` there can put the repository's own `npx` first), and the program the command
finds, marked when that is inside the project. Every word is shown with its unprintable
characters escaped, so a newline in an argument cannot draw a line of its own. Nothing starts
until the person says so; "Not now" starts nothing and writes nothing (the question comes
again next time), and a server whose entry changed while the question waited is not started.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.driver import Submit
from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.session.mcp_approval import McpChanged
from stayer.session.mcp_link import McpPrompt
from stayer.session.session import Session

from .commands_context import shown_path
from .commands_entry import Command
from .surface import Repl

if TYPE_CHECKING:
    from stayer.config.mcp_servers import McpServerConfig

SCOPES = {
    "flag": "--mcp-config",
    "user": "user settings",
    "project": "project settings",
    "local": "local settings",
    "mcpjson": "project .mcp.json",
}
"""Where a server is configured, in a person's words (`McpServerStatus.scope`)."""

USE = "Use these servers (remember for this project)"
NOT_NOW = "Not now"
EMPTY = (
    "No MCP server is configured. Add one with `stayer mcp add NAME -- COMMAND [ARGS...]` "
    "(see stayer mcp --help); sessions started from then on use it"
)


def state_words(status: McpServerStatus) -> str:
    """What a server is doing, in a few words (and how to approve one that waits)."""
    match status.status:
        case "connected":
            return f"connected · {status.tools} tool" + ("" if status.tools == 1 else "s")
        case "failed":
            return f"failed: {status.error or 'no reason given'}"
        case "pending":
            return f"connecting ({status.error})" if status.error else "connecting"
        case "needs-approval":
            return f"needs approval: /mcp approve {status.name}"
        case "disabled":
            return "disabled (disabledMcpjsonServers)"


def servers_text(
    statuses: Sequence[McpServerStatus], log_dir: Path | None, cwd: Path | None = None
) -> str:
    """/mcp's answer: a line per server (name, state, where it is configured), then where the
    servers' logs are (from `cwd` or home, when under one)."""
    if not statuses:
        return EMPTY
    width = max(len(status.name) for status in statuses)
    lines = ["MCP servers:"]
    for status in statuses:
        where = SCOPES.get(status.scope, status.scope)
        lines.append(
            f"  {status.name:<{width}}  {state_words(status)}" + (f" · {where}" if where else "")
        )
    if log_dir is not None:
        shown = str(log_dir) if cwd is None else shown_path(log_dir, cwd)
        lines.append(f"Logs (each server's stderr): {shown}/")
    return "\n".join(lines)


async def _mcp(repl: Repl, argument: str) -> None:
    session = repl.session
    word, _, rest = argument.partition(" ")
    if word == "approve":
        await approve(repl, rest.split() or _waiting(session))
        return
    if argument:
        repl.say("Write /mcp to list the servers, or /mcp approve NAME... to start a project's")
        return
    cwd = Path(session.setup.started.cwd)
    repl.say(servers_text(session.mcp_servers(), session.mcp_log_dir(), cwd))


def _waiting(session: Session) -> list[str]:
    return [s.name for s in session.mcp_servers() if s.status == "needs-approval"]


async def approve(repl: Repl, names: Sequence[str]) -> None:
    """Approve `names` for this project and start them; what happened, in one line (and one
    more for servers whose entry changed since they were shown)."""
    if not names:
        repl.say("No MCP server waits for approval; /mcp lists them")
        return
    try:
        started = await repl.session.approve_mcp(names)
    except McpChanged as changed:
        if changed.started:
            repl.say(f"Approved for this project; starting {', '.join(changed.started)}")
        repl.say(str(changed))
        return
    if started:
        repl.say(f"Approved for this project; starting {', '.join(started)}")
    else:
        repl.say(
            f"Approved {', '.join(names)} for this project; the settings keep them from starting"
        )


def quoted(word: str) -> str:
    """`word` as a shell would take it back: quoted when it needs to be, and, when it holds a
    character that prints nothing (a newline, an escape, a bidi mark), in the shell's `$'...'`
    with that character written as its escape (a newline as `\\n`), so no word of an entry
    can draw a line, or hide part of one, in the question."""
    if word.isprintable():
        return shlex.quote(word)
    escaped = "".join(_escape(char) for char in word)
    return f"$'{escaped}'"


def _escape(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    return char if char.isprintable() else repr(char)[1:-1]  # \n, \x1b, \u202e as bash reads them


def approval_question(session: Session) -> str | None:
    """The question for the servers waiting for approval, a block each (see the module);
    None when none waits."""
    resolved = session.setup.resolved
    waiting = set(_waiting(session))
    if resolved is None or resolved.mcp is None or not waiting:
        return None
    lines = [
        "This project's .mcp.json asks to start MCP servers, programs that run on this computer:"
    ]
    for config in resolved.mcp.needs_approval:
        if config.name in waiting:
            lines += server_block(config, resolved.cwd)
    return "\n".join(lines)


def server_block(config: McpServerConfig, project: Path) -> list[str]:
    """One waiting server as the question shows it: its command line (or URL), then the
    program that runs, its folder and the environment it sets, one line each."""
    if not config.command:
        return [f"  {quoted(config.name)}: {quoted(config.url)}"]
    line = " ".join(quoted(word) for word in (config.command, *config.args))
    lines = [f"  {quoted(config.name)}: {line}", f"    runs: {_program(config, project)}"]
    if config.cwd is not None:
        lines.append(f"    in folder: {quoted(config.cwd)}")
    lines += [f"    sets: {quoted(name)}={quoted(value)}" for name, value in config.env.items()]
    return lines


def _program(config: McpServerConfig, project: Path) -> str:
    """The program `config.command` finds as the server would start (its own PATH, a relative
    folder taken from where it runs), marked when the project holds it."""
    base = Path(config.cwd) if config.cwd is not None else project
    if os.sep in config.command:
        path = base / config.command
        found = str(path) if path.is_file() else None
    else:
        search = config.env.get("PATH", os.environ.get("PATH", os.defpath))
        folders = [str(base / folder) for folder in search.split(os.pathsep)]
        found = shutil.which(config.command, path=os.pathsep.join(folders))
    if found is None:
        return f"{quoted(config.command)} (no such program found)"
    path = Path(os.path.abspath(found))
    shown = quoted(str(path))
    if _inside(path, project):
        return f"{shown} (inside this project: the repository provides it)"
    return shown


def _inside(path: Path, project: Path) -> bool:
    """Whether `path`, or the file a link there leads to, is inside `project`."""
    root = Path(os.path.realpath(project))
    return any(
        candidate.is_relative_to(folder)
        for candidate in (path, Path(os.path.realpath(path)))
        for folder in (project, root)
    )


async def ask_approval(repl: Repl) -> None:
    """Ask, as the REPL opens, whether the project's waiting servers may start."""
    session = repl.session
    question = approval_question(session)
    if question is None:
        return
    chosen = await repl.pick(question, [USE, NOT_NOW])
    if chosen != 0:
        repl.say("Not started; /mcp approve starts them later (they wait again next session)")
        return
    try:
        await approve(repl, _waiting(session))
    except ConfigError as error:
        repl.say(f"The servers were not started: {error}")


def prompt_command(prompt: McpPrompt) -> Command:
    """`/mcp__<server>__<prompt> [args]`: the prompt's text, its arguments filled in from the
    words after the name, sent as the person's message."""

    async def run(repl: Repl, argument: str) -> None:
        try:
            words = shlex.split(argument)
        except ValueError as error:
            raise ConfigError(f"cannot read the arguments ({error}); close the quote") from None
        text = await repl.session.mcp_prompt(prompt.command, words)
        repl.send(Submit(text))

    summary = (prompt.description or f"the {prompt.name} prompt of {prompt.server}") + " (MCP)"
    hint = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
    return Command(prompt.command, summary, run, argument_hint=hint)


mcp_command = Command(
    "mcp",
    "the MCP servers: state, where each is configured, logs",
    _mcp,
    argument_hint="[approve NAME...]",
    while_running=True,
)
