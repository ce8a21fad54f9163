"""The error result of a message that got no run says why when the session's driver died."""

from __future__ import annotations

import asyncio

from stayer.session.options import QueryOptions
from stayer.ui.sdk.serve import SdkSession, SdkSettings


async def _failed() -> None:
    raise OSError(28, "No space left on device")


async def test_a_dead_driver_is_the_reason_given() -> None:
    session = SdkSession(QueryOptions(), SdkSettings())
    assert session._no_run() == "the message got no run"  # nothing is known: said as is
    session._driving = asyncio.ensure_future(_failed())
    await asyncio.gather(session._driving, return_exceptions=True)

    assert session._no_run() == (
        "the message got no run: the session failed (OSError: [Errno 28] No space left on device)"
    )
