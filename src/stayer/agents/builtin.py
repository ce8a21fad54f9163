"""The agents stayer offers without any file: `general-purpose`, `Explore` and `Plan`.

A project's or user's file of the same name replaces one (see `catalog`). The two read-only
agents get only tools that look: Bash among them, because searching a repository often means
`git log` or `ls`, and the permission policy still judges every command it runs (a read-only
agent's `rm` is asked about or refused as the parent's would be).
"""

from __future__ import annotations

from stayer.tools.names import BASH, GLOB, GREP, READ, WEB_FETCH

from .model import AgentDefinition

GENERAL_PURPOSE = "general-purpose"
EXPLORE = "Explore"
PLAN = "Plan"

READ_ONLY_TOOLS = (GLOB, GREP, READ, BASH, WEB_FETCH)
"""What Explore and Plan may use: finding, searching and reading, nothing that writes."""

_GENERAL_PROMPT = """\
You are a subagent started by another agent to carry out one task on its behalf. You have the \
same tools it has. Work on the task until it is done or you are sure it cannot be done, then \
reply with what you found or did: the other agent sees only your final message, not your tool \
calls, so put everything it needs in that message (file paths with line numbers, the commands \
you ran and what they showed, what you changed and what is left). Be brief and exact; do not \
ask it questions you could answer yourself."""

_EXPLORE_PROMPT = """\
You are a fast, read-only search agent. Another agent asked you to find something in this \
codebase or on the web; find it and report back. You cannot change anything: do not try to \
edit, write or delete files, and use shell commands only to look (ls, git log, git grep, and \
the like).

Search broadly first (Glob for file names, Grep for contents), then read only what matters. \
Run independent searches in parallel. Stop as soon as you can answer.

Your final message is all the other agent will see. List the relevant paths (with line \
numbers where they help) and say in a few sentences what each holds and how they connect. \
If something could not be found, say where you looked."""

_PLAN_PROMPT = """\
You are a planning agent. Another agent needs a plan for a change before it makes it. Study \
the code the change touches (read-only: you cannot edit or write files, and shell commands \
are only for looking), find the conventions and the existing pieces to reuse, and note the \
risks.

Your final message is all the other agent will see. Give a numbered, step-by-step plan: the \
files to change and what changes in each, the order that keeps things working, how to test \
it, and any open question the other agent must settle first. Change nothing yourself."""


BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        name=GENERAL_PURPOSE,
        description=(
            "General agent for multi-step tasks: researching a question, searching code, "
            "making a change; has every tool its parent has."
        ),
        prompt=_GENERAL_PROMPT,
        scope="built-in",
        source="built-in",
    ),
    AgentDefinition(
        name=EXPLORE,
        description=(
            "Fast read-only agent for finding things in the codebase: files by pattern, code "
            "by keyword, answers to questions about how it works. Reports paths and findings."
        ),
        prompt=_EXPLORE_PROMPT,
        scope="built-in",
        source="built-in",
        tools=READ_ONLY_TOOLS,
        memory=False,
    ),
    AgentDefinition(
        name=PLAN,
        description=(
            "Read-only agent that researches the code and returns a step-by-step plan for a "
            "change, with the files involved and the risks; changes nothing."
        ),
        prompt=_PLAN_PROMPT,
        scope="built-in",
        source="built-in",
        tools=READ_ONLY_TOOLS,
    ),
)

BUILTIN_NAMES = frozenset(agent.name for agent in BUILTIN_AGENTS)
