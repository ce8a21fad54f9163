"""Where the settings' hooks meet a session: the callables the loop gets, and the session's
own points (a prompt going in, the session starting and ending).

* PreToolUse wraps the run's permission check: a hook's block (exit 2) or `deny` denies the
  call with its word; `updatedInput` is validated by the tool's input model and the call runs
  with it; `allow` answers what the mode would have asked a person, but deny rules, ask rules
  and protected paths still stand (as in Claude Code, where a hook's allow skips the prompt,
  not the rules); `ask` leaves the call to the rules.
* PermissionRequest answers a call in the person's place before anyone is asked
  (`permission_request`).
* Notification hooks hear that a person is asked now (the question goes out, as no
  PermissionRequest hook answered it), or of a call denied for want of someone to approve it
  (in a headless run nobody is asked; the denial is where Claude Code would show its dialog).
  Nothing else notifies: a changed input checked again, or a skill's command nobody is asked
  about, asks nobody.
* PostToolUse (PostToolUseFailure for a failed call) runs before the result is final: a block
  and any `additionalContext` (PreToolUse's too) are added to what the model reads.
* A `continue: false` from a tool hook ends the run after its tool round (`hook_stopped`).
* Stop runs when the model would stop (the loop's `stop_hook`); a block sends the model back,
  at most `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` (default 8, 0: no cap) times in a row with no
  tool call between, as in Claude Code; past that the run ends as `stop_hook_prevented` with
  the hook's last words (Claude Code ends it as completed). PreCompact runs before a summary.
* UserPromptSubmit runs before a prompt goes in: a block keeps it out and says why; plain
  stdout and `additionalContext` go in with it. SessionStart (source `startup` or `resume`)
  runs before the first prompt and its context goes in with that prompt; SessionEnd (reason
  `other`) when the session closes.

Every run becomes a `HookRan`, collected here and yielded by the session before the next
event (`drain`), so it shows where it happened; SessionEnd's are yielded by `Session.end()`,
after the last submission's events (a session closed without it runs them unreported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.events import HookRan, PermissionRequested
from stayer.hooks import HookBase, HookEvent, HookRunner, Verdict
from stayer.hooks.runner import AnyMatcher
from stayer.loop.recovery import BLOCK_CAP_VARIABLE
from stayer.loop.state import CanUseTool, LoopParams, PermissionHook, StopVerdict, ToolCall
from stayer.messages import JSON, TextBlock
from stayer.permissions import Decision
from stayer.tools.base import ToolInputError, ToolOutput

if TYPE_CHECKING:
    from .permission_request import PermissionHost

DEFAULT_BLOCK_CAP = 8
_TOOL_EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


class SessionHooks:
    """The hooks of one session, and what they have said in the run going on."""

    def __init__(
        self, hooks: Mapping[str, Sequence[AnyMatcher]], base: HookBase, *, subagent: bool = False
    ) -> None:
        self._ran: list[HookRan] = []
        self.runner = HookRunner(hooks, base, self._ran.append)
        self.hooks = hooks
        self._halt: str | None = None
        self._context: dict[str, list[str]] = {}
        self.subagent = subagent
        """A subagent's session: where the session's own would fire Stop, it fires
        SubagentStop (with `agent`), as Claude Code does."""
        self.agent: dict[str, JSON] = {}
        """Who the subagent is, for its SubagentStop input (`as_subagent`)."""
        self.host: PermissionHost | None = None
        """What PermissionRequest hooks' answers act on (the session's rules, mode and run);
        without it they are not wired."""

    def as_subagent(self, parent: HookBase, agent_id: str, agent_type: str, path: str) -> None:
        """Make these a subagent's hooks: their input names the session that started it (its
        id and transcript), and SubagentStop names the agent and its own transcript."""
        self.runner.base = replace(
            self.runner.base, session_id=parent.session_id, transcript_path=parent.transcript_path
        )
        self.agent = {"agent_id": agent_id, "agent_type": agent_type, "agent_transcript_path": path}

    async def subagent_started(self, agent_id: str, agent_type: str) -> None:
        """SubagentStart, as a subagent of this session starts (its matcher: the agent type)."""
        if self.configured("SubagentStart"):
            fields = {"agent_id": agent_id, "agent_type": agent_type}
            await self.runner.run("SubagentStart", fields, subject=agent_type)

    def configured(self, *events: HookEvent) -> bool:
        """Whether the settings give handlers for any of `events`."""
        return any(self.hooks.get(event) for event in events)

    def drain(self) -> list[HookRan]:
        """The runs reported since the last call, oldest first."""
        ran, self._ran[:] = list(self._ran), []
        return ran

    def wire(self, params: LoopParams) -> LoopParams:
        """`params` with the loop's hook points filled in for the events that have hooks."""
        if self.configured("PreToolUse"):
            # an answer's changed input is checked against the rules again, not the hooks
            rules = params.recheck or params.can_use_tool
            check = self.permission_check(params.can_use_tool)
            params = replace(params, can_use_tool=check, recheck=rules)
        if self.configured("PermissionRequest", "Notification"):
            params = replace(params, permission_hook=self._before_asking())
        if self.configured(*_TOOL_EVENTS):
            params = replace(params, after_tool=self.after_tool, halted=self.halted)
        if self.configured("SubagentStop" if self.subagent else "Stop"):
            cap = block_cap(self.runner.base.env)
            params = replace(params, stop_hook=self.stop, max_hook_blocks=cap)
        if self.configured("PreCompact"):
            params = replace(params, before_compact=self.before_compact)
        return params

    def begin_run(self) -> None:
        """A new submission: what tool hooks said in the last one no longer holds."""
        self._halt = None
        self._context.clear()

    def halted(self) -> str | None:
        """Why a tool hook said `continue: false` in this run, or None."""
        return self._halt

    def _heed(self, verdict: Verdict) -> None:
        stop = verdict.stop
        if stop is not None and self._halt is None:
            self._halt = stop or "A hook stopped the run (continue: false)."

    def _before_asking(self) -> PermissionHook:
        """What runs as a call is about to be put to a person: PermissionRequest hooks, which
        may answer in the person's place; when none does, Notification hooks (the question
        goes out, or in a headless run the call is denied for want of someone to ask)."""
        answers = None
        if self.configured("PermissionRequest") and self.host is not None:
            from .permission_request import PermissionRequests

            answers = PermissionRequests(self.runner, self._ran.append, self.host)

        async def before_asking(request: PermissionRequested) -> Decision | None:
            answer = None if answers is None else await answers(request)
            if answer is None:
                await self._notify(request.reason)
            return answer

        return before_asking

    def permission_check(self, inner: CanUseTool) -> CanUseTool:
        """`inner` with PreToolUse hooks before it."""

        async def can_use_tool(call: ToolCall) -> Decision:
            verdict = await self._pre_tool(call)
            refused = _refusal(call, verdict)
            if refused is not None:
                return refused
            rewritten, problem = _rewritten(call, verdict.updated_input)
            if problem is not None:
                return Decision("deny", problem)
            decision = await inner(rewritten)
            word = verdict.permission
            if word is not None and word[0] == "ask" and decision.behavior == "allow":
                # as in Claude Code, a hook's ask puts the call to a person whatever the rules
                # allow (headless, nobody answers, so it is denied with the hook's words)
                reason = word[1] or f"A PreToolUse hook wants this {call.tool.name} call approved."
                decision = Decision("ask", reason, question="rule", by="hook")
            asked = decision.behavior == "ask"
            if word is not None and word[0] == "allow" and asked and decision.question == "mode":
                decision = Decision("allow", by="hook")  # it answers what the mode would ask
            if rewritten is not call and verdict.updated_input is not None:
                decision = replace(decision, updated_input=dict(verdict.updated_input))
            return decision

        return can_use_tool

    async def _pre_tool(self, call: ToolCall) -> Verdict:
        name = call.tool.name
        fields = {
            "tool_name": name,
            "tool_input": tool_input(call),
            "tool_use_id": call.tool_use_id,
        }
        verdict = await self.runner.run("PreToolUse", fields, subject=name)
        self._heed(verdict)
        context = verdict.context()
        if context:
            self._context.setdefault(call.tool_use_id, []).extend(context)
        return verdict

    async def _notify(self, message: str) -> None:
        if self.configured("Notification"):
            fields = {"message": message, "notification_type": "permission_prompt"}
            await self.runner.run("Notification", fields, subject="permission_prompt")

    async def after_tool(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        """PostToolUse (or PostToolUseFailure) for a call that ran: its result with what the
        hooks add (a block's word, context) after it."""
        name = call.tool.name
        event: HookEvent = "PostToolUseFailure" if output.is_error else "PostToolUse"
        fields: dict[str, Any] = {
            "tool_name": name,
            "tool_input": tool_input(call),
            "tool_use_id": call.tool_use_id,
        }
        if output.is_error:
            fields["error"] = _text(output)
        else:
            fields["tool_response"] = dict(output.data) or _text(output)
        verdict = await self.runner.run(event, fields, subject=name)
        self._heed(verdict)
        notes = self._context.pop(call.tool_use_id, [])
        if verdict.blocks:
            notes.append(f"{event} hook blocking error:\n" + "\n".join(verdict.blocks))
        notes.extend(verdict.context())
        return _added(output, notes)

    async def stop(self, active: bool, last_message: str) -> StopVerdict:
        """The Stop hooks' verdict when the model would stop (a subagent's SubagentStop
        hooks', matched on its type)."""
        fields: dict[str, JSON] = {
            "stop_hook_active": active,
            "last_assistant_message": last_message,
        }
        if self.subagent:
            agent_type = str(self.agent.get("agent_type", ""))
            fields = {**self.agent, **fields}
            verdict = await self.runner.run("SubagentStop", fields, subject=agent_type)
        else:
            verdict = await self.runner.run("Stop", fields)
        blocks = "\n".join(verdict.blocks)
        return StopVerdict(block=blocks or None, prevent=verdict.stop)

    async def before_compact(self, trigger: Literal["auto", "manual"]) -> None:
        """PreCompact, before a summary (what the hooks say does not stop it)."""
        fields = {"trigger": trigger, "custom_instructions": None}
        await self.runner.run("PreCompact", fields, subject=trigger)

    async def prompt_submitted(self, prompt: str) -> tuple[str | None, tuple[str, ...]]:
        """UserPromptSubmit: why the prompt is refused (None: it goes in), and the context to
        add to it."""
        if not self.configured("UserPromptSubmit"):
            return None, ()
        verdict = await self.runner.run("UserPromptSubmit", {"prompt": prompt})
        if verdict.blocks:
            return "UserPromptSubmit operation blocked by hook:\n" + "\n".join(verdict.blocks), ()
        if verdict.stop is not None:
            return verdict.stop or "A UserPromptSubmit hook stopped the prompt.", ()
        return None, verdict.context(plain=True)

    async def session_started(
        self, source: Literal["startup", "resume", "clear"]
    ) -> tuple[str, ...]:
        """SessionStart: the context its hooks give the model."""
        if not self.configured("SessionStart"):
            return ()
        verdict = await self.runner.run("SessionStart", {"source": source}, subject=source)
        return verdict.context(plain=True)

    async def session_ended(self, reason: str = "other") -> None:
        """SessionEnd, as the session closes."""
        if self.configured("SessionEnd"):
            await self.runner.run("SessionEnd", {"reason": reason}, subject=reason)


def block_cap(env: Mapping[str, str]) -> int:
    """How many Stop hook blocks in a row a turn allows (Claude Code's variable; 0: no cap)."""
    raw = env.get(BLOCK_CAP_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_BLOCK_CAP
    if not raw.isdigit():
        raise ConfigError(
            f"{BLOCK_CAP_VARIABLE} must be a whole number of blocks (0: no cap), not {raw!r}"
        )
    return int(raw)


def tool_input(call: ToolCall) -> JSON:
    """The call's input as the model gave it (what it set, by its names)."""
    return call.tool.input_json(call.input)


def _refusal(call: ToolCall, verdict: Verdict) -> Decision | None:
    """A denial for a PreToolUse block or `deny`, in Claude Code's words; None otherwise."""
    if verdict.blocks:
        return Decision(
            "deny", f"PreToolUse:{call.tool.name} hook error: " + "\n".join(verdict.blocks)
        )
    word = verdict.permission
    if word is not None and word[0] == "deny":
        return Decision("deny", word[1] or f"A PreToolUse hook denied this {call.tool.name} call.")
    return None


def _rewritten(call: ToolCall, updated: dict[str, Any] | None) -> tuple[ToolCall, str | None]:
    """The call with a hook's `updatedInput` (validated as the tool's own input is), or why
    that input cannot be used."""
    if updated is None:
        return call, None
    try:
        parsed = call.tool.parse_input(updated)
    except ToolInputError as exc:
        return call, f"A PreToolUse hook rewrote the input into one that is not valid: {exc}"
    return replace(call, input=parsed), None


def _text(output: ToolOutput) -> str:
    content = output.content
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextBlock))


def _added(output: ToolOutput, notes: list[str]) -> ToolOutput:
    """`output` with `notes` after its content."""
    if not notes:
        return output
    extra = "\n\n".join(notes)
    content = output.content
    if isinstance(content, str):
        return replace(output, content=f"{content}\n\n{extra}" if content.strip() else extra)
    return replace(output, content=(*content, TextBlock(extra)))
