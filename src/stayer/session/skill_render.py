"""A skill's or command's body made ready for the model: arguments put in, `!` commands run.

Filling the placeholders and finding the ``!`cmd` `` and fenced ```` ```! ```` commands is
`stayer.agents.arguments.render`'s (the commands are found before anything is filled, so an
argument never becomes a command). What this module adds is running them: each is judged
exactly as the model's own Bash call would be (rules, mode, hooks, protected paths, sandbox)
by the run's permission check, and nobody is asked: anything but an allow aborts the whole
invocation, as does a failing command, so a repository's skill never runs what the user's
settings would not let the model run.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.agents.arguments import render as fill_in
from stayer.agents.model import Skill
from stayer.agents.shell_context import Unquotable
from stayer.loop.state import LoopParams, ToolCall
from stayer.loop.tool_exec import prepare
from stayer.messages import ToolUseBlock
from stayer.tools.base import ToolFailure
from stayer.tools.names import BASH

QUIET_FAILURES = ("grep", "rg", "find", "diff", "test", "git diff", "git grep")
"""Programs whose exit status 1 means "nothing found" or "they differ", not a failure."""


class Places(Struct, frozen=True, kw_only=True):
    """What the `${CLAUDE_...}` variables of a body stand for."""

    session_id: str
    project_dir: Path
    skill_dir: Path
    plugin_root: Path | None = None


async def render(skill: Skill, args: str, *, params: LoopParams, places: Places) -> str:
    """The body the model reads: placeholders filled, and each `!` command replaced by its
    output. Raises `ToolFailure` in one line when a command may not run or fails (nothing
    after it runs)."""
    try:
        filled = fill_in(
            skill.body,
            args,
            names=skill.arguments,
            session_id=places.session_id,
            project_dir=places.project_dir,
            skill_dir=places.skill_dir,
            plugin_root=places.plugin_root,
        )
    except Unquotable as error:
        raise ToolFailure(f"skill {skill.name}: {error}; move it out of there") from None
    outputs = [
        await _run(skill.name, command, written, params)
        for command, written in zip(filled.commands, filled.written, strict=True)
    ]
    return filled.fill(outputs).strip("\n")


async def _run(name: str, command: str, written: str, params: LoopParams) -> str:
    """What `command` (`written` in the body, before its placeholders were filled) printed,
    once the run's own permission check allowed it as a Bash call of the model's; nobody is
    asked."""
    tools = params.tools.tools()
    block = ToolUseBlock(f"toolu_skill_{uuid.uuid4().hex[:20]}", BASH, {"command": command})
    prepared = prepare(tools, block)
    shown = f"skill {name}: `{command}`"
    if prepared.call is None:
        raise ToolFailure(f"{shown} was not run: {_first_line(prepared.error or 'no shell')}")
    decision = await params.can_use_tool(prepared.call)
    if decision.behavior != "allow":
        why = (
            "it would need approval, and nobody is asked about a skill's commands"
            if decision.behavior == "ask"
            else _first_sentence(decision.reason or "a deny rule forbids it")
        )
        raise ToolFailure(f"{shown} was not run: {why}; {_remedy(command, written)}")
    call: ToolCall = prepared.call
    if decision.updated_input is not None:  # a hook rewrote it: run what was judged
        call = replace(call, input=call.tool.parse_input(decision.updated_input))
    context = replace(params.tool_context, tool_use_id=block.id)
    try:
        output = await call.tool.call(call.input, context)
    except ToolFailure as failure:
        raise ToolFailure(f"{shown} failed: {_first_line(str(failure))}") from None
    return _printed(shown, command, output.data)


def _remedy(command: str, written: str) -> str:
    """What to do: a rule to allow the command only when it holds no argument's text (a rule
    naming what an argument put there would allow whatever the argument asked for)."""
    if command == written:
        return f'allow it with --allowedTools "{BASH}({command})" or remove it from the skill'
    return "allow the command it runs with --allowedTools, or remove it from the skill"


def _printed(shown: str, command: str, data: Mapping[str, object]) -> str:
    """The command's output, or `ToolFailure` for a failing exit (a search's 1 excepted)."""
    code = data.get("exit_code")
    stdout, stderr = str(data.get("stdout") or ""), str(data.get("stderr") or "")
    quiet = code == 1 and any(command.startswith(p + " ") for p in QUIET_FAILURES)
    if not isinstance(code, int) or (code != 0 and not quiet):
        said = _first_line(stderr or stdout)
        raise ToolFailure(f"{shown} failed with exit code {code}" + (f": {said}" if said else ""))
    return stdout.rstrip("\n")


def _first_sentence(text: str) -> str:
    """The reason's first sentence: the rest is written to the model, about what to do next."""
    line = _first_line(text)
    return line.split(". ", 1)[0].rstrip(".")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""
