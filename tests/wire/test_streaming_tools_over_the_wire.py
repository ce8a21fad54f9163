"""Over real HTTP: a tool call starts while its answer is still streaming, and the loop acts on
`message_stop` rather than waiting for the server to end the body (which it then reads to the end
in the background, so the connection is reused)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stayer.events import Event, Finished, MessageCompleted, Terminal
from stayer.events import ToolCallStarted as Started
from stayer.loop.run import query
from stayer.messages import UserMessage
from stayer.providers.anthropic import AnthropicProvider
from tests.fakes.loop_harness import make_params
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, ToolCall, anthropic_ping, anthropic_stream, reply
from tests.fakes.tools import Echo

PATIENCE_S = 5.0


class Watch:
    """The events of a run in the background, and a way to wait for one of them."""

    def __init__(self, events: AsyncIterator[Event]) -> None:
        self.events: list[Event] = []
        self._new = asyncio.Event()
        self.task = asyncio.create_task(self._collect(events))

    async def _collect(self, events: AsyncIterator[Event]) -> None:
        async for event in events:
            self.events.append(event)
            self._new.set()

    async def until(self, kind: type[Event]) -> Event:
        """The first event of `kind`, once it has come."""
        async with asyncio.timeout(PATIENCE_S):
            while True:
                found = next((e for e in self.events if isinstance(e, kind)), None)
                if found is not None:
                    return found
                self._new.clear()
                await self._new.wait()

    async def finished(self) -> Finished:
        await asyncio.wait_for(self.task, PATIENCE_S)
        last = self.events[-1]
        assert isinstance(last, Finished)
        return last


@pytest.fixture
async def provider(server: FakeModelServer) -> AsyncIterator[AnthropicProvider]:
    client = AnthropicProvider(api_key="test-key", base_url=server.url, read_timeout_s=5.0)
    yield client
    await client.aclose()


def run(provider: AnthropicProvider, tmp_path: Path) -> Watch:
    params = make_params(provider, [Echo()], tmp_path)
    return Watch(query(params, (UserMessage.of_text("go"),)))


async def test_a_call_starts_before_the_rest_of_its_answer_has_streamed(
    server: FakeModelServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    answer = anthropic_stream(
        ToolCall("toolu_1", "Echo", {"text": "early"}), Text("More words after the call.")
    )
    # the server holds everything after the call's block until the test lets it go
    held = answer.index_of("content_block_stop") + 1
    server.enqueue(answer.paused(at=held), reply("Done."))
    watch = run(provider, tmp_path)

    started = await watch.until(Started)  # with the rest of the answer still held back
    assert isinstance(started, Started) and started.tool_use_id == "toolu_1"
    assert not any(isinstance(e, MessageCompleted) for e in watch.events)
    server.resume()
    end = await watch.finished()
    assert end.terminal is Terminal.COMPLETED
    assert len(server.requests) == 2


async def test_the_loop_acts_on_message_stop_not_on_the_end_of_the_body(
    server: FakeModelServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    whole = anthropic_stream(Text("All done."))
    last = len(whole.frames)
    # the server keeps the body open after message_stop (a keep-alive it sends only once the
    # test resumes it), as a server slow to close its stream does
    server.enqueue(whole.with_frame(last, anthropic_ping()).paused(at=last), reply("Again."))
    first = run(provider, tmp_path)

    end = await first.finished()  # while the body is still open
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "All done.")
    assert server.abandoned == []  # nobody gave up on the body to get here
    server.resume()
    second = await run(provider, tmp_path).finished()
    assert second.result_text == "Again."
    assert server.abandoned == []  # it was read to its end before the next call went out
