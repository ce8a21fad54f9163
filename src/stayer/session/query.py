"""`stayer.query()`: one prompt through a session of its own, the simplest way to drive stayer.

It opens a `Session` from the options, submits the prompt, yields `SessionStarted`, every loop
event and `Finished`, and closes what the session opened. A module of its own, above `session`,
so the session never imports it back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing

from stayer.events import Event
from stayer.messages import ContentBlock

from .options import QueryOptions
from .session import Session


async def query(
    prompt: str | Sequence[ContentBlock], *, options: QueryOptions | None = None
) -> AsyncIterator[Event]:
    """Run the agent on `prompt`: a session with one submission. Yields `SessionStarted`,
    every loop event, and `Finished`; closes what it opened.

    Raises `ConfigError` (before any event) when the model, key or options are unusable.
    """
    options = options or QueryOptions()
    async with (
        await Session.open(options) as session,
        aclosing(session.submit(prompt, abort=options.abort)) as events,
    ):
        async for event in events:
            yield event
