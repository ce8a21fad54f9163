"""The loop's frozen parameters and its state, replaced whole at each named continue point."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct, field

from stayer.errors import ModelError
from stayer.events import Continue, Event, ModelUsage, PermissionDenial, PermissionRequested
from stayer.messages import ContentBlock, Message, ModelSpend, StopReason, Usage
from stayer.permissions import Decision
from stayer.providers.base import Effort, Provider, Thinking
from stayer.tools.base import Tool, Toolbox, ToolContext, ToolOutput

from .abort import AbortSignal


class ToolCall(Struct, frozen=True):
    """One validated tool call about to be permission-checked."""

    tool: Tool[Any]
    tool_use_id: str
    input: Any


CanUseTool = Callable[[ToolCall], Awaitable[Decision]]
"""The policy's word on a call: allow, deny, or ask (then `Decide` answers)."""

Decide = Callable[[PermissionRequested], Awaitable[Decision]]
"""Answers a call the policy asks about, allow or deny (a dialog, an SDK callback); supplied
by the session, so the loop never imports a front end."""

PermissionHook = Callable[[PermissionRequested], Awaitable[Decision | None]]
"""Answers a call before anyone is asked (PermissionRequest hooks): allow or deny, or None
when it has no answer and the question goes on to `Decide`."""

StopCheck = Callable[[], Awaitable[str | None]]
"""Runs when the model would stop (SPEC §3.3): returns why the work is not done yet, which goes
back to the model, or None to let the run complete. `--done-when` is one; Stop hooks have a
point of their own (`StopHook`), with their own cap and `continue: false`."""


class StopVerdict(Struct, frozen=True):
    """What the Stop hooks said when the model would stop: `block` is the feedback that sends
    it back to work; `prevent` (a hook's `continue: false`) ends the run with its reason."""

    block: str | None = None
    prevent: str | None = None


StopHook = Callable[[bool, str], Awaitable[StopVerdict]]
"""Runs when the model would stop and the stop checks passed: given whether a Stop hook already
sent the model back in this run (`stop_hook_active`) and the model's last answer."""

AfterTool = Callable[[ToolCall, ToolOutput], Awaitable[ToolOutput]]
"""Runs after each call that ran (PostToolUse hooks): returns its result, as is or added to."""

BeforeCompact = Callable[[Literal["auto", "manual"]], Awaitable[None]]
"""Runs before a summary of the history is made (PreCompact hooks)."""


async def allow_everything(_call: ToolCall) -> Decision:
    """A permission callback that allows every call (bypass mode)."""
    return Decision("allow")


class RetryPolicy(Struct, frozen=True):
    """How the model call retries failures that may pass (SPEC §1.6)."""

    max_retries: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0
    max_retry_after_s: float = 120.0

    def delay(self, attempt: int, error: ModelError) -> float:
        """Seconds to wait before retry `attempt` (1-based): the server's word, or backoff.

        The server's requested wait counts whatever the failure (a 529 or 503 may carry one as
        well as a 429), as Claude Code does; `max_retry_after_s` caps it.
        """
        if error.retry_after is not None:
            return min(float(error.retry_after), self.max_retry_after_s)
        backoff: float = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return backoff * (1 + 0.25 * random.random())


class FallbackModel(Struct, frozen=True):
    """A model the run may switch to when the one serving it stays overloaded
    (`--fallback-model`): who serves it, the id sent, its betas and its output limits."""

    provider: Provider
    model: str
    max_tokens: int
    """Output tokens per call, chosen as for the main model."""
    max_output_tokens: int
    """The most it gives in one reply: a larger limit asked of the run is capped to it."""
    betas: tuple[str, ...] = ()


class CompactPolicy(Struct, frozen=True):
    """When the history is compacted inside a run, and what every compaction keeps."""

    auto: bool = True
    """Whether to summarise the history before a call once it passes the threshold."""
    reactive: bool = True
    """Whether to summarise it when the API refuses the prompt as too long."""
    window: int | None = None
    """The window the threshold is taken from when smaller than the model's (`--autocompact`,
    `CLAUDE_CODE_AUTO_COMPACT_WINDOW`)."""
    percent: int | None = None
    """Compact once this share of the window less the output reserve is used, if that comes
    before the usual threshold (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, 1-100)."""
    pins: tuple[str, ...] = ()
    """The user's pinned notes (`--pin`): in the system prompt, so no compaction touches them.
    The model's own (the `Pin` tool) are in `ToolContext.pins` and every summary carries them."""
    reattach_files: int = 5
    """The most recently read files shown again, as they are now, after a summary..."""
    reattach_file_tokens: int = 5_000
    """... each cut to about this many tokens ..."""
    reattach_total_tokens: int = 50_000
    """... and all of them to this many (Claude Code's figures)."""
    saved_prompts: Path | None = None
    """Where a prompt too large for the window is saved, to be sent as a head and a reference
    (the session's folder); None: such a prompt is not saved."""


class LoopParams(Struct, frozen=True):
    """Everything fixed for one run of the loop."""

    provider: Provider
    model: str
    system_prompt: str
    tools: Toolbox
    tool_context: ToolContext
    can_use_tool: CanUseTool = allow_everything
    decide: Decide | None = None
    """Who answers when `can_use_tool` asks; None (headless): an ask is denied, and the
    decision's reason says how the user could allow it."""
    permission_hook: PermissionHook | None = None
    """Asked first when `can_use_tool` asks (PermissionRequest hooks): its answer stands in
    for `decide`'s; None from it, or no hook, and `decide` is asked."""
    recheck: CanUseTool | None = None
    """The rules alone (no PreToolUse hooks): what an input an answer changed is checked
    against again; None: `can_use_tool`."""
    fallbacks: tuple[FallbackModel, ...] = ()
    """The models to go on with, in order, when the one serving keeps answering overloaded."""
    model_prompt: Callable[[str], str] | None = None
    """The run's system prompt when a fallback serves, given its id (the prompt names the model
    that answers); None: `system_prompt` whoever serves. Calls of another `purpose` (a summary,
    a tool's question) bring a system prompt of their own and keep it."""
    live_model: Callable[[], str] | None = None
    """When set, the main model's id for each call as it starts, in place of `model`: with
    `opusplan`, Opus while the session is in plan mode and `model` (Sonnet) otherwise."""
    abort: AbortSignal = field(default_factory=AbortSignal)
    max_turns: int | None = None
    max_budget_usd: float | None = None
    """The most the run may cost at list prices; checked after each tool round and recovery."""
    max_tokens: int = 32_000
    escalated_max_tokens: int | None = None
    """The larger output limit a cut reply is asked again with, once; None: no escalation."""
    stop_checks: tuple[StopCheck, ...] = ()
    token_budget: int | None = None
    """Output tokens the run should produce at least (`+500k`, `--token-budget`)."""
    repeat_nudge_after: int = 3
    """Rounds in a row of the same calls failing the same way before the model is told so."""
    repeat_stop_after: int = 5
    """... and before the run ends (`repeated_failure`)."""
    max_stop_blocks: int = 3
    """How often the stop checks may send the model back to work before the run ends."""
    stop_hook: StopHook | None = None
    max_hook_blocks: int = 8
    """How many times in a row the Stop hook may send the model back with no tool call in
    between; the next block ends the turn as completed, saying why. 0: no cap."""
    after_tool: AfterTool | None = None
    halted: Callable[[], str | None] | None = None
    """Asked after each tool round: a reason to end the run there (a tool hook said
    `continue: false`; `hook_stopped`), or None."""
    before_compact: BeforeCompact | None = None
    betas: tuple[str, ...] = ()
    thinking: Thinking | None = None
    """Extended thinking for the run's own calls (`--thinking`, `--max-thinking-tokens`);
    None: the model's default."""
    live_thinking: Callable[[bool], Thinking | None] | None = None
    """When set, asked as each of the run's own calls starts, in place of `thinking`, told
    whether the call begins an assistant turn: the session's setting as it is now for one that
    does (the SDK's `set_max_thinking_tokens` changes it mid-run), the turn's own for a call
    that goes on after tool results (the API takes one thinking setting per assistant turn)."""
    effort: Effort | None = None
    """The effort level of the run's own calls (`--effort`); None: the model's default."""
    context_window: int = 200_000
    compaction: CompactPolicy = field(default_factory=CompactPolicy)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_concurrent_tools: int = 10
    purpose: str = "main"
    reminder: Callable[[tuple[Message, ...]], str | None] | None = None
    """Asked before each model call whose conversation (given) ends with a user message: a note
    for the model (what changed in the session since it was last told), added to that message."""
    observe: Callable[[tuple[Message, ...]], None] | None = None
    """Told the conversation whenever it settles (before each model call, before a round of
    tools, at the end), so a transcript can be kept as the run goes."""

    take_queued: Callable[[], tuple[ContentBlock, ...]] | None = None
    """Asked at each model-call boundary (not once the run is interrupted): what the user
    queued while the run went on, which joins the user message the next request ends with; when
    the model would be done, the run goes on with it (`queued_input`). None: nothing is queued."""
    take_spent: Callable[[], tuple[ModelSpend, ...]] | None = None
    """Asked wherever `take_queued` is: model calls made on the run's behalf outside its tool
    calls (subagents it launched in the background that have finished), billed to the run."""
    background: Callable[[], AsyncIterator[Event]] | None = None
    """Work the run launched that is still going (background subagents), asked when the model
    would be done, before the stop checks: its events as they come, until that work is done.
    What the work left for the model then joins the run through `take_queued` (and its spend
    through `take_spent`), and the run goes on with it: the model stopping is not the work
    being done (SPEC §3). None: nothing runs in the background."""
    cost_elsewhere: Callable[[], float] | None = None
    """What else draws on `max_budget_usd` and is not billed to this run yet (for a subagent,
    its parent's and the other subagents' spend; for a parent, its running subagents'),
    counted when the budget is checked. None: nothing."""

    skills_loaded: Callable[[], Sequence[tuple[str, str]]] | None = None
    """The latest rendering of each skill invoked in the conversation (name, text), newest
    first: a summary shows them again, within a budget (`reattach.reattach_skills`). None:
    no skill was ever loaded here."""

    def settled(self, messages: tuple[Message, ...]) -> None:
        """Tell `observe` the conversation as it now stands."""
        if self.observe is not None:
            self.observe(messages)


class LoopState(Struct, frozen=True):
    """What changes from one iteration to the next; never mutated, only replaced."""

    messages: tuple[Message, ...]
    turn_count: int = 1
    usage: Usage = field(default_factory=Usage)
    serving: int = 0
    """Which model answers: 0 the main model, n the n-th of `LoopParams.fallbacks`."""
    model_usage: tuple[ModelUsage, ...] = ()
    """The usage and cost of each model that served, every call priced on its own at the model
    that served it (`fallback.billed`); `usage` is their sum."""
    api_duration_s: float = 0.0
    stop_reason: StopReason | None = None
    denials: tuple[PermissionDenial, ...] = ()
    transition: Continue | None = None
    max_tokens_override: int | None = None
    """The escalated output limit, once a cut reply asked for it (SPEC §3.2)."""
    output_recoveries: int = 0
    malformed_retries: int = 0
    empty_retries: int = 0
    repeat_signature: tuple[str, ...] | None = None
    """What failed in the last tool round, when every call of it failed (see `recovery`)."""
    repeats: int = 0
    budget_mark: int = 0
    """Output tokens spent when the token budget last sent the model back to work."""
    budget_deltas: tuple[int, ...] = ()
    """Output tokens each such continuation added, oldest first."""
    drained: bool = False
    """Old tool output was cleared for a too-long prompt; next time, summarise. Like the flag
    below, it holds until the next ordinary tool round."""
    reactive_compacted: bool = False
    compact_failures: int = 0
    """Automatic compactions that failed in a row (after three, no more are tried)."""
    compacted_at: int | None = None
    """The turn of the last automatic summary."""
    refills: int = 0
    """Summaries in a row that the context filled up again right after (see `compaction`)."""
    prompt_saved: bool = False
    """A prompt too long to send was saved to a file and replaced by its head."""
    context_mark: tuple[int, int] = (0, 0)
    """(tokens the API counted for the last request and its answer, messages it covered)."""
    stop_blocks: int = 0
    """Times the stop checks sent the model back; never reset within a run, so a check that
    can never pass cannot keep it going forever."""
    hook_blocks: int = 0
    """Times in a row the Stop hook sent the model back; a tool round resets it, so a hook
    that makes the model do real work each time is never capped (Claude Code's rule)."""
    refusal_retried: bool = False
    """A refused answer was asked again of the fallback model (`refusal_retry`): once a run."""
    stop_hook_active: bool = False
    """A Stop hook has sent the model back in this run (told to later Stop hooks, which
    should then let it stop); like Claude Code 2.1.88, it stays set for the run."""
