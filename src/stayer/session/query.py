"""One run from a prompt: resolve the model, tools, permissions and prompt, then drive the loop.

This is what the CLI, the Python API and (later) the REPL and protocol servers share: a prompt
and options in, `SessionStarted` and then the loop's events out.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field
from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.events import Event, PermissionRequested, SessionStarted
from stayer.loop.state import (
    Decide,
    FallbackModel,
    LoopParams,
    StopCheck,
)
from stayer.messages import ContentBlock, TextBlock, UserMessage
from stayer.permissions import (
    Decision,
    PermissionPolicy,
    PermissionState,
    Rule,
    domain_pattern,
    parse_mode,
    parse_rules,
)
from stayer.providers.base import Provider
from stayer.providers.select import ModelChoice
from stayer.switches import env_flag
from stayer.tools.base import Toolbox, ToolContext

from .ask_model import model_asker, small_model
from .compaction import compact_policy
from .fallback import fallback_models
from .limits import output_budget, run_limits
from .options import QueryOptions
from .paths import session_folder
from .permission_check import permission_check
from .sandboxing import check_sandbox, session_sandbox
from .settings import Settled, settle
from .system_prompt import Render, SystemPrompt, system_prompt
from .toolset import run_toolbox

if TYPE_CHECKING:
    from stayer.config.model import HookMatcher


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
    hooks: Mapping[str, tuple[HookMatcher, ...]] = field(default_factory=dict)
    """The settings' hooks, event name → matchers; the Session runs them (`hook_points`)."""


def _env(options: QueryOptions) -> Mapping[str, str]:
    return os.environ if options.env is None else options.env


def _provider(options: QueryOptions, env: Mapping[str, str]) -> tuple[Provider, ModelChoice, bool]:
    if options.provider is not None:
        from stayer.providers.profiles import profile_for

        name = options.model or options.provider.name
        profile = profile_for(name)
        choice = ModelChoice(
            options.provider.name, name, profile.context_window, profile.max_output_tokens
        )
        return options.provider, choice, False
    from stayer.providers.model_list import refresh_if_stale
    from stayer.providers.select import select_provider

    provider, choice = select_provider(options.model, env)
    refresh_if_stale(choice.provider, env)  # for the next run; this one never waits on it
    return provider, choice, True


def _plan_switch(choice: ModelChoice, permissions: PermissionState) -> Callable[[], str] | None:
    """For `opusplan`: each call goes to the plan model while the session is in plan mode."""
    plan, model = choice.plan_model, choice.model
    if plan is None:
        return None
    return lambda: plan if permissions.mode == "plan" else model


def _listed(value: str | Sequence[str]) -> Sequence[str]:
    """A lone string is one entry, not a sequence of characters."""
    return (value,) if isinstance(value, str) else value


def _directories(given: Sequence[Path | str], cwd: Path) -> tuple[Path, ...]:
    """The extra working directories, resolved; each must exist."""
    found: list[Path] = []
    for item in given:
        try:
            path = (cwd / Path(item).expanduser()).resolve()
        except RuntimeError:  # `~name` for a user that does not exist
            raise ConfigError(f"--add-dir {item}: no such home directory; give a path") from None
        if not path.is_dir():
            raise ConfigError(f"--add-dir {item}: {path} is not a directory; give one that exists")
        found.append(path)
    return tuple(dict.fromkeys(found))


def _stop_checks(
    options: QueryOptions, tools: Toolbox, ctx: ToolContext, env: Mapping[str, str]
) -> tuple[StopCheck, ...]:
    """The checks before a run may complete: open todos (with TodoWrite), then `--done-when`."""
    checks: list[StopCheck] = []
    if "TodoWrite" in tools.names:
        from .todo_check import todo_check

        checks.append(todo_check(ctx))
    if options.done_when is not None:
        if not options.done_when.strip():
            raise ConfigError("--done-when needs a command, such as --done-when 'pytest -q'")
        from .done_check import done_check

        checks.append(done_check(options.done_when, cwd=ctx.cwd, env={**os.environ, **env}))
    return tuple(checks)


def token_budget(options: QueryOptions, prompt: str | Sequence[ContentBlock]) -> int | None:
    """The option's budget, else one typed in the prompt (`+500k`, "use 2M tokens")."""
    from stayer.loop.budget import budget_in_prompt

    if options.token_budget is not None:
        if options.token_budget < 1:
            raise ConfigError(f"the token budget must be at least 1, not {options.token_budget}")
        return options.token_budget
    text = (
        prompt
        if isinstance(prompt, str)
        else " ".join(block.text for block in prompt if isinstance(block, TextBlock))
    )
    return budget_in_prompt(text)


def denied_reads(policy: PermissionPolicy, tools: Toolbox, cwd: Path) -> tuple[str, ...]:
    """The path patterns the deny rules forbid reading (those of each tool's `reads_under`),
    which searches leave out. Only a run with such rules loads the tools here to see which
    judge reading; the others keep loading them while the first request is answered."""
    if not any(rule.specifier for rule in policy.deny):
        return ()
    judges = {tool.reads_under for tool in tools.tools().values() if tool.reads_under}
    return tuple(
        rule.path_pattern(cwd) for rule in policy.deny if rule.specifier and rule.tool in judges
    )


def _decider(given: Decide | None, state: PermissionState) -> Decide | None:
    """The caller's decider, made to switch the session's mode when an allowed call says to
    (an accepted plan leaves plan mode, for the mode the answer names or the one before)."""
    if given is None:
        return None

    async def decide(request: PermissionRequested) -> Decision:
        answer = await given(request)
        if isinstance(answer, Decision) and answer.behavior == "allow":
            mode = answer.mode or request.mode
            if mode is not None:
                state.set_mode(parse_mode(mode))
                answer = replace(answer, mode=state.mode)
        return answer

    return decide


def _working_directory(options: QueryOptions) -> Path:
    try:
        cwd = Path(options.cwd or Path.cwd()).resolve()
    except FileNotFoundError:
        raise ConfigError("the current directory no longer exists; cd somewhere real") from None
    if not cwd.is_dir():
        raise ConfigError(f"working directory {cwd} does not exist")
    return cwd


def _check_limits(options: QueryOptions) -> None:
    if options.max_turns is not None and options.max_turns < 1:
        raise ConfigError(f"max turns must be at least 1, not {options.max_turns}")
    if options.max_budget_usd is not None and not options.max_budget_usd > 0:
        raise ConfigError(f"the budget must be more than $0, not {options.max_budget_usd}")
    nudge, stop = options.repeat_nudge_after, options.repeat_stop_after
    if not 1 <= nudge < stop:
        raise ConfigError(
            f"repeated failures must be nudged after 1 or more rounds and end the run later, "
            f"so the model sees the nudge (got nudge after {nudge}, stop after {stop})"
        )


def _session_id(options: QueryOptions) -> str:
    """The session's id: the one given, which names its files, so it must be a UUID; kept in
    lower case, the form `--resume` looks for."""
    if options.session_id is None:
        return str(uuid.uuid4())
    try:
        canonical = str(uuid.UUID(options.session_id))
    except ValueError:
        canonical = ""
    if canonical != options.session_id.lower():
        raise ConfigError(f"the session id must be a UUID, not {options.session_id!r}")
    return canonical


def _fallbacks(
    options: QueryOptions,
    env: Mapping[str, str],
    provider: Provider,
    choice: ModelChoice,
    *,
    injected: bool,
) -> tuple[FallbackModel, ...]:
    """The fallback chain, each model with its output limit chosen as the main model's is."""
    return fallback_models(
        options.fallback_models,
        env,
        main=choice,
        provider=provider,
        injected=injected,
        betas=_betas(options.betas),
        max_tokens=lambda ceiling: output_budget(options, env, ceiling),
    )


def _tool_context(
    options: QueryOptions,
    env: Mapping[str, str],
    cwd: Path,
    session_id: str,
    policy: PermissionPolicy,
) -> ToolContext:
    """What the tools see; oversized results are saved with the session, so nowhere when the
    session is not kept. WebFetch may reach a local address only for a host the user's own
    allow rules name exactly (the pre-approved sites are not in `policy`)."""
    session_dir = session_folder(env, cwd, session_id) if options.persist_session else None
    return ToolContext(
        cwd=cwd, env=dict(env), session_dir=session_dir, web_hosts=_named_hosts(policy)
    )


def prepare(options: QueryOptions, prompt: str | Sequence[ContentBlock] = "") -> Setup:
    """Resolve everything a run needs; raises `ConfigError` with one line if something is off."""
    cwd = _working_directory(options)
    settled = settle(options, cwd, _env(options))
    options, env = settled.options, settled.env
    policy = starting_policy(options, settled.ask, cwd)
    permissions = PermissionState(replace(policy, allow=(*policy.allow, *_preapproved(env))))
    _check_limits(options)
    check_sandbox(options, env, cwd=cwd, directories=policy.directories)
    session_id = _session_id(options)
    compaction = compact_policy(options, env, cwd, session_id)
    given = None if options.tools is None else _listed(options.tools)
    tools = run_toolbox(given, options.extra_tools, policy)
    budget = token_budget(options, prompt)
    provider, choice, owns = _provider(options, env)
    model = choice.model

    system = system_prompt(
        options,
        env,
        cwd=cwd,
        model=model,
        tool_names=tools.names,
        token_budget=budget,
        pins=compaction.pins,
    )
    limits = run_limits(options, env, ceiling=choice.max_output_tokens)
    tool_context = _tool_context(options, env, cwd, session_id, policy)
    tool_context.denied_reads = denied_reads(policy, tools, cwd)
    params = LoopParams(
        provider=provider,
        model=model,
        system_prompt=system.text,
        model_prompt=lambda serving: system.render(budget, serving),
        tools=tools,
        tool_context=tool_context,
        can_use_tool=permission_check(permissions, cwd, tool_context, env),
        decide=_decider(options.can_use_tool, permissions),
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
        betas=(*choice.betas, *_betas(options.betas)),
        fallbacks=_fallbacks(options, env, provider, choice, injected=not owns),
        live_model=_plan_switch(choice, permissions),
        context_window=choice.context_window,
        compaction=compaction,
    )
    # A tool's own question (WebFetch's) goes through the same provider, retries and timeouts.
    asked = small_model(env, provider=choice.provider, main_model=model, injected=not owns)
    tool_context.ask_model = model_asker(params, asked)
    # last: nothing after it may fail and leave its private /tmp behind
    tool_context.sandbox = session_sandbox(options, env, cwd=cwd, directories=policy.directories)
    started = _announced(params, choice, system, settled, session_id=session_id, cwd=cwd)
    hooks = settled.loaded.hooks
    warnings = (*settled.warnings, *_unsupported(hooks))
    return Setup(params, started, owns, system.render, permissions, warnings, hooks)


def _unsupported(hooks: Mapping[str, Sequence[HookMatcher]]) -> list[str]:
    """Warnings for hooks that load but do not run; the hooks package loads only when the
    settings define some."""
    if not hooks:
        return []
    from stayer.hooks import unsupported

    return unsupported(hooks)


def starting_policy(options: QueryOptions, ask: tuple[Rule, ...], cwd: Path) -> PermissionPolicy:
    """The permission policy the run starts with: the mode, the flags' rules with the
    settings' folded in, and the working directories (`stayer permissions check` replays
    under the same)."""
    return PermissionPolicy(
        mode=parse_mode(options.permission_mode or "default"),
        allow=parse_rules(_listed(options.allowed_tools)),
        deny=parse_rules(_listed(options.disallowed_tools)),
        ask=ask,
        directories=_directories(options.add_dirs, cwd),
    )


def _named_hosts(policy: PermissionPolicy) -> frozenset[str]:
    """The hosts allow rules name exactly (``WebFetch(domain:127.0.0.1)``, not a pattern): the
    only ones WebFetch may reach at a loopback, private or other non-public address."""
    hosts = (
        domain_pattern(rule.specifier)
        for rule in policy.allow
        if rule.specifier is not None and rule.specifier.startswith("domain:")
    )
    return frozenset(host for host in hosts if not any(char in host for char in "*?["))


def _preapproved(env: Mapping[str, str]) -> tuple[Rule, ...]:
    """Allow rules for the documentation sites WebFetch may reach without asking, unless
    ``STAYER_NO_PREAPPROVED_HOSTS`` turns them off."""
    if env_flag(env, "STAYER_NO_PREAPPROVED_HOSTS"):
        return ()
    from stayer.tools.preapproved import PREAPPROVED_HOSTS

    return tuple(Rule("WebFetch", f"domain:{host}") for host in sorted(PREAPPROVED_HOSTS))


def _announced(
    params: LoopParams,
    choice: ModelChoice,
    system: SystemPrompt,
    settled: Settled,
    *,
    session_id: str,
    cwd: Path,
) -> SessionStarted:
    """What the session's first event says of the model, tools, memory and settings."""
    mode = parse_mode(settled.options.permission_mode or "default")
    return SessionStarted(
        session_id=session_id,
        model=choice.display_name,
        provider=params.provider.name,
        tools=params.tools.names,
        cwd=str(cwd),
        permission_mode=mode,
        context_window=choice.context_window,
        max_output_tokens=params.max_tokens,
        memory_files=system.memory.paths,
        memory_notes=system.memory.notes,
        settings_files=tuple(source.origin for source in settled.loaded.sources if source.settings),
        settings_warnings=settled.warnings,
    )


def _betas(given: Sequence[str]) -> tuple[str, ...]:
    return tuple(
        beta.strip() for item in _listed(given) for beta in item.split(",") if beta.strip()
    )


def user_message(prompt: str | Sequence[ContentBlock]) -> UserMessage:
    """The prompt as a user message."""
    if isinstance(prompt, str):
        return UserMessage((TextBlock(prompt),))
    return UserMessage(tuple(prompt))


async def query(
    prompt: str | Sequence[ContentBlock], *, options: QueryOptions | None = None
) -> AsyncIterator[Event]:
    """Run the agent on `prompt`: a session with one submission. Yields `SessionStarted`,
    every loop event, and `Finished`; closes what it opened.

    Raises `ConfigError` (before any event) when the model, key or options are unusable.
    """
    from .session import Session

    options = options or QueryOptions()
    async with (
        await Session.open(options) as session,
        aclosing(session.submit(prompt, abort=options.abort)) as events,
    ):
        async for event in events:
            yield event
