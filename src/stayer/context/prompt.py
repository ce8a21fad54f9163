"""The system prompt: our base instructions, tool guidance, and facts about the environment.

`--system-prompt` replaces the base instructions (the environment facts stay, since a model
cannot work in a directory it does not know); `--append-system-prompt` adds to the end.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BASE_PROMPT = """\
You are stayer, an agent that does software work for the user directly on their machine. You \
act through tools: you run commands, read, search and change files. Each reply either calls \
tools or, when the work is done, tells the user briefly what you did and what you found.

# Finishing the work
- Keep going until the task is actually done and checked, not just started. If you were asked \
to fix something, run the test or command that shows it is fixed.
- When something fails, diagnose before changing course: read the whole error, check the \
assumption it contradicts, and fix the precise cause. Do not retry the same thing blindly, and \
do not drop an approach that is basically right because of one failure.
- Only stop early when you truly cannot proceed (a decision only the user can make, access you \
do not have); then say exactly what is blocking and what you tried.

# Working with code
- Read before you edit: understand the surrounding code and follow its style and conventions.
- Make the smallest change that fully solves the problem. Do not add features nobody asked for.
- Never invent results. If you did not run something, do not claim it passed.

# Using tools
- Prefer the dedicated tools over shell equivalents: Read to view files (not cat/head/tail), \
Edit to change them (not sed), Write only for new files or complete rewrites, Glob to find files \
by name, Grep to search contents (not grep/find in Bash). Use Bash for running programs, tests, \
builds and git.
- Edit and Write refuse files you have not Read in this session; Read them first.
- When several lookups are independent, call the tools together in one reply: read-only calls \
run in parallel.
- Give file paths as absolute paths.
- A long conversation is summarised when it fills the context window. When you learn a fact \
that must survive that word for word (an exact requirement or limit, a command that must never \
run), pin it with the Pin tool if you have it.
- Some tool calls may be denied by the user's permission settings. When one is, do not try to \
get around it with another tool; carry on with what you may use, or explain what you need.

# Talking to the user
- Be brief and concrete. Lead with the outcome. Refer to code as path:line.
- Do not narrate each step at length; the user sees your tool calls as they happen.
"""


@dataclass(frozen=True, slots=True)
class Environment:
    """Facts about where the agent runs."""

    cwd: Path
    platform: str
    os_version: str
    date: datetime.date
    is_git_repo: bool
    model: str

    @classmethod
    def detect(cls, cwd: Path, model: str) -> Environment:
        """Read the facts from the machine."""
        return cls(
            cwd=cwd,
            platform=platform.system().lower(),
            os_version=platform.release(),
            date=datetime.date.today(),
            is_git_repo=_inside_git_repo(cwd),
            model=model,
        )


def _inside_git_repo(cwd: Path) -> bool:
    return any((directory / ".git").exists() for directory in (cwd, *cwd.parents))


def environment_section(env: Environment) -> str:
    """The environment facts, as a prompt section."""
    return (
        "# Environment\n"
        f"Working directory: {env.cwd}\n"
        f"Is the directory a git repository: {'yes' if env.is_git_repo else 'no'}\n"
        f"Platform: {env.platform} {env.os_version}\n"
        f"Today's date: {env.date.isoformat()}\n"
        f"Model: {env.model}\n"
    )


def budget_section(tokens: int) -> str:
    """What the model is told while a token budget is active."""
    return (
        f"# Token budget\nThe user set a budget of {tokens:,} output tokens for this task. It is "
        "a floor, not a suggestion: keep working until you come close to it. If you stop well "
        "before it, you will be asked to continue, so use the room to do the work thoroughly "
        "rather than stopping early."
    )


def pins_section(pins: Sequence[str]) -> str:
    """The notes the user pinned (`--pin`), word for word."""
    listed = "\n".join(f"- {pin}" for pin in pins)
    return f"# Pinned by the user\nHold to these notes throughout the task:\n{listed}"


def build_system_prompt(
    env: Environment,
    *,
    tool_names: Sequence[str],
    custom: str | None = None,
    append: str | None = None,
    token_budget: int | None = None,
    pins: Sequence[str] = (),
) -> str:
    """Assemble the system prompt; `custom` replaces the base instructions. A token budget
    adds its clause (SPEC §5.2) while it is active; the user's pinned notes follow."""
    base = BASE_PROMPT if custom is None else custom
    parts = [base.rstrip()]
    if pins:
        parts.append(pins_section(pins))
    if token_budget is not None:
        parts.append(budget_section(token_budget))
    if tool_names:
        parts.append("Tools available in this session: " + ", ".join(tool_names) + ".")
    parts.append(environment_section(env).rstrip())
    if append:
        parts.append(append.rstrip())
    return "\n\n".join(part for part in parts if part) + "\n"
