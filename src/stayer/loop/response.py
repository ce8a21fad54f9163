"""One streamed response: what it left behind, and what the loop keeps of it when it breaks.

`stream_response` relays the model's stream and, alongside it, the events of the tool calls the
executor starts as their blocks complete (SPEC §1.4; see `executor`). `Response` is what the
stream left: the assembled blocks, the calls, the failure if any, and an answer held back until
recovery has decided on it. An answer that breaks off after some of its calls started cannot be
sent again (they would run twice) nor dropped (their effects would go unexplained):
`go_on_from_what_ran` keeps it up to its last started call, and the loop goes on from what ran.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from functools import partial

from msgspec import Struct, field
from msgspec.structs import replace

from stayer.errors import PromptTooLong, StayerError
from stayer.events import (
    BlockCompleted,
    Event,
    MessageCompleted,
    MessageStarted,
    PartialKept,
    StreamEvent,
    Terminal,
    Withdrawn,
)
from stayer.messages import AssistantMessage, ToolUseBlock, Usage, is_blank_text
from stayer.providers.base import MessageAssembler

from .executor import Executor
from .recovery import INCOMPLETE, Finish, RunTools, failed_call, prompt_too_long, refusal_end
from .state import LoopParams, LoopState
from .turn import TurnResult, stream_turn

BROKEN_TEXT = (
    "[Your reply above broke off after its tool calls had started ({why}). Those calls ran, "
    "and their results are above; nothing you wrote after them came through. Go on from here: "
    "make again any call that is still needed, without repeating what already ran.]"
)


def go_on_from_what_ran(state: LoopState, stream: Response) -> tuple[RunTools, PartialKept]:
    """An answer that broke off after some of its calls had started cannot be sent again (they
    would run twice) nor dropped (their effects would go unexplained): it is kept up to its last
    started call, only those calls run, and the model goes on from their results, told what
    happened; when the failure was final, the run ends after them. Also the event that says
    what was kept, and why."""
    broke = stream.turn.broke
    if broke is not None:
        why = str(broke)
        then = Finish(Terminal.MODEL_ERROR, why, broke.status) if stream.turn.final else None
    elif stream.failure is not None or stream.turn.message is None:
        then = stream.failure or INCOMPLETE
        why = then.message
    elif stream.turn.message.stop_reason == "refusal":  # what ran is answered, then it ends
        why = "the model declined to go on (stop_reason refusal)"
        then = refusal_end(stream.turn.message)
    else:
        why, then = "the answer reached the end of the model's context window", None
    stream.executor.keep_started()
    messages = state.messages
    if messages and messages[-1] is stream.turn.message:
        messages = messages[:-1]  # taken whole by `_account`: only its start stays
    kept = started_part(stream)
    state = replace(state, messages=(*messages, kept))
    return RunTools(state, broken=BROKEN_TEXT.format(why=why), then=then), PartialKept(kept, why)


def started_part(stream: Response, starting: str | None = None) -> AssistantMessage:
    """The answer so far up to its last started call (or `starting`, about to start), without
    blank text: what the conversation must hold of it. The calls before that one all started,
    or were held as invalid (those get their error as their result): a valid call waits only
    behind another, so none that never started comes before a started one."""
    started = {*stream.executor.round.started, *([starting] if starting else [])}
    blocks = [stream.assembler.blocks[i] for i in sorted(stream.assembler.blocks)]
    ran = [i for i, b in enumerate(blocks) if isinstance(b, ToolUseBlock) and b.id in started]
    kept = tuple(block for block in blocks[: ran[-1] + 1 if ran else 0] if not is_blank_text(block))
    return replace(stream.assembler.message(), content=kept)


class Response(Struct):
    """What one streamed response left behind, and the executor running its calls (filled in
    as it streams by `stream_response`, a generator, which cannot return it)."""

    executor: Executor
    turn: TurnResult = field(default_factory=TurnResult)
    assembler: MessageAssembler = field(default_factory=MessageAssembler)
    needs_follow_up: bool = False
    failure: Finish | None = None
    spent: list[Usage] = field(default_factory=list[Usage])
    """The tokens of each attempt that was abandoned and retried (each a request of its own)."""
    held: MessageCompleted | None = None
    """The completion of an answer recovery may drop, withheld until it has decided, so a
    reader is not shown an answer the loop then takes back (see `_release`)."""

    @property
    def complete_message(self) -> AssistantMessage | None:
        return None if self.failure is not None else self.turn.message

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return self.executor.round.tool_uses

    def follow(self, params: LoopParams, event: Event) -> None:
        """Take one event of the stream into account, as it streams (SPEC §1.4): a tool call
        is noted, and handed to the executor, the moment its block completes."""
        if isinstance(event, Withdrawn | PartialKept):  # what follows is a new answer
            self.spent.append(self.assembler.usage)
            self.assembler = MessageAssembler()
            self.executor.discard()
            self.needs_follow_up = False
            return
        if isinstance(event, StreamEvent) and not isinstance(event, MessageCompleted):
            self.assembler.feed(event)
        if isinstance(event, MessageStarted):
            params.tools.preload()  # the request is out: load the tools while it is answered
        elif isinstance(event, BlockCompleted) and isinstance(event.block, ToolUseBlock):
            self.needs_follow_up = True
            self.executor.add(event.block)


async def stream_response(
    params: LoopParams, state: LoopState, stream: Response
) -> AsyncGenerator[Event, None]:
    """Relay one response, and the events of the calls it starts as their blocks complete."""
    stream.turn.committed = lambda: stream.executor.started_any

    def on_record(starting: str) -> None:  # a call is on record before it runs
        params.settled((*state.messages, *stream.turn.kept, started_part(stream, starting)))

    stream.executor.before_start = on_record
    try:
        source = stream_turn(
            params,
            state.messages,
            params.tools.specs,
            stream.turn,
            max_tokens=state.max_tokens_override,
            serving=state.serving,
            resume=True,
        )
        relayed = stream.executor.alongside(source, partial(stream.follow, params))
        async with aclosing(relayed) as events:
            async for event in events:
                if isinstance(event, MessageCompleted) and may_withdraw(event.message):
                    stream.held = event
                    continue
                yield event
    except PromptTooLong as error:
        # Compaction will recover from this first (SPEC §3.1); until then it ends the run.
        stream.failure = prompt_too_long(str(error), error.status)
        return
    except StayerError as error:
        stream.failure = failed_call(error)
        return
    except Exception as error:  # a bug below us still ends the run with a Finished event
        detail = f"internal error in the model call: {type(error).__name__}: {error}"
        stream.failure = Finish(Terminal.MODEL_ERROR, detail)
        return


def may_withdraw(message: AssistantMessage) -> bool:
    """Whether recovery may drop or change this answer: a cut reply, a refused one, or an empty
    one."""
    if message.stop_reason in ("max_tokens", "model_context_window_exceeded", "refusal"):
        return True  # even with tool calls: one cut in its input may send the whole reply back
    if message.tool_uses:
        return False
    return message.stop_reason == "tool_use" or not message.text.strip()
