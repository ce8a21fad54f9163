"""A hook script for tests and a project that installs it: each run appends its stdin JSON to
a log, then does what its arguments say (exit 0, print JSON, block, fail, crash, wait for a
sibling)."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import stayer
from stayer.events import Event, Finished
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.scripted import Reply
from stayer.session.listings import is_listing
from stayer.session.options import QueryOptions

SCRIPT = r"""
import json, os, pathlib, sys, time
data = json.load(sys.stdin)
log, mode = sys.argv[1], sys.argv[2]
arg = sys.argv[3] if len(sys.argv) > 3 else ""
with open(log, "a") as f:
    f.write(json.dumps(data) + "\n")
if mode == "json":
    print(arg)
elif mode == "print":
    print(arg)
elif mode == "block":
    print(arg, file=sys.stderr)
    sys.exit(2)
elif mode == "fail":
    print(arg, file=sys.stderr)
    sys.exit(1)
elif mode == "crash":
    raise RuntimeError("the hook broke")
elif mode == "garbage":
    print("{this is not json")
elif mode == "block-unless-active":
    if not data.get("stop_hook_active"):
        print("run the tests first", file=sys.stderr)
        sys.exit(2)
elif mode == "meet":
    # start, then wait for the sibling to have started too: only side by side do both end
    mine, theirs = arg.split(",")
    pathlib.Path(mine).touch()
    for _ in range(1000):
        if pathlib.Path(theirs).exists():
            break
        time.sleep(0.01)
    else:
        sys.exit(1)
"""


@dataclass
class Kit:
    """A project folder, its hook script, the log every run appends to, and the env."""

    project: Path
    script: Path
    log: Path
    env: dict[str, str]

    def command(self, mode: str, arg: str = "") -> str:
        words = [sys.executable, str(self.script), str(self.log), mode]
        return shlex.join([*words, arg] if arg else words)

    def install(self, hooks: dict[str, list[dict[str, Any]]], **more: Any) -> None:
        """Write `.claude/settings.json` with these hooks."""
        path = self.project / ".claude" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": hooks, **more}, indent=2))

    def inputs(self) -> list[dict[str, Any]]:
        """Every hook input so far, in the order the runs wrote them."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def of(self, event: str) -> list[dict[str, Any]]:
        return [data for data in self.inputs() if data["hook_event_name"] == event]


def kit(tmp_path: Path) -> Kit:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "user-stayer").mkdir()
    (tmp_path / "user-claude").mkdir()
    script = tmp_path / "hook.py"
    script.write_text(SCRIPT)
    env = {
        "STAYER_CONFIG_DIR": str(tmp_path / "user-stayer"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "user-claude"),
        "PATH": "/usr/bin:/bin",
    }
    return Kit(project, script, tmp_path / "hooks.log", env)


def hook(command: str, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    """One matcher entry with one command."""
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    return {"matcher": matcher, "hooks": [handler]}


async def run(
    kit: Kit, steps: list[Reply], prompt: str = "go", **options: Any
) -> tuple[list[Event], stayer.ScriptedProvider]:
    model = stayer.ScriptedProvider(steps)
    opts = QueryOptions(
        cwd=kit.project, env=kit.env, provider=model, persist_session=False, **options
    )
    events = [event async for event in stayer.query(prompt, options=opts)]
    assert isinstance(events[-1], Finished)
    return events, model


def results(finished: Event) -> list[tuple[str, bool]]:
    """Each tool result's text and error flag."""
    assert isinstance(finished, Finished)
    return [
        (text_of(block), block.is_error)
        for message in finished.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


def text_of(block: ToolResultBlock) -> str:
    return "".join(part.text for part in block.content if isinstance(part, TextBlock))


def user_texts(finished: Event) -> list[str]:
    """The user text blocks of the conversation, in order."""
    assert isinstance(finished, Finished)
    return [
        block.text
        for message in finished.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, TextBlock) and not is_listing(block.text)  # the session's own
    ]
