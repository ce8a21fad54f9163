"""In-process servers of a claude-agent-sdk program (`"type": "sdk"`): taken from `--mcp-config`
only when such a program runs stayer, refused in one line naming them anywhere else."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stayer.config import load_settings
from stayer.config.mcp_servers import McpServers, entry_problem, load_mcp_servers

SDK_SERVER = {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}


def load(
    project: Path,
    home: Mapping[str, str],
    *,
    flags: tuple[str | Mapping[str, Any], ...] = (),
    sdk: bool,
) -> McpServers:
    loaded = load_settings(project, dict(home))
    return load_mcp_servers(
        cwd=project,
        env=dict(home),
        settings=loaded,
        flag_configs=flags,
        tracked=lambda path: False,
        sdk_servers=sdk,
    )


def test_the_sdk_running_stayer_gets_its_servers_from_mcp_config(
    project: Path, home: dict[str, str]
) -> None:
    found = load(project, home, flags=(json.dumps(SDK_SERVER),), sdk=True)
    assert found.failed == ()
    [calc] = found.start
    assert (calc.name, calc.transport, calc.scope, calc.trusted) == ("calc", "sdk", "flag", True)


def test_without_the_sdk_an_sdk_server_in_mcp_config_is_refused_in_one_line(
    project: Path, home: dict[str, str]
) -> None:
    found = load(project, home, flags=(json.dumps(SDK_SERVER),), sdk=False)
    assert found.start == ()
    assert found.failed == (
        (
            "calc",
            '"type": "sdk" names a server inside a claude-agent-sdk program, and none runs '
            'stayer here to reach it through; give it a "command" or a "url" instead '
            "(in --mcp-config)",
        ),
    )


def test_a_settings_file_may_not_name_an_sdk_server_even_under_the_sdk(
    project: Path, home: dict[str, str]
) -> None:
    settings = Path(home["STAYER_CONFIG_DIR"]) / "settings.json"
    settings.write_text(json.dumps(SDK_SERVER))
    mcp_json = project / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"other": {"type": "sdk"}}}))
    found = load(project, home, sdk=True)
    assert (found.start, found.needs_approval) == ((), ())
    why = (
        '"type": "sdk" names a server inside a claude-agent-sdk program, which only that '
        "program's own --mcp-config can name; remove it from this file"
    )
    assert dict(found.failed) == {
        "calc": f"{why} (in {settings})",
        "other": f"{why} (in {mcp_json})",
    }


def test_stayer_mcp_add_json_refuses_an_sdk_server() -> None:
    problem = entry_problem("calc", {"type": "sdk", "name": "calc"})
    assert problem is not None
    assert problem.startswith('"type": "sdk" names a server inside a claude-agent-sdk program')
