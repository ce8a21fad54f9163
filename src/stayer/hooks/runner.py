"""Running an event's hooks: the handlers its matchers select, side by side, each with the
event as JSON on stdin and under its own timeout, through `exec` (own process group, killed
whole at the timeout).

Every run is reported as a `HookRan` to the callback the session gives, and read into a
`HookReply`; none of what a hook can do (crash, hang, print garbage, fail to start) escapes
as an exception. `command` handlers run, and beside them the callables of `CallbackMatcher`s
(`callbacks`: a program's own hooks), selected and read the same way; Claude Code's `prompt`,
`agent` and `http` kinds load and are left out with a warning (`unsupported`).

The default timeout is 60 s, not Claude Code's 10 minutes: a hook stands between the model and
every tool call, and one that hangs should cost a minute, not ten; `timeout` sets it per hook.
A hook's environment is stayer's without its credentials (`stayer.exec.child_env`), with
`CLAUDE_PROJECT_DIR`, and for a plugin's hook its folder as `CLAUDE_PLUGIN_ROOT`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from msgspec import Struct

from stayer.config.model import HookHandler, HookMatcher, PluginHookHandler
from stayer.events import HookRan
from stayer.exec import run_command
from stayer.exec.child_env import child_env

from .callbacks import CallbackMatcher, HookCallback, OnFailure, call_back, callback_name
from .match import matches
from .reply import HookReply, Verdict, read_reply

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "PermissionRequest",
]
"""The events stayer fires (SubagentStart and SubagentStop as subagents start and end;
PermissionRequest when a call would be put to a person, before anyone is asked)."""

EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)

DEFAULT_TIMEOUT_S = 60.0
MAX_HOOK_OUTPUT_CHARS = 20_000
"""How much of each stream of a hook's output is kept (start and end)."""


class HookBase(Struct, frozen=True):
    """What every hook input carries, and where and with what environment hooks run."""

    session_id: str
    transcript_path: str
    cwd: Path
    env: Mapping[str, str]
    permission_mode: Callable[[], str]
    """Asked at each run: the mode in force then (an accepted plan or a switch changes it)."""


AnyMatcher = HookMatcher | CallbackMatcher
"""A settings matcher (commands) or a program's (callables)."""


class _Handler(Struct, frozen=True):
    command: str
    timeout_s: float
    env: Mapping[str, str]
    """Variables of this handler's own (a plugin's hook gets its `CLAUDE_PLUGIN_ROOT`)."""


class _Callback(Struct, frozen=True):
    call: HookCallback
    timeout_s: float
    on_failure: OnFailure

    @property
    def command(self) -> str:
        return callback_name(self.call)


def _own_env(handler: HookHandler) -> dict[str, str]:
    if isinstance(handler, PluginHookHandler):
        return {"CLAUDE_PLUGIN_ROOT": handler.plugin_root}
    return {}


def _handlers(matcher: AnyMatcher) -> list[tuple[object, _Handler | _Callback]]:
    """A matcher's runnable handlers, each with what makes it the same as another."""
    if isinstance(matcher, CallbackMatcher):
        timeout = matcher.timeout or DEFAULT_TIMEOUT_S
        return [
            (("callback", id(call)), _Callback(call, timeout, matcher.on_failure))
            for call in matcher.hooks
        ]
    return [
        (
            handler.command,
            _Handler(handler.command, handler.timeout or DEFAULT_TIMEOUT_S, _own_env(handler)),
        )
        for handler in matcher.hooks
        if handler.type == "command" and handler.command
    ]


class HookRunner:
    """The hooks of one session, by event; `run` fires one event."""

    def __init__(
        self,
        hooks: Mapping[str, Sequence[AnyMatcher]],
        base: HookBase,
        report: Callable[[HookRan], None],
    ) -> None:
        self.hooks = hooks
        self.base = base
        self.report = report

    def _selected(self, event: HookEvent, subject: str | None) -> list[_Handler | _Callback]:
        """The handlers the matchers select, in the matchers' order, each command once (Claude
        Code runs an identical command once however many matchers name it), and each callable
        once."""
        found: dict[object, _Handler | _Callback] = {}
        for matcher in self.hooks.get(event, ()):
            if matches(matcher.matcher or "", subject):
                found.update((key, one) for key, one in _handlers(matcher) if key not in found)
        return list(found.values())

    async def run(
        self, event: HookEvent, fields: Mapping[str, Any], *, subject: str | None = None
    ) -> Verdict:
        """Fire `event` with its own `fields` (beside the common ones); the selected hooks run
        side by side and the verdict holds every reply."""
        handlers = self._selected(event, subject)
        if not handlers:
            return Verdict()
        payload = {
            "session_id": self.base.session_id,
            "transcript_path": self.base.transcript_path,
            "cwd": str(self.base.cwd),
            "permission_mode": self.base.permission_mode(),
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload).encode()
        name = f"{event}:{subject}" if subject else event
        replies = await asyncio.gather(*(self._one(event, name, h, data) for h in handlers))
        return Verdict(tuple(replies))

    async def _one(
        self, event: HookEvent, name: str, handler: _Handler | _Callback, data: bytes
    ) -> HookReply:
        started = time.monotonic()
        if isinstance(handler, _Callback):
            reply = await call_back(
                handler.call, event, data, handler.timeout_s, handler.on_failure
            )
        else:
            reply = await self._command(handler, data)
        self.report(
            HookRan(
                hook_id=str(uuid.uuid4()),
                hook_event=event,
                hook_name=name,
                command=handler.command,
                exit_code=reply.exit_code,
                duration_ms=(time.monotonic() - started) * 1000,
                outcome=reply.outcome,
                message=reply.message,
                stdout=reply.stdout,
                stderr=reply.stderr,
            )
        )
        return reply

    async def _command(self, handler: _Handler, data: bytes) -> HookReply:
        cwd = str(self.base.cwd)
        env = child_env({**self.base.env, "CLAUDE_PROJECT_DIR": cwd, **handler.env})
        try:
            result = await run_command(
                handler.command,
                cwd=self.base.cwd,
                env=env,
                timeout_s=handler.timeout_s,
                max_output_chars=MAX_HOOK_OUTPUT_CHARS,
                input=data,
            )
        except Exception as exc:  # it could not start (no shell, the folder went away)
            return HookReply(handler.command, "error", message=f"could not start: {exc}")
        return read_reply(handler.command, result, handler.timeout_s)


def unsupported(hooks: Mapping[str, Sequence[AnyMatcher]]) -> list[str]:
    """Warnings for what loads but does not run: unknown events, handlers other than commands."""
    notes: list[str] = []
    for event, matchers in hooks.items():
        if event not in EVENTS:
            notes.append(f"hooks: stayer does not fire {event} events; its hooks will not run")
            continue
        kinds = {
            h.type
            for m in matchers
            if isinstance(m, HookMatcher)
            for h in m.hooks
            if h.type != "command"
        }
        for kind in sorted(kinds):
            notes.append(f'hooks: {event} has "{kind}" hooks, which stayer does not run')
    return notes
