"""The system prompt: our base instructions, tool guidance, the environment, the memory files.

The parts, in order: the base instructions (or the user's own), the tools, the environment (with
a git snapshot; under `--sandbox`, what the sandbox allows), the memory files, the user's pinned
notes and token budget, and what the user appends. Facts come before instructions, and what
the user set for this run comes after what files say, so it weighs more;
`--append-system-prompt` is always the end.

`--system-prompt` replaces the base instructions only. Claude Code keeps its memory files under
a custom prompt, and so do we; it drops its environment facts and git status, and we keep them:
claude-agent-sdk passes `--system-prompt ""` unless told otherwise, and a model that does not
know its directory, platform or date writes wrong paths and wrong dates. Facts do not fight a
custom persona; `CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS` and `CLAUDE_CODE_DISABLE_CLAUDE_MDS` turn
the snapshot and the files off for whoever wants the prompt bare.
"""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from msgspec import Struct

from .git import GitSnapshot, git_section, take_git_snapshot
from .memory import Memory, MemoryFile, MemorySource, project_root

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


class Environment(Struct, frozen=True):
    """Facts about where the agent runs; `git` is the snapshot, when in a repository."""

    cwd: Path
    platform: str
    os_version: str
    date: datetime.date
    is_git_repo: bool
    model: str
    shell: str = ""
    """The user's own shell (`$SHELL`); the Bash tool always runs bash."""
    git: GitSnapshot | None = None

    @classmethod
    def detect(
        cls, cwd: Path, model: str, *, env: Mapping[str, str] | None = None, git: bool = False
    ) -> Environment:
        """Read the facts from the machine; with `git`, take a snapshot of the repository."""
        env = os.environ if env is None else env
        in_repo = project_root(cwd) is not None
        snapshot = None
        if git and in_repo:
            snapshot = take_git_snapshot(cwd, env=env)
        return cls(
            cwd=cwd,
            platform=platform.system().lower(),
            os_version=platform.release(),
            date=datetime.date.today(),
            is_git_repo=in_repo,
            model=model,
            shell=os.path.basename(env.get("SHELL", "")),
            git=snapshot,
        )


def environment_section(env: Environment) -> str:
    """The environment facts, as a prompt section."""
    own = f" (the user's own shell is {env.shell})" if env.shell and env.shell != "bash" else ""
    return (
        "# Environment\n"
        f"Working directory: {env.cwd}\n"
        f"Is the directory a git repository: {'yes' if env.is_git_repo else 'no'}\n"
        f"Platform: {env.platform} {env.os_version}\n"
        f"Shell: bash runs your commands{own}\n"
        f"Today's date: {env.date.isoformat()}\n"
        f"Model: {env.model}\n"
    )


_SOURCES: dict[MemorySource, str] = {
    "user": "the user's own instructions, for every project",
    "project": "the project's instructions",
    "local": "the user's private notes for this project",
    "import": "imported",
}
MEMORY_INTRO = (
    "# Memory files\n"
    "The user and the project keep standing instructions in these files, read when the session "
    "started. Follow them: they take precedence over the general guidance above, and where two "
    "disagree, the later one wins (files nearer the working directory come later). Each file "
    "is between <memory-file> tags; an @path in a file brings in another, shown after it."
)


def memory_section(memory: Memory) -> str:
    """The memory files' text, each clearly delimited, with a note for what was left out."""
    if not memory.files:
        return ""
    parts = [MEMORY_INTRO, *(_memory_file(file) for file in memory.files)]
    left_out = [s for s in memory.skipped if s.reason in ("too_deep", "over_total")]
    if left_out:
        listed = "\n".join(f"- {skipped.path}: {skipped.detail}" for skipped in left_out)
        parts.append(f"Named but not shown here (Read them if they matter):\n{listed}")
    return "\n\n".join(parts)


def _memory_file(file: MemoryFile) -> str:
    source = _SOURCES[file.source]
    if file.imported_by is not None:
        source = f"imported by {file.imported_by}"
    text = file.text.rstrip("\n")
    if file.cut:
        text += (
            f"\n[cut here: the file has {file.size:,} bytes and only its start is shown; "
            "Read the file for the rest]"
        )
    return f'<memory-file path="{file.path}" source="{source}">\n{text}\n</memory-file>'


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


Sandbox = Literal["offline", "online"]
"""How commands run under `--sandbox`: without a network, or (`--sandbox-network`) with one."""


def sandbox_section(sandbox: Sandbox) -> str:
    """What the model must know of the sandbox its commands run in, so a refused write or an
    unreachable host reads as the sandbox's doing, not a fault to retry around."""
    network = (
        "The network is off: downloads, package installs, git fetch and push fail, and "
        "WebFetch is refused."
        if sandbox == "offline"
        else "The network is on."
    )
    return (
        "# Sandbox\n"
        "Your Bash commands run in a sandbox. They can write only inside the working "
        "directories and a private /tmp of this session; the rest of the machine is read-only "
        "to them. Inside the project, the places that make code run later stay read-only too: "
        "the agent's settings (.claude/, .stayer/), git's config and hooks, and the editors' and "
        "hook managers' folders. The file tools are held to the same places. "
        f"{network} A command that fails for one of these reasons fails the same way every "
        "time: do not retry it or look for a way around the sandbox; do the rest of the work "
        "and tell the user what has to run outside it."
    )


def build_system_prompt(
    env: Environment,
    *,
    tool_names: Sequence[str],
    custom: str | None = None,
    append: str | None = None,
    token_budget: int | None = None,
    pins: Sequence[str] = (),
    memory: Memory | None = None,
    sandbox: Sandbox | None = None,
) -> str:
    """Assemble the system prompt; `custom` replaces the base instructions. A token budget
    adds its clause (SPEC §5.2) while it is active; the user's pinned notes come before it."""
    base = BASE_PROMPT if custom is None else custom
    parts = [base.rstrip()]
    if tool_names:
        parts.append("Tools available in this session: " + ", ".join(tool_names) + ".")
    parts.append(environment_section(env).rstrip())
    if sandbox is not None:
        parts.append(sandbox_section(sandbox))
    if env.git is not None:
        parts.append(git_section(env.git))
    if memory is not None:
        parts.append(memory_section(memory))
    if pins:
        parts.append(pins_section(pins))
    if token_budget is not None:
        parts.append(budget_section(token_budget))
    if append:
        parts.append(append.rstrip())
    return "\n\n".join(part for part in parts if part) + "\n"
