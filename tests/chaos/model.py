"""The chaos model: the fake server's responder for one session.

It reads each request as a model would (`conversation`), decides the good reply (`agent`: the
next step of its task, the rest of a reply that was cut, the final answer, or the notes the
harness asks for when it compacts), and lets its `Injector` spoil some of them (`faults`). It
keeps a ledger of what it did, for the checks: the faults by kind, and the tool calls that must
never run (those in answers the harness did not receive whole, or whose input was cut).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

from stayer.messages import Usage
from tests.chaos.agent import Task, next_move, summary
from tests.chaos.conversation import conversation, is_summary_request
from tests.chaos.faults import ALL_FAULTS, FaultKind, Injector, possible_faults, spoil
from tests.fakes.model_server import RecordedRequest
from tests.fakes.sse import DEFAULT_USAGE, Block, Reply, Response, Text, ToolCall


@dataclass
class Ledger:
    """What the chaos model did in one session."""

    faults: Counter[FaultKind] = field(default_factory=Counter[FaultKind])
    never_run: set[str] = field(default_factory=set[str])
    """Ids of tool calls that must not run: their answer broke, was refused, or cut them."""
    may_run: set[str] = field(default_factory=set[str])
    requests: int = 0
    summaries: int = 0
    full_context: int = 0
    """Good replies that reported a nearly full context window (so the harness compacts)."""


class ChaosModel:
    """A responder that works through `task`, spoiling replies as `injector` says.

    `work_kinds` are the faults a reply of the work may get (those that make sense for it),
    `summary_kinds` those a summary request may get; `spare_steps` leaves the first
    steps unspoiled (a fault that should hit only later in the run); `full_context` is the
    share of good replies reporting `window_tokens` of input, which makes the harness compact
    before its next call.

    A prompt refused as too long is not refused again before a good reply, unless
    `refuse_again`: the harness answers a refusal by making the prompt as short as it can (old
    output cleared, or the history summarised), and a real server refuses a prompt for its
    size, not at random. Refusing what is left is the unrecoverable run's business.
    """

    def __init__(
        self,
        task: Task,
        injector: Injector,
        *,
        seed: str,
        work_kinds: tuple[FaultKind, ...] = ALL_FAULTS,
        summary_kinds: tuple[FaultKind, ...] = (),
        spare_steps: int = 0,
        full_context: float = 0.0,
        window_tokens: int = 0,
        refuse_again: bool = False,
    ) -> None:
        self.task = task
        self.injector = injector
        self.work_kinds = work_kinds
        self.summary_kinds = summary_kinds
        self.spare_steps = spare_steps
        self.full_context = full_context
        self.window_tokens = window_tokens
        self.refuse_again = refuse_again
        self.refused = False
        self.ledger = Ledger()
        self._rng = random.Random(f"{seed}/spoil")
        self._ids = itertools.count(1)

    def __call__(self, request: RecordedRequest) -> Response:
        """Answer one request (runs on the fake server's thread)."""
        self.ledger.requests += 1
        assert request.protocol is not None
        turns = conversation(request)
        if is_summary_request(request):
            self.ledger.summaries += 1
            good = Reply((Text(summary(self.task, turns[-1].text)),))
            return self._answer(good, request, self.summary_kinds)[0]
        move = next_move(self.task, turns)
        blocks: list[Block] = [Text(move.text)] if move.text else []
        if move.step is not None:
            call_id = f"toolu_chaos_{self.task.id}_{next(self._ids)}"
            blocks.append(ToolCall(call_id, move.step.name, move.step.input))
        good = Reply(tuple(blocks), usage=self._usage())
        spared = move.step is not None and move.step.number <= self.spare_steps
        held_back = () if self.refuse_again or not self.refused else ("prompt_too_long",)
        allowed = tuple(
            kind
            for kind in ([] if spared else possible_faults(good))
            if kind in self.work_kinds and kind not in held_back
        )
        answer, kind = self._answer(good, request, allowed)
        # The shortened prompt stands until a good reply moves the work on; a retry after
        # another fault sends the same prompt.
        self.refused = kind == "prompt_too_long" or (self.refused and kind is not None)
        return answer

    def _answer(
        self, good: Reply, request: RecordedRequest, possible: tuple[FaultKind, ...]
    ) -> tuple[Response, FaultKind | None]:
        calls = {block.id for block in good.blocks if isinstance(block, ToolCall)}
        kind = self.injector.choose(possible)
        if kind is None:
            self.ledger.may_run |= calls
            return good, None
        assert request.protocol is not None
        spoiled = spoil(kind, good, request.protocol, self._rng, request.model)
        self.ledger.faults[kind] += 1
        if spoiled.calls_may_run:
            self.ledger.may_run |= calls
        else:
            self.ledger.never_run |= calls
        return spoiled.response, kind

    def _usage(self) -> Usage:
        if self.full_context and self._rng.random() < self.full_context:
            self.ledger.full_context += 1
            return Usage(input_tokens=self.window_tokens, output_tokens=DEFAULT_USAGE.output_tokens)
        return DEFAULT_USAGE
