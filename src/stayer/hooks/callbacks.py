"""Hooks that are async callables rather than shell commands: a program's own code (an
embedder's `QueryOptions.hooks`, or claude-agent-sdk's hooks asked over the control protocol).

A `CallbackMatcher` sits beside the settings' `HookMatcher`s in a session's hooks and is
matched by the same rules; each of its callables gets the input a command hook reads on stdin
(a fresh copy each) and the call's `tool_use_id`, and answers with the object a command hook
prints as JSON, read by the same reader (`continue_`/`async_`, the SDK's Python spellings, are
read as `continue`/`async`). A callback that raises, does not answer within its timeout, or
answers something that is not such an object is a failed hook, as a command that exits 1 is:
one line for the user, and the action goes on, unless its matcher says `on_failure="block"`,
when the failure blocks as exit status 2 does (Stop and SubagentStop excepted, as in Claude
Code: a failure there must not keep the model going forever). Its runs are reported as a
command's are, with the exit status a command ending the same way would have: 0 for an answer
(usable or not), 1 for a callable that raised, none for one stopped at its timeout.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from stayer.config.model import matcher_problem
from stayer.errors import ConfigError

from .reply import HookReply, read_output

HookCallback = Callable[[dict[str, Any], str | None], Awaitable[Mapping[str, Any] | None]]
"""`async def hook(input, tool_use_id) -> dict`: the hook's input (what a command hook reads
on stdin) and the call's id (None for events without one); returns the hook's JSON output
(`{}` says nothing)."""

OnFailure = Literal["continue", "block"]

_NO_BLOCK_ON_FAILURE = frozenset({"Stop", "SubagentStop"})
_PYTHON_SPELLINGS = {"continue_": "continue", "async_": "async"}
_SHOWN_CHARS = 20_000
"""How much of an answer is kept as its text for the user to see (as a command's stdout)."""


class CallbackMatcher(Struct, frozen=True, kw_only=True):
    """Callables to run for the subjects `matcher` selects (empty or `*`: all), as a settings
    `HookMatcher` does for commands. `timeout` is in seconds for each callable (default 60);
    `on_failure="block"` makes a failing callable block instead of being passed over."""

    hooks: tuple[HookCallback, ...]
    matcher: str = ""
    timeout: float | None = None
    on_failure: OnFailure = "continue"

    def __post_init__(self) -> None:
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(
                f"a hook's timeout must be a positive number of seconds, not {self.timeout}"
            )


def check_callbacks(hooks: Mapping[str, object]) -> None:
    """Raise `ConfigError` in one line for `QueryOptions.hooks` that are not event names
    mapped to sequences of `CallbackMatcher`s of callables (found now, not as the event
    fires)."""
    for event, matchers in hooks.items():
        where = f"QueryOptions.hooks[{event!r}]"
        if not isinstance(matchers, Sequence) or isinstance(matchers, str | bytes):
            raise ConfigError(f"{where}: give a list of CallbackMatcher")
        for matcher in matchers:
            if not isinstance(matcher, CallbackMatcher):
                raise ConfigError(f"{where}: {type(matcher).__name__} is not a CallbackMatcher")
            if not all(callable(call) for call in matcher.hooks):
                raise ConfigError(f"{where}: every hook of a CallbackMatcher must be callable")
            if (problem := matcher_problem(matcher.matcher)) is not None:
                raise ConfigError(f"{where}: {problem}")


def callback_name(callback: HookCallback) -> str:
    """How a callable is named in what the user sees: its `hook_name` if it has one (the SDK's
    callback id), else its qualified name."""
    named = getattr(callback, "hook_name", None) or getattr(callback, "__qualname__", None)
    return str(named or type(callback).__name__)


async def call_back(
    callback: HookCallback,
    event: str,
    payload: bytes,
    timeout_s: float,
    on_failure: OnFailure,
) -> HookReply:
    """Run one callable on the event's input (`payload`, the JSON a command would read) and
    read its answer; nothing it does escapes but cancellation."""
    name = callback_name(callback)
    data: dict[str, Any] = json.loads(payload)
    tool_use_id = data.get("tool_use_id")
    base = HookReply(name, "success", exit_code=0)
    try:
        answer = await asyncio.wait_for(
            callback(data, tool_use_id if isinstance(tool_use_id, str) else None), timeout_s
        )
    except TimeoutError:
        said = f"did not answer within {timeout_s:g} s"
        reply = replace(base, outcome="timeout", exit_code=None, message=said)
    except Exception as exc:  # the callable's own fault, or the SDK answered with an error
        reply = replace(base, outcome="error", exit_code=1, message=f"failed: {_said(exc)}")
    else:
        reply = _read_answer(base, answer)
    blocks = on_failure == "block" and event not in _NO_BLOCK_ON_FAILURE
    if blocks and reply.outcome in ("error", "timeout"):
        why = f"{reply.message} (its matcher blocks on failure)"
        return replace(reply, outcome="blocked", message=why)
    return reply


def _read_answer(base: HookReply, answer: object) -> HookReply:
    if not isinstance(answer, Mapping):
        what = "nothing" if answer is None else f"a {type(answer).__name__}"
        return replace(
            base,
            outcome="error",
            message=f"answered {what}, not a JSON object (answer {{}} to say nothing)",
        )
    spelled = {_PYTHON_SPELLINGS.get(str(key), key): value for key, value in answer.items()}
    try:
        text = json.dumps(spelled)
    except (TypeError, ValueError) as exc:  # a value JSON cannot hold, keys that are not text
        return replace(base, outcome="error", message=f"its answer is not JSON data ({exc})")
    except RecursionError:
        return replace(base, outcome="error", message="its answer is nested too deeply to read")
    return read_output(replace(base, stdout=text[:_SHOWN_CHARS]), json.loads(text))


def _said(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
