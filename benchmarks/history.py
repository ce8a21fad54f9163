"""A long, realistic history for the compaction benchmark, made by stayer's own loop and tools.

Rather than imitate tool output, `build_history` runs the real loop (`benchmarks.instant`, with
autocompaction off) against an instant model that works through this repository the way an
agent studying it would: it Reads source files whole, Greps them (content mode, line numbers),
runs read-only Bash commands (git log, ls, wc), sometimes two Reads in one response, with a
line of text before each call and a thinking block (with its signature) before every third.
The real Read, Grep and Bash tools produce the results, so the history has exactly the shape
and sizes stayer sends: `cat -n` numbered files, rg listings, command output, the paging notes.
Each reply reports as input tokens the loop's own estimate of the request, as a provider would
report its count. The model stops calling tools once the request passes the target size, and
the history is everything before that last answer: it ends, as a tool loop does at its
compaction point, with a user message of tool results.

`notes_for` writes the instant summariser's answer: the six headings of our summary
instructions, filled in from the history's calls (about 1.5k tokens for a 150k history).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from msgspec.structs import replace

from benchmarks.instant import PROMPT, BenchmarkError, ClockedModel, drive, loop_params
from benchmarks.machine import REPO
from stayer.context.compact import estimate_tokens
from stayer.events import Terminal
from stayer.loop.state import CompactPolicy
from stayer.messages import (
    JSON,
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, text

MAX_CALLS = 2_000
FINAL_TEXT = "I have what I need."
GREPS = (
    ("def [a-z_]+\\(", "src/stayer/loop"),
    ("class \\w+", "src/stayer"),
    ("^from stayer", "src/stayer/session"),
    ("Terminal\\.[A-Z_]+", "src/stayer"),
    ("replace\\(state", "src/stayer/loop"),
    ("async def", "src/stayer/providers"),
    ("raise \\w+", "src/stayer/tools"),
    ("@dataclass", "src/stayer"),
    ("import json", "."),
    ("Continue\\.[A-Z_]+", "tests"),
)
COMMANDS = (
    "git log --oneline -n 40",
    "ls -la src/stayer src/stayer/loop src/stayer/context",
    "wc -l src/stayer/*.py src/stayer/*/*.py",
    "git log --stat -n 3",
    "grep -c 'def ' src/stayer/loop/*.py",
    "find tests -name '*.py' | sort | head -60",
    "git show --stat HEAD~1",
    "python3 --version && uname -sr",
)
KINDS = ("read", "grep", "read", "bash", "read2", "read", "grep")
SIGNATURE = "EqMBCkgIBxABGAIiQL" + "x9Zk3vQm2Lp8Rw4Tt6Ny1Bc5Hd7Jf0Sg" * 9
"""Opaque, as the API's thinking signatures are; only its size matters here."""


def _sources(root: Path) -> list[Path]:
    """The repository's Python files worth reading, source first, in a fixed order."""
    found: list[Path] = []
    for part in ("src/stayer", "tests", "benchmarks"):
        found += sorted(p for p in (root / part).rglob("*.py") if p.stat().st_size > 1_500)
    if not found:
        raise BenchmarkError(f"no Python sources under {root} to build a history from")
    return found


@dataclass
class _Agent:
    """Plays the model: the next call(s) of a cycle of Read / Grep / Bash, until it is enough."""

    root: Path
    target_tokens: int

    def __post_init__(self) -> None:
        self._files = itertools.cycle(_sources(self.root))
        self._greps = itertools.cycle(GREPS)
        self._commands = itertools.cycle(COMMANDS)
        self._kinds = itertools.cycle(KINDS)
        self._served = 0

    def respond(self, request: ModelRequest) -> Reply:
        """The next reply: more work while the request is under the target, then an answer."""
        counted = estimate_tokens(request.messages)
        if counted >= self.target_tokens:
            return text(FINAL_TEXT)
        self._served += 1
        calls = self._calls(next(self._kinds))
        blocks: list[ContentBlock] = []
        if self._served % 3 == 0:
            blocks.append(ThinkingBlock(_thought(calls), SIGNATURE))
        blocks.append(TextBlock(_saying(calls)))
        blocks += calls
        spoken = estimate_tokens([AssistantMessage(tuple(blocks))])
        return Reply(tuple(blocks), usage=Usage(input_tokens=counted, output_tokens=spoken))

    def _calls(self, kind: str) -> list[ToolUseBlock]:
        number = self._served
        if kind == "grep":
            pattern, path = next(self._greps)
            grep: dict[str, JSON] = {"pattern": pattern, "path": path, "output_mode": "content"}
            return [ToolUseBlock(f"toolu_{number:04d}_0", "Grep", grep)]
        if kind == "bash":
            bash: dict[str, JSON] = {"command": next(self._commands)}
            return [ToolUseBlock(f"toolu_{number:04d}_0", "Bash", bash)]
        reads = 2 if kind == "read2" else 1
        return [
            ToolUseBlock(f"toolu_{number:04d}_{k}", "Read", {"file_path": str(next(self._files))})
            for k in range(reads)
        ]


def _target(call: ToolUseBlock) -> str:
    for key in ("file_path", "pattern", "command"):
        if key in call.input:
            return str(call.input[key])
    return call.name


def _saying(calls: Sequence[ToolUseBlock]) -> str:
    what = " and ".join(f"{call.name} {_target(call)}" for call in calls)
    return f"Next I need {what}, to see how this part fits with what I read so far."


def _thought(calls: Sequence[ToolUseBlock]) -> str:
    return (
        f"The user wants to understand the code base. So far the loop, the providers and the "
        f"tools are clearer; what is still open is how {_target(calls[0])} relates to the rest. "
        "I should look at it before forming a view, and keep notes of the names that recur: "
        "the state is replaced at each continue point, the recovery decisions are pure "
        "functions, and the tool round answers every call exactly once."
    )


async def build_history(
    target_tokens: int, home: Path, *, root: Path = REPO
) -> tuple[Message, ...]:
    """A history of at least `target_tokens` (stayer's estimate), ending with tool results;
    the tools run in `root` with `home` as HOME."""
    agent = _Agent(root, target_tokens)
    model = ClockedModel(agent.respond, MAX_CALLS)
    params = replace(loop_params(model, root, home), compaction=CompactPolicy(auto=False))
    _, finished = await drive(params, (UserMessage.of_text(PROMPT),))
    if finished.terminal is not Terminal.COMPLETED or finished.result_text != FINAL_TEXT:
        raise BenchmarkError(f"building the history ended {finished.terminal.value}")
    history = finished.messages[:-1]
    if not isinstance(history[-1], UserMessage) or estimate_tokens(history) < target_tokens:
        raise BenchmarkError("the built history does not end with tool results past the target")
    return history


def tool_calls(history: Sequence[Message]) -> Iterator[ToolUseBlock]:
    """Every tool call in `history`, in order."""
    for message in history:
        if isinstance(message, AssistantMessage):
            yield from message.tool_uses


def describe(history: Sequence[Message]) -> dict[str, JSON]:
    """Its size: messages, tool calls by name, characters of tool output, estimated tokens."""
    results = [
        block
        for message in history
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    return {
        "messages": len(history),
        "tool_calls": dict(Counter(call.name for call in tool_calls(history))),
        "tool_result_chars": sum(len(block.text) for block in results),
        "failed_tool_results": sum(block.is_error for block in results),
        "estimated_tokens": estimate_tokens(history),
    }


def notes_for(history: Sequence[Message]) -> str:
    """The summariser's answer: our six headings, filled in from the history's calls."""
    calls = list(tool_calls(history))
    files = dict.fromkeys(str(c.input["file_path"]) for c in calls if c.name == "Read")
    searches = dict.fromkeys(str(c.input["pattern"]) for c in calls if c.name == "Grep")
    commands = dict.fromkeys(str(c.input["command"]) for c in calls if c.name == "Bash")
    return "\n".join(
        [
            "1. Requests:",
            f'- "{PROMPT}" (the only request; no corrections).',
            "2. Decisions:",
            "- Read the code base before changing anything; nothing changed yet.",
            "3. Files and code:",
            *(f"- {path}: read in full; nothing in it is to change yet." for path in files),
            *(f"- searched for {pattern!r}: the matches were read." for pattern in searches),
            *(f"- ran `{command}`: its output informed the reading." for command in commands),
            "4. Errors and fixes:",
            "- None so far.",
            "5. Pending:",
            "- Report what was learnt to the user.",
            "6. Where the work stopped:",
            f"- After {len(calls)} tool calls; the next step is the answer to the user.",
        ]
    )
