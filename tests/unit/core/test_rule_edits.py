"""`PermissionState` rule edits: a rule added or removed applies to the next check, deny rules
still win, and states that follow one get its edits."""

from __future__ import annotations

import gc
from pathlib import Path

from stayer.permissions import PermissionPolicy, PermissionState, Rule, evaluate

CWD = Path("/w")


def bash(state: PermissionState, command: str) -> str:
    decision = evaluate(
        state.policy, tool="Bash", subject=command, read_only=False, cwd=CWD, subject_kind="command"
    )
    return decision.behavior


def test_an_added_allow_rule_applies_to_the_next_check_and_a_removed_one_stops() -> None:
    state = PermissionState(PermissionPolicy())
    before = state.policy
    assert bash(state, "npm test") == "ask"

    assert state.add_rule("allow", Rule.parse("Bash(npm test:*)")) is True
    assert bash(state, "npm test --watch") == "allow"
    assert before.allow == ()  # the old policy value is untouched: it is replaced whole

    assert state.remove_rule(Rule.parse("Bash(npm test:*)")) == ("allow",)
    assert bash(state, "npm test --watch") == "ask"
    assert state.remove_rule(Rule.parse("Bash(npm test:*)")) == ()


def test_adding_a_rule_twice_keeps_one() -> None:
    state = PermissionState(PermissionPolicy())
    assert state.add_rule("deny", Rule.parse("Bash(rm *)")) is True
    assert state.add_rule("deny", Rule.parse("Bash(rm *)")) is False
    assert state.policy.deny == (Rule("Bash", "rm *"),)


def test_an_allow_rule_lets_nothing_through_that_a_deny_rule_forbids() -> None:
    state = PermissionState(PermissionPolicy(mode="acceptEdits"))
    state.add_rule("deny", Rule.parse("Bash(git push:*)"))
    state.add_rule("allow", Rule.parse("Bash(git push:*)"))
    state.add_rule("allow", Rule.parse("Bash"))
    assert bash(state, "git push origin main") == "deny"
    assert bash(state, "git status") == "allow"


def test_removing_a_rule_takes_it_out_of_every_kind() -> None:
    rule = Rule.parse("Bash(make)")
    state = PermissionState(PermissionPolicy(allow=(rule,), ask=(rule,)))
    assert state.remove_rule(rule) == ("allow", "ask")
    assert (state.policy.allow, state.policy.ask) == ((), ())


def test_a_follower_gets_later_edits_and_watchers_see_each_new_policy() -> None:
    parent = PermissionState(PermissionPolicy(allow=(Rule.parse("Bash(ls)"),)))
    child = PermissionState(parent.policy)
    parent.follow(child)
    seen: list[PermissionPolicy] = []
    child.watch_rules(seen.append)

    parent.add_rule("deny", Rule.parse("Bash(curl *)"))
    parent.remove_rule(Rule.parse("Bash(ls)"))
    assert bash(child, "curl example.com") == "deny"
    assert bash(child, "ls") == "ask"
    assert [policy.deny for policy in seen] == [(Rule("Bash", "curl *"),)] * 2
    assert seen[-1] is child.policy

    child.add_rule("allow", Rule.parse("Bash(pwd)"))  # a follower's own edit stays its own
    assert bash(parent, "pwd") == "ask"


def test_a_follower_that_is_gone_is_forgotten() -> None:
    parent = PermissionState(PermissionPolicy())
    parent.follow(PermissionState(PermissionPolicy()))
    gc.collect()
    parent.add_rule("allow", Rule.parse("Bash(ls)"))  # nothing left to hand it to
    assert bash(parent, "ls") == "allow"
