"""Assembling a session: from what `resolve` found to the loop's parameters, with no I/O.

`assemble(resolved)` is a pure function of its input (it makes objects, closures and a client
wrapper, and reads nothing): the permission state, the tool context, the stop checks, the
`LoopParams` and the `SessionStarted` the session announces. A child session (`Session.derive`)
is assembled from its parent's `Resolved`, changed, so it reads and probes nothing either.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field
from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.events import PermissionRequested, SessionStarted
from stayer.loop.state import Decide, LoopParams, StopCheck
from stayer.messages import ContentBlock, TextBlock, UserMessage
from stayer.permissions import (
    Decision,
    PermissionPolicy,
    PermissionState,
    Rule,
    domain_pattern,
    parse_mode,
)
from stayer.providers.base import Provider
from stayer.providers.select import ModelChoice
from stayer.tools.base import Toolbox, ToolContext
from stayer.tools.names import STRUCTURED_OUTPUT, TODO_WRITE

from .ask_model import model_asker, small_model
from .limits import run_limits
from .mode_bounds import BYPASS, BYPASS_REFUSED, may_bypass
from .options import QueryOptions
from .paths import session_folder
from .permission_check import permission_check
from .reasoning import effort_of, thinking_of
from .resolve import Resolved, betas, denied_reads, with_preapproved
from .system_prompt import Render

if TYPE_CHECKING:
    from stayer.hooks.runner import AnyMatcher


class Setup(Struct, frozen=True):
    """A session ready to start: the loop's parameters, what to announce, and the system
    prompt for a given token budget (a `+500k` in a later prompt changes it)."""

    params: LoopParams
    started: SessionStarted
    owns_provider: bool
    system_for: Render
    permissions: PermissionState
    warnings: tuple[str, ...] = ()
    """What to tell the user before the run (a settings file that could not be used)."""
    hooks: Mapping[str, tuple[AnyMatcher, ...]] = field(default_factory=dict)
    """The settings', the plugins' and the caller's hooks, event name → matchers; the Session
    runs them (`hook_points`)."""
    resolved: Resolved | None = None
    """What it was assembled from (a child session is assembled from it again, changed)."""


def assemble(resolved: Resolved, *, permissions: PermissionState | None = None) -> Setup:
    """The session's parameters from what was resolved; `permissions` shares a live state (a
    child's, bounded by its parent's) instead of starting one from the resolved policy."""
    options, env, cwd = resolved.options, resolved.env, resolved.cwd
    policy, tools, choice = resolved.policy, resolved.tools, resolved.choice
    if permissions is None:
        permissions = PermissionState(with_preapproved(policy, env))
    system, budget = resolved.system, resolved.token_budget
    limits = run_limits(options, env, ceiling=choice.max_output_tokens)
    tool_context = _tool_context(options, env, cwd, resolved.session_id)
    fit = _rules_fitter(resolved, tools, tool_context)
    fit(permissions.policy)  # a child's rules are its parent's as they are now
    permissions.watch_rules(fit)
    params = LoopParams(
        provider=resolved.provider,
        model=choice.model,
        system_prompt=system.text,
        model_prompt=lambda serving: system.render(budget, serving),
        tools=tools,
        tool_context=tool_context,
        can_use_tool=permission_check(permissions, cwd, tool_context, env),
        decide=_decider(
            options.can_use_tool, permissions, options.allow_dangerously_skip_permissions
        ),
        abort=options.abort,
        max_turns=options.max_turns,
        retry=limits.retry,
        max_tokens=limits.max_tokens,
        escalated_max_tokens=limits.escalated_max_tokens,
        max_concurrent_tools=limits.max_concurrent_tools,
        stop_checks=_stop_checks(options, tools, tool_context, env),
        max_budget_usd=options.max_budget_usd,
        token_budget=budget,
        repeat_nudge_after=options.repeat_nudge_after,
        repeat_stop_after=options.repeat_stop_after,
        betas=(*choice.betas, *betas(options.betas)),
        thinking=thinking_of(options),
        effort=effort_of(options),
        fallbacks=resolved.fallbacks,
        live_model=_plan_switch(choice, permissions),
        context_window=choice.context_window,
        compaction=resolved.compaction,
    )
    # A tool's own question (WebFetch's) goes through the same provider, retries and timeouts.
    injected = not resolved.owns_provider
    asked = small_model(env, provider=choice.provider, main_model=choice.model, injected=injected)
    tool_context.ask_model = model_asker(params, asked)
    tool_context.sandbox = resolved.sandbox
    hooks = resolved.hooks  # the settings', the plugins' and the caller's
    return Setup(
        params,
        _announced(resolved, params, permissions),
        resolved.owns_provider,
        system.render,
        permissions,
        (
            *resolved.settled.warnings,
            *_unsupported(hooks),
            *_mcp_warnings(resolved),
            *_reasoning_notes(params, choice),
        ),
        hooks,
        resolved,
    )


def with_model(
    params: LoopParams,
    resolved: Resolved,
    permissions: PermissionState,
    client: tuple[Provider, ModelChoice],
) -> LoopParams:
    """`params` answered by another model (`Session.set_model`): its client, limits and
    window, and a system prompt that names it; everything else, the tool context and what hooks
    wired in, as it was."""
    options, env, system = resolved.options, resolved.env, resolved.system
    provider, choice = client
    limits = run_limits(options, env, ceiling=choice.max_output_tokens)
    budget = params.token_budget
    return replace(
        params,
        provider=provider,
        model=choice.model,
        system_prompt=system.render(budget, choice.model),
        model_prompt=lambda serving: system.render(budget, serving),
        max_tokens=limits.max_tokens,
        escalated_max_tokens=limits.escalated_max_tokens,
        betas=(*choice.betas, *betas(options.betas)),
        context_window=choice.context_window,
        live_model=_plan_switch(choice, permissions),
    )


def prompt_blocks(prompt: str | Sequence[ContentBlock]) -> tuple[ContentBlock, ...]:
    """A prompt as content blocks; raises `ConfigError` for an empty one."""
    if not prompt or (isinstance(prompt, str) and not prompt.strip()):
        raise ConfigError("the prompt is empty; say what to do")
    return (TextBlock(prompt),) if isinstance(prompt, str) else tuple(prompt)


def user_message(prompt: str | Sequence[ContentBlock]) -> UserMessage:
    """The prompt as a user message."""
    return UserMessage(prompt_blocks(prompt))


def _plan_switch(choice: ModelChoice, permissions: PermissionState) -> Callable[[], str] | None:
    """For `opusplan`: each call goes to the plan model while the session is in plan mode."""
    plan, model = choice.plan_model, choice.model
    if plan is None:
        return None
    return lambda: plan if permissions.mode == "plan" else model


def _reasoning_notes(params: LoopParams, choice: ModelChoice) -> tuple[str, ...]:
    """A line when the thinking asked for cannot reach the model: OpenAI's chat API takes a
    reasoning effort, not a thinking budget."""
    if params.thinking is None or choice.provider != "openai":
        return ()
    return (
        "--thinking and --max-thinking-tokens have no effect on OpenAI-compatible models; "
        "--effort sets their reasoning_effort",
    )


def _stop_checks(
    options: QueryOptions, tools: Toolbox, ctx: ToolContext, env: Mapping[str, str]
) -> tuple[StopCheck, ...]:
    """The checks before a run may complete: open todos (with TodoWrite), then `--done-when`,
    then the answer `--json-schema` asks for (the session's own, not a subagent's)."""
    checks: list[StopCheck] = []
    if TODO_WRITE in tools.names:
        from .todo_check import todo_check

        checks.append(todo_check(ctx))
    if options.done_when is not None:
        from .done_check import done_check

        checks.append(done_check(options.done_when, cwd=ctx.cwd, env={**os.environ, **env}))
    if options.json_schema is not None and STRUCTURED_OUTPUT in tools.names:
        from .structured import answer_check  # last: it takes the answer it finds

        checks.append(answer_check(tools))
    return tuple(checks)


def _decider(given: Decide | None, state: PermissionState, allowed: bool) -> Decide | None:
    """The caller's decider, made to switch the session's mode when an allowed call says to
    (an accepted plan leaves plan mode, for the mode the answer names or the one before). A
    switch into bypassPermissions the session may not make (`may_bypass`; `allowed`: the
    options allow it) raises `ConfigError`, which denies the call, saying why."""
    if given is None:
        return None
    bypass_ok = may_bypass(state.mode, allowed)  # the mode the session starts in

    async def decide(request: PermissionRequested) -> Decision:
        answer = await given(request)
        if isinstance(answer, Decision) and answer.behavior == "allow":
            mode = answer.mode or request.mode
            if mode is not None:
                mode = parse_mode(mode)
                if mode == BYPASS and state.mode != BYPASS and not bypass_ok:
                    raise ConfigError(f"{BYPASS_REFUSED}; the mode stays {state.mode}")
                state.set_mode(mode)
                answer = replace(answer, mode=state.mode)
        return answer

    return decide


def _tool_context(
    options: QueryOptions, env: Mapping[str, str], cwd: Path, session_id: str
) -> ToolContext:
    """What the tools see; oversized results are saved with the session, so nowhere when the
    session is not kept."""
    session_dir = (
        session_folder(env, cwd, session_id, options.sessions_dir)
        if options.persist_session
        else None
    )
    return ToolContext(cwd=cwd, env=dict(env), session_dir=session_dir, editor=options.editor)


def _rules_fitter(
    resolved: Resolved, tools: Toolbox, ctx: ToolContext
) -> Callable[[PermissionPolicy], None]:
    """What keeps the tool context's view of the rules in step with the rules in force, at the
    start and after each rule a person adds or removes: the files deny rules keep searches out
    of, and the hosts WebFetch may reach at a local address, only those the user's own allow
    rules name exactly (never a pre-approved site's)."""
    cwd, extra = resolved.cwd, resolved.options.extra_tools
    preapproved = set(with_preapproved(PermissionPolicy(), resolved.env).allow)
    preapproved -= set(resolved.policy.allow)

    def fit(policy: PermissionPolicy) -> None:
        ctx.denied_reads = denied_reads(policy, tools, cwd, extra)
        ctx.web_hosts = _named_hosts(tuple(r for r in policy.allow if r not in preapproved))

    return fit


def _named_hosts(allow: tuple[Rule, ...]) -> frozenset[str]:
    """The hosts allow rules name exactly (``WebFetch(domain:127.0.0.1)``, not a pattern): the
    only ones WebFetch may reach at a loopback, private or other non-public address."""
    hosts = (
        domain_pattern(rule.specifier)
        for rule in allow
        if rule.specifier is not None and rule.specifier.startswith("domain:")
    )
    return frozenset(host for host in hosts if not any(char in host for char in "*?["))


def _mcp_warnings(resolved: Resolved) -> tuple[str, ...]:
    """What could not be read of the MCP servers' configuration (a broken `.mcp.json`)."""
    return () if resolved.mcp is None else resolved.mcp.warnings


def _unsupported(hooks: Mapping[str, Sequence[AnyMatcher]]) -> list[str]:
    """Warnings for hooks that load but do not run; the hooks package loads only when the
    settings define some."""
    if not hooks:
        return []
    from stayer.hooks import unsupported

    return unsupported(hooks)


def _announced(
    resolved: Resolved, params: LoopParams, permissions: PermissionState
) -> SessionStarted:
    """What the session's first event says of the model, tools, memory and settings."""
    settled, system = resolved.settled, resolved.system
    return SessionStarted(
        session_id=resolved.session_id,
        model=resolved.choice.display_name,
        provider=params.provider.name,
        tools=params.tools.names,
        cwd=str(resolved.cwd),
        permission_mode=permissions.mode,
        context_window=resolved.choice.context_window,
        max_output_tokens=params.max_tokens,
        memory_files=system.memory.paths,
        memory_notes=system.memory.notes,
        settings_files=tuple(source.origin for source in settled.loaded.sources if source.settings),
        settings_warnings=settled.warnings,
    )
