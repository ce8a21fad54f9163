"""A session's parameters in one call: `prepare(options)` resolves (reading files, probing the
machine) and assembles (no I/O) them, for synchronous callers and tests; `Session.open` does the
two apart, the first in a worker thread."""

from __future__ import annotations

from collections.abc import Sequence

from stayer.exec import close_sandbox
from stayer.messages import ContentBlock

from .assemble import Setup, assemble
from .options import QueryOptions
from .resolve import Resolved, resolve


def prepare(options: QueryOptions, prompt: str | Sequence[ContentBlock] = "") -> Setup:
    """Resolve and assemble everything a run needs; raises `ConfigError` with one line if
    something is off."""
    return assembled(resolve(options, prompt))


def assembled(resolved: Resolved) -> Setup:
    """`assemble(resolved)`, removing the sandbox's private /tmp if it fails (a bad value in
    the environment, say), since no session will own it."""
    try:
        return assemble(resolved)
    except BaseException:
        if resolved.sandbox is not None:
            close_sandbox(resolved.sandbox)
        raise
