"""What the model is told of plan mode: that it is on, at the first model call of each prompt
made in it and at the first call after a switch into it; and that it is over, at the first call
after the session leaves it (an accepted plan, `set_permission_mode`, a resumed conversation
whose last note said plan mode was on, going on in another mode).

The note goes into the user message of that call as a `<system-reminder>` block (the loop's
`LoopParams.reminder`), and stays in the conversation: the model can see later when the rules
changed. A summary that drops it (compaction) has it said again at the next call. Without it,
a model in plan mode learns the rules only from refused calls, and one that left plan mode goes
on believing it may change nothing. Switches between the other modes are not told: they change
which calls are asked about, not what the model should set out to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from stayer.messages import Message, TextBlock, UserMessage
from stayer.permissions import PermissionMode, PermissionState

_PLAN_RULES = (
    "Plan mode is on. The user wants a plan before anything changes: do not edit or create "
    "files, and run only commands that change nothing (no installs, commits, moves or "
    "deletions); calls that would change something are refused. Read and search as much as "
    "you need to make the plan sound."
)
_PLAN_TO_USER = (
    " When the plan is ready, put it to the user with the ExitPlanMode tool and wait for it to "
    "be accepted before you start the work."
)
_PLAN_AS_ANSWER = (
    " When the plan is ready, give it in full as your final answer and stop: the work itself "
    "waits until the user approves it."
)


def plan_mode_on(*, can_ask: bool) -> str:
    """The note for a call made in plan mode; `can_ask`: someone can accept a plan (a person
    or a program answers ExitPlanMode), else the plan is the run's answer."""
    return _PLAN_RULES + (_PLAN_TO_USER if can_ask else _PLAN_AS_ANSWER)


def plan_mode_off(mode: PermissionMode) -> str:
    """The note for the first call after plan mode ended, in `mode`."""
    return (
        f"Plan mode is over: the permission mode is now {mode}. You may change files and run "
        "commands again, within what that mode and the user's rules allow."
    )


_REMINDER_HEAD = "<system-reminder>\n"


def reminder_block(text: str) -> str:
    """`text` as a system reminder: marked as the harness's words, not the user's."""
    return f"{_REMINDER_HEAD}{text}\n</system-reminder>"


class ModeReminder:
    """Says, before a model call, what the model has not yet been told of plan mode."""

    def __init__(self, permissions: PermissionState, *, can_ask: bool) -> None:
        """`can_ask`: a plan can be put to someone (ExitPlanMode is a tool and a decider
        answers it); else the model is told to give its plan as its answer."""
        self._permissions = permissions
        self._can_ask = can_ask
        self._told: PermissionMode | None = None
        self._new_prompt = True

    def new_prompt(self) -> None:
        """A prompt goes in: in plan mode, its first call says so again."""
        self._new_prompt = True

    def __call__(self, messages: Sequence[Message]) -> str | None:
        """The note for the call about to be made on `messages`, or None."""
        mode = self._permissions.mode
        told, self._told = self._told, mode
        if told is None and _left_in_plan(messages):
            told = "plan"  # a resumed conversation whose last word on the mode was plan mode
        fresh, self._new_prompt = self._new_prompt, False
        if mode == "plan":
            note = reminder_block(plan_mode_on(can_ask=self._can_ask))
            if told == "plan" and not fresh and _holds(messages, note):
                return None  # said in this prompt, and no summary has replaced it since
            return note
        if told == "plan":
            return reminder_block(plan_mode_off(mode))
        return None


def _holds(messages: Sequence[Message], note: str) -> bool:
    """Whether a user message of `messages` still carries `note`."""
    return any(
        isinstance(block, TextBlock) and block.text == note
        for message in messages
        if isinstance(message, UserMessage)
        for block in message.content
    )


def _left_in_plan(messages: Sequence[Message]) -> bool:
    """Whether the last note on plan mode that `messages` carry says it is on."""
    on, off = (f"{_REMINDER_HEAD}{_PLAN_RULES}", f"{_REMINDER_HEAD}Plan mode is over")
    for message in reversed(messages):
        if not isinstance(message, UserMessage):
            continue
        for block in reversed(message.content):
            if isinstance(block, TextBlock) and block.text.startswith((on, off)):
                return block.text.startswith(on)
    return False
