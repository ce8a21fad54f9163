"""A hook whose matcher is not a valid pattern could never fire: a guard that silently does not
run. It is refused where it is given, in one line: by the SDK's `initialize` (the program gets
the error) and in a settings file (the session does not start), as malformed hooks are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_agent_sdk import HookContext, HookInput, HookJSONOutput, HookMatcher, query

from tests.e2e.cli import stayer
from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer


async def test_an_sdk_hook_with_a_bad_matcher_fails_initialize(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async def guard(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        return {"decision": "block", "reason": "never"}

    said: list[str] = []
    options = sdk_options(
        server,
        tmp_path,
        stderr=said,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="(Bash", hooks=[guard])]},
    )
    with pytest.raises(Exception, match="not a valid regular expression") as raised:
        async for _ in query(prompt="make the file", options=options):
            pass

    assert "'(Bash'" in str(raised.value) and "PreToolUse" in str(raised.value)
    assert server.requests == []  # the session never ran without its guard
    assert len([line for line in said if "not a valid regular expression" in line]) == 1


def test_a_settings_hook_with_a_bad_matcher_stops_the_session(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / ".stayer").mkdir()
    hook = {"matcher": "(Bash", "hooks": [{"type": "command", "command": "exit 2"}]}
    settings = tmp_path / ".stayer" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))

    done = stayer("-p", "hi", cwd=tmp_path, env=server.env())

    assert done.status == 2
    [line] = done.stderr.splitlines()
    assert str(settings) in line and "'(Bash' is not a valid regular expression" in line
    assert server.requests == []
