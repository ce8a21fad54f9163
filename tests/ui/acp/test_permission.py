"""A permission question put to the editor and its answer as a decision: allow once, allow
always (a session rule, offered only when there is one to keep), reject; an answer naming an
option the question did not offer is a rejection."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from acp import Client
from acp.schema import AllowedOutcome, RequestPermissionResponse

from stayer.events import PermissionRequested
from stayer.session.session import Session
from stayer.ui.acp.permission import ask
from stayer.ui.acp.updates import Translator


class OneAnswer:
    """An editor that answers every question with one option id, and keeps what it was asked."""

    def __init__(self, option_id: str) -> None:
        self.option_id = option_id
        self.offered: list[str] = []

    async def request_permission(self, **given: Any) -> RequestPermissionResponse:
        self.offered = [option.option_id for option in given["options"]]
        chosen = AllowedOutcome(outcome="selected", option_id=self.option_id)
        return RequestPermissionResponse(outcome=chosen)


class Rules:
    """The part of a session a question touches: its id and the rules kept."""

    session_id = "s"

    def __init__(self) -> None:
        self.kept: list[tuple[str, str, bool]] = []

    def add_rule(self, kind: str, rule: str, *, save: bool) -> None:
        self.kept.append((kind, rule, save))


def _request(*suggestions: str) -> PermissionRequested:
    return PermissionRequested(
        "toolu_1", "Bash", {"command": "npm test"}, "asks", suggestions=suggestions
    )


async def _ask(answer: str, request: PermissionRequested) -> tuple[str, list[str], Rules]:
    editor, rules = OneAnswer(answer), Rules()
    decision = await ask(
        cast(Client, editor), cast(Session, rules), request, Translator(Path("/p"))
    )
    return decision.behavior, editor.offered, rules


@pytest.mark.parametrize(
    ("answer", "behavior"), [("allow", "allow"), ("reject", "deny"), ("made-up", "deny")]
)
async def test_answers_as_decisions(answer: str, behavior: str) -> None:
    decided, offered, rules = await _ask(answer, _request("Bash(npm test:*)"))
    assert (decided, rules.kept) == (behavior, [])
    assert offered == ["allow", "allow_always", "reject"]


async def test_allow_always_keeps_the_suggested_rule_for_the_session_only() -> None:
    decided, _, rules = await _ask("allow_always", _request("Bash(npm test:*)"))
    assert (decided, rules.kept) == ("allow", [("allow", "Bash(npm test:*)", False)])


async def test_allow_always_where_it_was_not_offered_is_a_rejection() -> None:
    decided, offered, rules = await _ask("allow_always", _request("Bash"))  # too wide to keep
    assert (decided, offered, rules.kept) == ("deny", ["allow", "reject"], [])


async def test_a_subagents_call_is_titled_alike_when_announced_and_when_asked_about() -> None:
    request = PermissionRequested(
        "toolu_9", "Bash", {"command": "npm test"}, "asks", agent="reviewer"
    )
    editor, calls = Titles(), Translator(Path("/p"))
    announced = calls.announce(
        request.tool_use_id, request.name, request.input, "pending", request.agent
    )
    await ask(cast(Client, editor), cast(Session, Rules()), request, calls)
    assert announced.title.startswith("reviewer: ")
    assert editor.titles == [announced.title]


class Titles(OneAnswer):
    """An editor that keeps the title of each call it is asked about."""

    def __init__(self) -> None:
        super().__init__("reject")
        self.titles: list[str | None] = []

    async def request_permission(self, **given: Any) -> RequestPermissionResponse:
        self.titles.append(given["tool_call"].title)
        return await super().request_permission(**given)
