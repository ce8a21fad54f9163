"""A hook's stdout read into a reply (`stayer.hooks.reply`): JSON of the wrong shape is a
failed hook with one line saying what was wrong, never a crash."""

from __future__ import annotations

import pytest

from stayer.exec import CommandResult
from stayer.exec.capture import Captured
from stayer.hooks import read_reply


def said(stdout: str) -> tuple[str, str]:
    result = CommandResult(Captured(stdout), Captured(""), 0)
    reply = read_reply("check.sh", result, 5)
    return reply.outcome, reply.message


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ('{"continue": "maybe"}', 'continue: input should be a valid boolean (got "maybe")'),
        ('{"decision": "veto"}', "decision: input should be 'approve' or 'block' (got \"veto\")"),
        ('{"hookSpecificOutput": {"permissionDecision": "yes"}}',
         "hookSpecificOutput.permissionDecision: input should be 'allow', 'deny' or 'ask' "
         '(got "yes")'),
        ('{"hookSpecificOutput": {"updatedInput": ["ls"]}}',
         'hookSpecificOutput.updatedInput: input should be an object (got ["ls"])'),
    ],
)  # fmt: skip
def test_a_known_key_of_the_wrong_type_is_a_failed_hook_named_in_one_line(
    stdout: str, message: str
) -> None:
    assert said(stdout) == ("error", f"its JSON output is not usable: {message}")


def test_json_nested_too_deeply_is_a_failed_hook_not_a_crash() -> None:
    outcome, message = said('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert (outcome, message) == ("error", "its JSON output is nested too deeply to read")


def test_unknown_keys_are_ignored_and_known_ones_apply() -> None:
    stdout = '{"decision": "block", "reason": "no", "somethingNew": 1, "continue": false}'
    result = CommandResult(Captured(stdout), Captured(""), 0)
    reply = read_reply("check.sh", result, 5)
    assert (reply.outcome, reply.message, reply.stop, reply.permission) == (
        "blocked",
        "no",
        "",
        "deny",
    )


def test_known_keys_in_snake_case_are_read_as_before_so_a_deny_is_never_lost() -> None:
    specific = '{"permission_decision": "deny", "permission_decision_reason": "no"}'
    stdout = '{"hookSpecificOutput": ' + specific + "}"
    result = CommandResult(Captured(stdout), Captured(""), 0)
    reply = read_reply("check.sh", result, 5)
    assert (reply.permission, reply.permission_reason) == ("deny", "no")


def test_a_number_too_long_to_read_is_a_failed_hook_not_a_crash() -> None:
    outcome, message = said('{"n": ' + "9" * 5000 + "}")
    assert outcome == "error" and message.startswith("its output looks like JSON but is not")
