"""/permissions: the mode and rules in force, and rules added or removed from the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stayer.events import Finished
from stayer.session.session import Session
from stayer.ui.repl.commands_permissions import USAGE
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.ui.repl.commands_kit import RecordingRepl, opened, run

edits_rules = pytest.mark.skipif(
    not hasattr(Session, "add_rule"),
    reason="Session.add_rule and remove_rule come with the session branch",
)


async def test_permissions_lists_the_mode_and_each_kinds_rules(tmp_path: Path) -> None:
    (tmp_path / ".stayer").mkdir()
    (tmp_path / ".stayer" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Bash(git push:*)"], "allow": ["Bash(npm test:*)"]}})
    )
    with FakeModelServer() as server:
        async with opened(
            server,
            tmp_path,
            permission_mode="acceptEdits",
            allowed_tools=["Bash(npm test:*)", "WebFetch(domain:docs.python.org)"],
            disallowed_tools=["Read(.env)"],
        ) as session:
            repl = RecordingRepl(session, running=True)
            assert await run(repl, "/permissions") == [
                "Permission mode: acceptEdits (Shift+Tab switches)\n"
                "Allow:\n"
                "  Bash(npm test:*)\n"
                "  WebFetch(domain:docs.python.org)\n"
                "Ask:\n"
                "  Bash(git push:*)\n"
                "Deny:\n"
                "  Read(.env)\n"
                "WebFetch also reaches 15 documentation sites without asking "
                "(STAYER_NO_PREAPPROVED_HOSTS=1 turns that off)\n"
                "Change: /permissions allow|ask|deny RULE, /permissions remove RULE"
            ]
        env = {"STAYER_NO_PREAPPROVED_HOSTS": "1"}
        async with opened(server, tmp_path, env=env, setting_sources="") as bare:
            [text] = await run(RecordingRepl(bare), "/permissions")
    assert text.splitlines()[1:7] == ["Allow:", "  none", "Ask:", "  none", "Deny:", "  none"]
    assert "documentation sites" not in text


async def test_permissions_explains_itself_for_what_it_cannot_read(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            before = session.setup.permissions.policy
            repl = RecordingRepl(session)
            lines = ("/permissions grant Bash", "/permissions allow", "/permissions remove\t ")
            for line in lines:
                assert await run(repl, line) == [USAGE]
            assert session.setup.permissions.policy == before


@edits_rules
async def test_an_allow_rule_added_applies_at_once_and_is_saved(tmp_path: Path) -> None:
    touch = ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})
    with FakeModelServer() as server:
        server.enqueue(reply(touch), reply("refused, then"), reply(touch), reply("made it"))
        async with opened(server, tmp_path) as session:
            async for _ in session.submit("make the file"):  # asked, nobody to answer: denied
                pass
            assert not (tmp_path / "made.txt").exists()
            repl = RecordingRepl(session)
            assert await run(repl, "/permissions allow Bash(touch made.txt)") == [
                "Added allow rule Bash(touch made.txt): it applies now and is saved in "
                ".stayer/settings.local.json"
            ]
            events = [event async for event in session.submit("again, please")]
            assert isinstance(events[-1], Finished)
            assert (tmp_path / "made.txt").exists()
            [listed] = await run(repl, "/permissions")
            assert "Allow:\n  Bash(touch made.txt)\n" in listed
            saved = json.loads((tmp_path / ".stayer" / "settings.local.json").read_text())
            assert saved["permissions"]["allow"] == ["Bash(touch made.txt)"]
            assert await run(repl, "/permissions remove Bash(touch made.txt)") == [
                "Removed Bash(touch made.txt): it no longer applies (nor is it in "
                ".stayer/settings.local.json; another settings file that lists it still does "
                "for later sessions)"
            ]
            assert await run(repl, "/permissions remove Bash(touch made.txt)") == [
                "No rule Bash(touch made.txt) to remove; /permissions lists the rules in force"
            ]
            [listed] = await run(repl, "/permissions")
            assert "Bash(touch made.txt)" not in listed
    saved = json.loads((tmp_path / ".stayer" / "settings.local.json").read_text())
    assert "Bash(touch made.txt)" not in saved["permissions"].get("allow", [])


@edits_rules
async def test_a_rule_that_does_not_parse_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            before = session.setup.permissions.policy
            [line] = await run(RecordingRepl(session), "/permissions deny Bash(rm")
            assert line.startswith("/permissions: ") and "\n" not in line
            assert session.setup.permissions.policy == before
    assert not (tmp_path / ".stayer" / "settings.local.json").exists()
