"""The SDK's end of a control channel in tests: every frame stayer writes, in order, with a way
to wait for the next one."""

from __future__ import annotations

import asyncio

from stayer.ui.sdk.control import Frame


class Wire:
    """A `ControlChannel`'s `write`: keeps each frame; `next()` waits for the next unread one."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.changed = asyncio.Event()

    def __call__(self, frame: Frame) -> None:
        self.frames.append(frame)
        self.changed.set()

    async def next(self) -> Frame:
        while not self.frames:
            self.changed.clear()
            await self.changed.wait()
        return self.frames.pop(0)
