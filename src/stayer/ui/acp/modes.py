"""A session's permission modes as ACP session modes, and its model as a config option.

The modes offered are those the REPL cycles through (default, acceptEdits, plan), the mode the
session started in, if another (`--permission-mode bypassPermissions` given on the command
line), and bypassPermissions where the session may switch into it (`stayer acp
--allow-dangerously-skip-permissions`, unless a settings file turns it off): an editor cannot
switch a session into a looser mode than the command line allowed. The model option offers
what the REPL's `/model` offers for the session's provider.
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from stayer.errors import ConfigError
from stayer.session.mode_bounds import BYPASS
from stayer.session.session import Session
from stayer.ui.repl.commands_session import model_choices

MODEL_OPTION = "model"
CYCLE = ("default", "acceptEdits", "plan")
_NAMES = {
    "default": ("Ask", "Ask before edits and commands the rules do not allow"),
    "acceptEdits": ("Accept edits", "Allow file edits in the working folders without asking"),
    "plan": ("Plan", "Read and plan only; nothing is changed until the plan is accepted"),
    "bypassPermissions": ("Bypass permissions", "Allow every call without asking"),
    "dontAsk": ("Don't ask", "Refuse whatever the rules do not allow, without asking"),
}


def offered_modes(start: str, bypass: bool = False) -> tuple[str, ...]:
    """The modes a session started in `start` may be switched to; with `bypass` (the session
    may switch into bypassPermissions), that one too."""
    offered = CYCLE if start in CYCLE else (*CYCLE, start)
    return (*offered, BYPASS) if bypass and BYPASS not in offered else offered


def mode_state(session: Session, start: str) -> SessionModeState:
    """The session's current mode and those it may switch to."""
    return SessionModeState(
        current_mode_id=session.permission_mode,
        available_modes=[
            SessionMode(id=mode, name=_NAMES[mode][0], description=_NAMES[mode][1])
            for mode in offered_modes(start, may_bypass(session))
        ],
    )


def may_bypass(session: Session) -> bool:
    """Whether `session` may switch into bypassPermissions: the flags allow it and no settings
    file turns it off (`Session.check_mode`, the rule every front end keeps)."""
    try:
        session.check_mode(BYPASS)
    except ConfigError:
        return False
    return True


def check_mode(mode: str, start: str, bypass: bool) -> None:
    """Raise `RequestError` (invalid params) unless `mode` is one a session started in `start`
    may switch to (`bypass`: bypassPermissions among them)."""
    offered = offered_modes(start, bypass)
    if mode not in offered:
        raise RequestError.invalid_params(
            {"details": f"unknown mode {mode!r}; this session offers {', '.join(offered)}"}
        )


def config_options(session: Session) -> list[SessionConfigOptionSelect]:
    """The session's config options: its model (when its provider has names to choose from)."""
    now = session.setup.started.model
    choices = model_choices(session)
    values = [
        SessionConfigSelectOption(
            value=name, name=" ".join(label.removesuffix("(current)").split())
        )
        for name, label in choices
    ]
    current = next((name for name, label in choices if label.endswith("(current)")), None)
    if current is None:
        values.insert(0, SessionConfigSelectOption(value=now, name=now))
        current = now
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION,
            name="Model",
            category="model",
            current_value=current,
            options=values,
        )
    ]


def offers_model(session: Session, value: object) -> bool:
    """Whether `value` is one of the models the session's model option offers."""
    offered = {name for name, _ in model_choices(session)} | {session.setup.started.model}
    return isinstance(value, str) and value in offered
