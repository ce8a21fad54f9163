"""`Session.add_rule`, `remove_rule` and `rules`: permission rules changed while a session runs
apply to the next check, are saved to `.stayer/settings.local.json` when asked, reach derived
sessions, and never let through what a deny rule forbids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
from stayer.errors import ConfigError
from stayer.events import Event, PermissionRequested, ToolCallFinished
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.rule_edits import RuleEntry

LOCAL = Path(".stayer") / "settings.local.json"


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config"), "STAYER_NO_PREAPPROVED_HOSTS": "1"}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return QueryOptions(cwd=work, provider=model, env=env, persist_session=False, **more)


async def submit(session: stayer.Session, prompt: str = "go") -> list[Event]:
    return [event async for event in session.submit(prompt)]


def outcomes(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in events if isinstance(e, ToolCallFinished)]


def touch(name: str, id: str) -> Any:
    return tool_call("Bash", {"command": f"touch {name}"}, id=id)


async def test_dont_ask_again_is_saved_and_applies_to_the_next_call_of_the_same_run(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([touch("one", "t1"), touch("two", "t2"), text("done")])
    asked: list[PermissionRequested] = []
    holder: list[stayer.Session] = []

    async def decide(request: PermissionRequested) -> Decision:
        asked.append(request)  # the person picks "yes, and don't ask again for touch"
        holder[0].add_rule("allow", "Bash(touch:*)", save=True)
        return Decision("allow")

    async with stayer.Session(options(tmp_path, model, can_use_tool=decide)) as session:
        holder.append(session)
        events = await submit(session)
        work = session.setup.params.tool_context.cwd

    assert [request.tool_use_id for request in asked] == ["t1"]  # the second was not asked
    assert outcomes(events) == [("Bash", "completed"), ("Bash", "completed")]
    assert (work / "one").exists() and (work / "two").exists()
    saved = json.loads((work / LOCAL).read_text())
    assert saved == {"permissions": {"allow": ["Bash(touch:*)"]}}

    # a later session in the project starts with it, from that file
    model = ScriptedProvider([touch("three", "t3"), text("done")])
    async with stayer.Session(options(tmp_path, model)) as later:
        assert RuleEntry("Bash(touch:*)", str(work / LOCAL)) in later.rules().allow
        assert outcomes(await submit(later)) == [("Bash", "completed")]


async def test_a_removed_rule_stops_applying_at_once(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [touch("one", "t1"), text("done"), touch("two", "t2"), text("could not")]
    )
    given = options(tmp_path, model, allowed_tools=["Bash(touch:*)"])
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        first = await submit(session, "first")  # allowed by the rule
        assert session.remove_rule("Bash(touch:*)", save=False) is True
        assert session.remove_rule("Bash(touch:*)", save=False) is False
        assert session.rules().allow == ()
        second = await submit(session, "second")  # headless: what asks is denied

    assert outcomes(first) == [("Bash", "completed")]
    assert outcomes(second) == [("Bash", "denied")]
    assert (work / "one").exists() and not (work / "two").exists()
    assert not (work / ".stayer").exists()  # nothing saved without `save`


async def test_an_allow_rule_added_lets_nothing_through_that_a_deny_rule_forbids(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([tool_call("Bash", {"command": "rm -f keep"}), text("done")])
    given = options(tmp_path, model, disallowed_tools=["Bash(rm:*)"], permission_mode="acceptEdits")
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        (work / "keep").write_text("still here")
        session.add_rule("allow", "Bash(rm:*)", save=True)
        session.add_rule("allow", "Bash", save=False)
        events = await submit(session)

    assert outcomes(events) == [("Bash", "denied")]
    assert (work / "keep").read_text() == "still here"


async def test_a_deny_rule_added_keeps_searches_out_of_the_files_it_names(tmp_path: Path) -> None:
    search = tool_call("Grep", {"pattern": "TOKEN", "output_mode": "files_with_matches"})
    model = ScriptedProvider([search, text("done")])
    async with stayer.Session(options(tmp_path, model)) as session:
        work = session.setup.params.tool_context.cwd
        (work / "secret.env").write_text("TOKEN=1\n")
        (work / "notes.txt").write_text("TOKEN goes in secret.env\n")
        session.add_rule("deny", "Read(*.env)", save=False)
        events = await submit(session)
        session.remove_rule("Read(*.env)", save=False)
        assert session.setup.params.tool_context.denied_reads == ()

    results = [e.result.text for e in events if isinstance(e, ToolCallFinished)]
    assert "notes.txt" in results[0] and "secret.env" not in results[0]


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("", "the permission rule is empty; write Tool or Tool(pattern)"),
        ("Bash(ls", "bad permission rule 'Bash(ls'; write Tool or Tool(pattern)"),
        ("Read Edit", "'Read Edit' reads as 2 rules; give one rule at a time"),
        ("Read(a) Edit(b)", "'Read(a) Edit(b)' reads as 2 rules; give one rule at a time"),
    ],
)
async def test_a_malformed_rule_is_one_line_and_changes_nothing(
    tmp_path: Path, rule: str, said: str
) -> None:
    async with stayer.Session(options(tmp_path, ScriptedProvider([]))) as session:
        before = session.rules()
        with pytest.raises(ConfigError) as raised:
            session.add_rule("allow", rule, save=True)
        with pytest.raises(ConfigError):
            session.remove_rule(rule, save=True)
        assert session.rules() == before
        work = session.setup.params.tool_context.cwd
    message = str(raised.value)
    assert message.startswith(said) and "such as Bash(npm test:*)" in message
    assert "\n" not in message
    assert not (work / ".stayer").exists()


async def test_a_settings_file_that_is_not_json_is_not_overwritten_and_the_rule_not_applied(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([])
    async with stayer.Session(options(tmp_path, model, setting_sources="user")) as session:
        path = session.setup.params.tool_context.cwd / LOCAL
        path.parent.mkdir()
        path.write_text('{"permissions": {')
        with pytest.raises(ConfigError, match=r"is not valid JSON.*fix .* or remove it"):
            session.add_rule("allow", "Bash(make)", save=True)
        assert session.rules().allow == ()
    assert path.read_text() == '{"permissions": {'


async def test_rules_are_listed_by_kind_with_where_each_came_from(tmp_path: Path) -> None:
    model = ScriptedProvider([])
    given = options(tmp_path, model, allowed_tools=["Read"], permission_mode="plan")
    work = Path(str(given.cwd))
    (work / ".claude").mkdir()
    shared = work / ".claude" / "settings.json"
    shared.write_text(json.dumps({"permissions": {"deny": ["Read(/secrets/**)"]}}))
    async with stayer.Session(given) as session:
        session.add_rule("ask", "Bash(git push:*)", save=False)
        session.add_rule("allow", "Edit(/src/**)", save=True)
        view = session.rules()

    root = str(work)
    assert view.mode == "plan"
    assert view.allow == (
        RuleEntry("Read", "flag"),
        RuleEntry(f"Edit(/{root}/src/**)", str(work / LOCAL)),
    )
    assert view.deny == (RuleEntry(f"Read(/{root}/secrets/**)", str(shared)),)
    assert view.ask == (RuleEntry("Bash(git push:*)", "session"),)
    # a `/path` rule is saved as written: in the project's own file it means the same place
    assert json.loads((work / LOCAL).read_text())["permissions"]["allow"] == ["Edit(/src/**)"]


async def test_a_child_sees_its_parents_rules_and_every_later_edit_of_them(
    tmp_path: Path,
) -> None:
    async with stayer.Session(options(tmp_path, ScriptedProvider([]))) as parent:
        parent.add_rule("allow", "Bash(make)", save=False)
        before = parent.derive()
        parent.add_rule("deny", "Bash(curl:*)", save=False)
        parent.add_rule("deny", "Read(*.pem)", save=False)
        parent.remove_rule("Bash(make)", save=False)
        after = parent.derive()
        for child in (before, after):
            rules = child.rules()
            assert [entry.rule for entry in rules.deny] == ["Bash(curl:*)", "Read(*.pem)"]
            assert rules.allow == ()
            assert child.setup.params.tool_context.denied_reads  # searches leave *.pem out
            with pytest.raises(ConfigError, match="a derived session cannot drop it"):
                child.remove_rule("Bash(curl:*)", save=False)
            child.add_rule("allow", "Bash(ls)", save=False)  # its own, not its parent's
            await child.aclose()
        assert [entry.rule for entry in parent.rules().allow] == []
        parent.remove_rule("Bash(curl:*)", save=False)
        assert [entry.rule for entry in before.rules().deny] == ["Read(*.pem)"]


async def test_webfetch_may_reach_a_local_host_only_once_an_allow_rule_names_it(
    tmp_path: Path,
) -> None:
    given = options(tmp_path, ScriptedProvider([]))
    env = {k: v for k, v in (given.env or {}).items() if k != "STAYER_NO_PREAPPROVED_HOSTS"}
    async with stayer.Session(replace(given, env=env)) as session:
        context = session.setup.params.tool_context
        assert context.web_hosts == frozenset()
        built_in = [entry for entry in session.rules().allow if entry.origin == "built-in"]
        assert built_in and all(e.rule.startswith("WebFetch(domain:") for e in built_in)

        session.add_rule("allow", "WebFetch(domain:127.0.0.1)", save=False)
        assert context.web_hosts == frozenset({"127.0.0.1"})  # never a pre-approved site
        session.remove_rule("WebFetch(domain:127.0.0.1)", save=False)
        assert context.web_hosts == frozenset()


async def test_the_repls_kept_rules_allow_no_more_than_the_question_said(tmp_path: Path) -> None:
    """Option 2 of the REPL's question keeps the rule `kept_rule` gives: a file tool's is held
    to the project, a command's matches that command only (its `*` is literal)."""
    from stayer.ui.repl.dialogs import kept_rule

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    model = ScriptedProvider(
        [
            tool_call("Write", {"file_path": "first.txt", "content": "1"}, id="w1"),
            tool_call("Bash", {"command": "rm -f build/*.o"}, id="b1"),
            tool_call("Write", {"file_path": "second.txt", "content": "2"}, id="w2"),
            tool_call("Write", {"file_path": str(outside / "x.txt"), "content": "3"}, id="w3"),
            tool_call("Bash", {"command": "rm -f build/ -r x.o"}, id="b2"),
            text("done"),
        ]
    )
    asked: list[str] = []
    holder: list[stayer.Session] = []

    async def decide(request: PermissionRequested) -> Decision:
        asked.append(request.tool_use_id)
        rule = kept_rule(request)
        if request.tool_use_id in ("w1", "b1") and rule is not None:
            holder[0].add_rule("allow", rule, save=True)  # "yes, and don't ask again"
            return Decision("allow")
        return Decision("deny", "no")

    async with stayer.Session(options(tmp_path, model, can_use_tool=decide)) as session:
        holder.append(session)
        events = await submit(session)
        saved = json.loads((session.setup.params.tool_context.cwd / LOCAL).read_text())

    assert saved["permissions"]["allow"] == ["Write(/**)", "Bash(rm -f build/[*].o)"]
    assert asked == ["w1", "b1", "w3", "b2"]  # second.txt in the project went unasked
    assert outcomes(events) == [
        ("Write", "completed"),
        ("Bash", "completed"),
        ("Write", "completed"),
        ("Write", "denied"),
        ("Bash", "denied"),
    ]
