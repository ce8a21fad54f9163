"""`stayer mcp list|get|add|add-json|remove|approve` as a person types them: each scope writes its
own file, list and get show what a session would do with every server (without starting one),
a project's servers wait for `approve`, and every mistake is one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import Completed, stayer


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "stayer-home").mkdir()
    (tmp_path / "claude-home").mkdir()
    return {
        "STAYER_CONFIG_DIR": str(tmp_path / "stayer-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home"),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def mcp(project: Path, home: dict[str, str], *words: str) -> Completed:
    return stayer("mcp", *words, cwd=project, env=home)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_add_list_get_remove_in_every_scope(project: Path, home: dict[str, str]) -> None:
    local = project / ".stayer" / "settings.local.json"
    user = Path(home["STAYER_CONFIG_DIR"]) / "settings.json"

    done = mcp(project, home, "add", "-e", "TZ=UTC", "time", "--", "uvx", "mcp-server-time", "-v")
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout == f"Added stdio MCP server time to local settings: {local}\n"
    assert read(local) == {
        "mcpServers": {
            "time": {
                "type": "stdio",
                "command": "uvx",
                "args": ["mcp-server-time", "-v"],
                "env": {"TZ": "UTC"},
            }
        }
    }
    header = "Authorization: Bearer ${TOKEN:-none}"
    done = mcp(project, home, "add", "--scope=user", "-t", "http", "-H", header,
               "docs", "https://example.com/mcp")  # fmt: skip
    assert (done.status, done.stdout) == (
        0,
        f"Added http MCP server docs to user settings: {user}\n",
    )
    assert read(user)["mcpServers"]["docs"] == {
        "type": "http",
        "url": "https://example.com/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN:-none}"},
    }
    entry = '{"command": "srv", "args": ["--port", "1"], "timeout": 2000}'
    done = mcp(project, home, "add-json", "-s", "project", "shared", entry)
    assert done.stdout == (
        f"Added stdio MCP server shared to the project's .mcp.json: {project / '.mcp.json'}\n"
        "It starts once approved: stayer mcp approve shared\n"
    )

    done = mcp(project, home, "list")
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout == (
        "docs: https://example.com/mcp (http, user)\n"
        "shared: srv --port 1 (stdio, project) - needs approval: stayer mcp approve shared\n"
        "time: uvx mcp-server-time -v (stdio, local)\n"
    )
    done = mcp(project, home, "get", "docs")
    assert (done.status, done.stdout) == (
        0,
        f"docs:\n  scope: user ({user})\n  status: starts with the session\n  type: http\n"
        "  url: https://example.com/mcp\n  headers: Authorization\n",  # no secret shown
    )
    assert mcp(project, home, "get", "shared").stdout == (
        f"shared:\n  scope: project ({project / '.mcp.json'})\n"
        "  status: needs approval: stayer mcp approve shared\n  type: stdio\n  command: srv\n"
        "  args: --port 1\n  timeout: 2 s\n"
    )

    done = mcp(project, home, "remove", "time")
    assert (done.status, done.stdout) == (
        0,
        f"Removed MCP server time from local settings: {local}\n",
    )
    assert read(local) == {"mcpServers": {}}
    assert mcp(project, home, "remove", "-s", "user", "docs").status == 0
    assert mcp(project, home, "list").stdout == (
        "shared: srv --port 1 (stdio, project) - needs approval: stayer mcp approve shared\n"
    )
    done = mcp(project, home, "get", "time")
    assert (done.status, done.stdout) == (1, "")
    assert done.stderr == (
        "stayer: mcp get: no MCP server named time is configured here; stayer mcp list shows them\n"
    )


def test_approve_lets_a_projects_servers_start(project: Path, home: dict[str, str]) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})
    )
    (project / ".stayer").mkdir()
    local = project / ".stayer" / "settings.local.json"
    local.write_text(json.dumps({"disabledMcpjsonServers": ["a"], "model": "sonnet"}))
    assert mcp(project, home, "list").stdout == (
        "a: x (stdio, project) - disabled (disabledMcpjsonServers)\n"
        "b: y (stdio, project) - needs approval: stayer mcp approve b\n"
    )

    done = mcp(project, home, "approve", "a", "later")
    assert (done.status, done.stdout) == (0, f"Approved a, later in {local}\n")
    assert done.stderr == "stayer: note: no MCP server named later is configured here yet\n"
    assert read(local) == {
        "disabledMcpjsonServers": [],  # approving turns it back on
        "model": "sonnet",
        "enabledMcpjsonServers": ["a", "later"],
    }
    assert mcp(project, home, "list").stdout == (
        "a: x (stdio, project)\nb: y (stdio, project) - needs approval: stayer mcp approve b\n"
    )
    assert mcp(project, home, "approve", "--all").status == 0
    assert read(local)["enableAllProjectMcpServers"] is True
    assert mcp(project, home, "list").stdout == "a: x (stdio, project)\nb: y (stdio, project)\n"


def test_approval_in_a_file_git_tracks_is_refused(project: Path, home: dict[str, str]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    local = project / ".stayer" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"enabledMcpjsonServers": ["a"]}))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", ".stayer"], cwd=project, check=True)

    done = mcp(project, home, "list")
    assert done.stdout == "a: x (stdio, project) - needs approval: stayer mcp approve a\n"
    assert done.stderr == (
        f"stayer: {local}: enabledMcpjsonServers ignored: git tracks this file, so it is the "
        "repository's word, not yours; untrack it (git rm --cached) and approve again\n"
    )
    done = mcp(project, home, "approve", "a")
    assert (done.status, done.stdout) == (1, "")
    assert done.stderr == (
        f"stayer: mcp approve: git tracks {local}, so an approval there would be the "
        "repository's word and does not count; untrack it (git rm --cached) and try again\n"
    )


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (("frob",), "mcp: 'frob' is not one of its commands (list, get, add, add-json, remove, "
                    "approve, serve); see stayer mcp --help"),
        (("add", "time"), "mcp add: give a NAME and a COMMAND (or URL); see stayer mcp add --help"),
        (("add", "two words", "x"),
         "mcp add: 'two words' is not a server name: use letters, digits, _ and - only"),
        (("add", "a__b", "x"),
         "mcp add: 'a__b' is not a server name: it may not contain '__', which separates server "
         "and tool in a tool's name"),
        (("add-json", "a__b", '{"command": "x"}'),
         "mcp add-json: 'a__b' is not a server name: it may not contain '__', which separates "
         "server and tool in a tool's name"),
        (("add", "-s", "global", "a", "x"),
         "mcp add: unknown scope 'global'; use local, project or user"),
        (("add", "--color", "a", "x"),
         "mcp add: unknown option --color; see stayer mcp add --help"),
        (("add", "-t", "http", "a", "ftp://x"),
         "mcp add: 'ftp://x' is not an http:// or https:// URL"),
        (("add", "-H", "X: 1", "a", "cmd"),
         "mcp add: -H is for http and sse servers; use -e for a stdio one"),
        (("add", "-e", "NOEQUALS", "a", "cmd"), "mcp add: -e takes KEY=VALUE (got 'NOEQUALS')"),
        (("add-json", "a", "{nope"), "mcp add-json: '{nope' is not valid JSON"),
        (("add-json", "a", '{"type": "http"}'),
         'mcp add-json: needs a "url", as a non-empty string'),
        (("get",), "mcp get: give one server name; usage: stayer mcp get NAME"),
        (("list", "x"), "mcp list: takes no arguments (got 'x'); usage: stayer mcp list"),
        (("approve",),
         "mcp approve: give server names, or --all; usage: stayer mcp approve NAME..."),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_and_status_2(
    project: Path, home: dict[str, str], words: tuple[str, ...], said: str
) -> None:
    done = mcp(project, home, *words)
    assert (done.status, done.stdout, done.stderr) == (2, "", f"stayer: {said}\n")
    assert not (project / ".stayer").exists()  # nothing written
    assert not (project / ".mcp.json").exists()


def test_help_for_each_command_and_a_help_word_of_the_servers_own(
    project: Path, home: dict[str, str]
) -> None:
    alone = mcp(project, home)
    assert (alone.status, alone.stdout) == (2, "")
    assert alone.stderr.startswith("usage: stayer mcp COMMAND [...]\n")
    assert mcp(project, home, "--help").stdout == alone.stderr
    for command in ("list", "get", "add", "add-json", "remove", "approve"):
        done = mcp(project, home, command, "--help")
        assert (done.status, done.stderr) == (0, "")
        assert done.stdout.startswith(f"usage: stayer mcp {command}")
    done = mcp(project, home, "add", "tool", "srv", "--help")  # srv's own flag
    assert done.status == 0
    assert read(project / ".stayer" / "settings.local.json")["mcpServers"]["tool"]["args"] == [
        "--help"
    ]


def test_a_name_in_two_scopes_must_be_chosen_to_remove(project: Path, home: dict[str, str]) -> None:
    assert mcp(project, home, "add", "twin", "a").status == 0
    assert mcp(project, home, "add", "-s", "user", "twin", "b").status == 0
    done = mcp(project, home, "add", "twin", "c")
    assert (done.status, done.stderr) == (
        1,
        f"stayer: mcp add: twin is already in {project / '.stayer/settings.local.json'}; remove "
        "it first (stayer mcp remove -s local twin)\n",
    )
    done = mcp(project, home, "remove", "twin")
    assert (done.status, done.stderr) == (
        2,
        "stayer: mcp remove: twin is in local and user; choose one with -s\n",
    )
    assert mcp(project, home, "remove", "-s", "local", "twin").status == 0
    assert mcp(project, home, "list").stdout == "twin: b (stdio, user)\n"


def test_a_project_file_linked_out_of_the_project_is_not_written(
    project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    (project / ".mcp.json").symlink_to(outside)
    done = mcp(project, home, "add", "-s", "project", "a", "x")
    assert done.status == 2
    assert done.stderr.startswith(f"stayer: {project / '.mcp.json'} leads to {outside}, outside")
    assert outside.read_text() == "{}"


def test_list_says_what_the_settings_left_out(project: Path, home: dict[str, str]) -> None:
    user = Path(home["STAYER_CONFIG_DIR"]) / "settings.json"
    user.write_text('{"enabledMcpjsonServers": "a"}')
    (project / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}')
    done = mcp(project, home, "list")
    assert (done.status, done.stdout) == (
        0,
        "No MCP servers configured. Add one with `stayer mcp add`.\n",
    )
    assert done.stderr.splitlines() == [
        f'stayer: {user}:1:27: enabledMcpjsonServers: input should be a valid array (got "a"); '
        "ignored this value, the rest of the file applies",
        f"stayer: {project / '.mcp.json'}:1:39: not valid JSON (Expecting ',' delimiter); none "
        "of its MCP servers were started",
    ]


def test_list_and_get_show_the_servers_claude_mcp_add_wrote(
    project: Path, home: dict[str, str]
) -> None:
    claude_json = Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    claude_json.write_text(
        json.dumps(
            {
                "mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp"}},
                "projects": {
                    str(project): {
                        "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}},
                        "enabledMcpjsonServers": ["shared"],
                    }
                },
            }
        )
    )
    (project / ".mcp.json").write_text('{"mcpServers": {"shared": {"command": "srv"}}}')
    done = mcp(project, home, "list")
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout == (
        "docs: https://example.com/mcp (http, user)\n"
        "shared: srv (stdio, project)\n"  # approved in Claude Code's file
        "time: uvx mcp-server-time (stdio, local)\n"
    )
    assert mcp(project, home, "get", "time").stdout.startswith(
        f'time:\n  scope: local ({claude_json} (projects["{project}"]))\n'
    )
    assert mcp(project, home, "get", "docs").stdout.startswith(
        f"docs:\n  scope: user ({claude_json})\n"
    )
    unread = stayer("mcp", "list", cwd=project, env={**home, "STAYER_NO_CLAUDE_SETTINGS": "1"})
    assert unread.stdout == (
        "shared: srv (stdio, project) - needs approval: stayer mcp approve shared\n"
    )
