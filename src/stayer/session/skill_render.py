"""A skill's or command's body made ready for the model: arguments put in, `!` commands run.

The arguments go in first (`$ARGUMENTS`, `$ARGUMENTS[N]`, `$N`, a named `$arg`, and the
`${CLAUDE_...}` variables), then each ``!`cmd` `` (at a line's start or after a space) and each
fenced ```` ```! ```` block is replaced by what the command printed. Every command is judged
exactly as the model's own Bash call would be (rules, mode, hooks, protected paths, sandbox) by
the run's permission check, and nobody is asked: anything but an allow aborts the whole
invocation, as does a failing command, so a repository's skill can never run what the user's
settings would not let the model run.

The argument expansion lives here until `stayer.agents.arguments` (the file readers' helper)
lands; the names are the same (`expand`, `shell_commands`, `fill`).
"""

from __future__ import annotations

import re
import shlex
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.agents.model import Skill
from stayer.loop.state import LoopParams, ToolCall
from stayer.loop.tool_exec import prepare
from stayer.messages import ToolUseBlock
from stayer.tools.base import ToolFailure
from stayer.tools.names import BASH

_INDEXED = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$(\d+)\b")
_VARIABLE = re.compile(r"\$\{(CLAUDE_SESSION_ID|CLAUDE_PROJECT_DIR|CLAUDE_SKILL_DIR)\}")
_INLINE = re.compile(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.MULTILINE)
_FENCED = re.compile(r"^```!\s*\n(.*?)\n```\s*$", re.MULTILINE | re.DOTALL)
QUIET_FAILURES = ("grep", "rg", "find", "diff", "test", "git diff", "git grep")
"""Programs whose exit status 1 means "nothing found" or "they differ", not a failure."""


class Places(Struct, frozen=True, kw_only=True):
    """What the `${CLAUDE_...}` variables of a body stand for."""

    session_id: str
    project_dir: Path
    skill_dir: Path


def split_args(args: str) -> list[str]:
    """The arguments as the shell would split them (quotes group words); plain spaces when the
    quoting is unbalanced, so a stray apostrophe is not an error."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand(body: str, args: str, *, names: Sequence[str], places: Places) -> str:
    """`body` with its placeholders filled from `args`; when it has none for arguments and
    some were given, they follow it as `ARGUMENTS: ...` (the model still sees them)."""
    text, used = _substitute(body, args, names=names, places=places)
    return _with_arguments(text, args, used=used)


def _substitute(text: str, args: str, *, names: Sequence[str], places: Places) -> tuple[str, bool]:
    """`text` with its placeholders filled, and whether any stood for the arguments."""
    words = split_args(args)
    used = False

    def indexed(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        index = match.group(1) or match.group(2)
        if index is None:
            return args
        position = int(index)
        return words[position] if position < len(words) else ""

    text = _INDEXED.sub(indexed, text)
    for position, name in enumerate(names):
        pattern = re.compile(rf"\${re.escape(name)}\b")
        if pattern.search(text):
            used = True
            value = words[position] if position < len(words) else ""
            text = pattern.sub(value.replace("\\", "\\\\"), text)
    values = {
        "CLAUDE_SESSION_ID": places.session_id,
        "CLAUDE_PROJECT_DIR": str(places.project_dir),
        "CLAUDE_SKILL_DIR": str(places.skill_dir),
    }
    return _VARIABLE.sub(lambda match: values[match.group(1)], text), used


def _with_arguments(text: str, args: str, *, used: bool) -> str:
    if used or not args.strip():
        return text
    return f"{text.rstrip()}\n\nARGUMENTS: {args.strip()}"


def shell_commands(text: str) -> list[tuple[tuple[int, int], str]]:
    """Each `!` command of `text`: where it stands (start, end) and the command, in order
    (an inline one inside a fenced block is part of that block)."""
    fenced = [((m.start(), m.end()), m.group(1).strip()) for m in _FENCED.finditer(text)]
    inline = [
        ((m.start(), m.end()), m.group(1).strip())
        for m in _INLINE.finditer(text)
        if not any(start <= m.start() < end for (start, end), _ in fenced)
    ]
    return sorted(fenced + inline)


def fill(text: str, outputs: Sequence[tuple[tuple[int, int], str]]) -> str:
    """`text` with each command's place taken by its output."""
    parts: list[str] = []
    at = 0
    for (start, end), output in outputs:
        parts += [text[at:start], output]
        at = end
    parts.append(text[at:])
    return "".join(parts)


async def render(skill: Skill, args: str, *, params: LoopParams, places: Places) -> str:
    """The body the model reads: placeholders filled, and each `!` command replaced by its
    output. The commands are found in the body as written, so arguments (which a model may
    give) can fill a command in but never add one. Raises `ToolFailure` in one line when a
    command may not run or fails (nothing after it runs)."""
    body, parts, used, at = skill.body, [], False, 0
    for (start, end), command in shell_commands(body):
        text, used_here = _substitute(body[at:start], args, names=skill.arguments, places=places)
        line, used_there = _substitute(command, args, names=skill.arguments, places=places)
        parts += [text, await _run(skill.name, line, params)]
        used, at = used or used_here or used_there, end
    text, used_here = _substitute(body[at:], args, names=skill.arguments, places=places)
    rendered = "".join([*parts, text]).strip("\n")
    return _with_arguments(rendered, args, used=used or used_here)


async def _run(name: str, command: str, params: LoopParams) -> str:
    """What `command` printed, once the run's own permission check allowed it as a Bash call
    of the model's; nobody is asked."""
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
        raise ToolFailure(
            f"{shown} was not run: {why}; allow it with --allowedTools "
            f'"{BASH}({command})" or remove it from the skill'
        )
    call: ToolCall = prepared.call
    if decision.updated_input is not None:  # a hook rewrote it: run what was judged
        call = replace(call, input=call.tool.parse_input(decision.updated_input))
    context = replace(params.tool_context, tool_use_id=block.id)
    try:
        output = await call.tool.call(call.input, context)
    except ToolFailure as failure:
        raise ToolFailure(f"{shown} failed: {_first_line(str(failure))}") from None
    return _printed(shown, command, output.data)


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
