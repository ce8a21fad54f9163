"""Which MCP servers a session starts: Claude Code's entry format, `${VAR}` expansion, which
place wins for a name, one bad entry costing only itself, and the approval a repository's
servers need (from the user's own files only; a local file git tracks is the repository's)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stayer.config import load_settings
from stayer.config.mcp_servers import (
    McpServerConfig,
    McpServers,
    TrackedCheck,
    entry_problem,
    load_mcp_servers,
)
from stayer.context.git import git_tracks
from stayer.errors import ConfigError


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


def load(
    project: Path,
    home: Mapping[str, str],
    *,
    env: Mapping[str, str] | None = None,
    flags: Sequence[str | Mapping[str, Any]] = (),
    strict: bool = False,
    tracked: TrackedCheck | None = lambda path: False,
) -> McpServers:
    environment = {**home, **(env or {})}
    loaded = load_settings(project, environment)
    return load_mcp_servers(
        cwd=project,
        env=environment,
        settings=loaded,
        flag_configs=flags,
        strict=strict,
        tracked=tracked,
    )


def names(configs: Sequence[McpServerConfig]) -> list[str]:
    return [config.name for config in configs]


def user_file(home: Mapping[str, str]) -> Path:
    return Path(home["STAYER_CONFIG_DIR"]) / "settings.json"


TIME = {"command": "uvx", "args": ["mcp-server-time"]}


# --- the format -------------------------------------------------------------------------------


def test_claude_codes_entries_are_read_whole(project: Path, home: dict[str, str]) -> None:
    origin = write(
        user_file(home),
        servers(
            time={**TIME, "env": {"TZ": "UTC"}, "cwd": "tools", "timeout": 1500},
            typed={"type": "stdio", "command": "srv", "alwaysLoad": True},
            web={"type": "http", "url": "https://example.com/mcp", "headers": {"X-A": "1"}},
            newer={"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
            old={"type": "sse", "url": "http://127.0.0.1:9/sse"},
        ),
    )
    found = load(project, home)
    assert (found.needs_approval, found.disabled, found.failed, found.warnings) == ((), (), (), ())
    common: dict[str, Any] = {"scope": "user", "origin": str(origin), "trusted": True}
    assert found.start == (
        McpServerConfig(name="newer", transport="http", url="http://127.0.0.1:9/mcp", **common),
        McpServerConfig(name="old", transport="sse", url="http://127.0.0.1:9/sse", **common),
        McpServerConfig(
            name="time",
            transport="stdio",
            command="uvx",
            args=("mcp-server-time",),
            env={"TZ": "UTC"},
            cwd=str(project / "tools"),  # relative to the project
            timeout_s=1.5,  # the file says milliseconds
            **common,
        ),
        McpServerConfig(  # no folder of its own: the session's (not stayer's launch folder)
            name="typed",
            transport="stdio",
            command="srv",
            cwd=str(project),
            always_load=True,
            **common,
        ),
        McpServerConfig(
            name="web",
            transport="http",
            url="https://example.com/mcp",
            headers={"X-A": "1"},
            **common,
        ),
    )


def test_variables_expand_everywhere_a_server_is_described(
    project: Path, home: dict[str, str]
) -> None:
    write(
        user_file(home),
        servers(
            local={
                "command": "${BIN}/srv",
                "args": ["--token=${TOKEN}", "${MISSING:-fallback}", "${EMPTY:-filled}", "$TOKEN"],
                "env": {"KEY": "${TOKEN}"},
                "cwd": "${BIN}",
            },
            remote={
                "type": "http",
                "url": "https://${HOST:-example.com}/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
        ),
    )
    env = {"BIN": "/opt/bin", "TOKEN": "t0k", "EMPTY": ""}
    local, remote = load(project, home, env=env).start
    assert (local.command, local.args, local.env, local.cwd) == (
        "/opt/bin/srv",
        ("--token=t0k", "fallback", "filled", "$TOKEN"),  # only the braced form expands
        {"KEY": "t0k"},
        "/opt/bin",
    )
    assert (remote.url, remote.headers) == (
        "https://example.com/mcp",
        {"Authorization": "Bearer t0k"},
    )


def test_an_unset_variable_without_a_default_fails_only_its_server(
    project: Path, home: dict[str, str]
) -> None:
    origin = write(
        user_file(home),
        servers(
            needs={"type": "http", "url": "https://x/mcp", "headers": {"A": "${GH_TOKEN}"}},
            fine=TIME,
        ),
    )
    found = load(project, home)
    assert names(found.start) == ["fine"]
    assert found.failed == (
        (
            "needs",
            "needs the environment variable GH_TOKEN; set it or give a default as "
            f"${{GH_TOKEN:-value}} (in {origin})",
        ),
    )


def test_each_bad_entry_fails_alone_with_one_line(project: Path, home: dict[str, str]) -> None:
    origin = write(
        user_file(home),
        servers(
            **{
                "bad name": TIME,
                "no-command": {"type": "stdio", "args": []},
                "no-url": {"type": "http"},
                "url-untyped": {"url": "https://x/mcp"},
                "nothing": {},
                "odd-type": {"type": "websocket", "url": "ws://x"},
                "args-text": {"command": "x", "args": "-y pkg"},
                "env-number": {"command": "x", "env": {"A": 1}},
                "slow": {"command": "x", "timeout": "30s"},
                "never": {"command": "x", "timeout": float("nan")},
                "endless": {"command": "x", "timeout": float("inf")},
                "zero": {"command": "x", "timeout": 0},
                "a__b": TIME,
                "loaded": {"command": "x", "alwaysLoad": "yes"},
                "scalar": "uvx mcp-server-time",
                "good_one": TIME,
            }
        ),
    )
    found = load(project, home)
    assert names(found.start) == ["good_one"]
    assert dict(found.failed) == {
        name: f"{why} (in {origin})"
        for name, why in {
            "args-text": '"args" must be a list of strings',
            "bad name": "a server name may hold only letters, digits, _ and -",
            "env-number": '"env" must be an object of strings',
            "loaded": '"alwaysLoad" must be true or false (got "yes")',
            "no-command": 'needs a "command": the program to start, as a non-empty string',
            "no-url": 'needs a "url", as a non-empty string',
            "nothing": 'needs a "command" (stdio) or "type" and "url" (http, sse)',
            "odd-type": 'unknown "type" "websocket"; use "stdio", "http" or "sse"',
            "scalar": "a server must be a JSON object, not str",
            "slow": '"timeout" must be a number of milliseconds above 0 (got "30s")',
            "never": '"timeout" must be a number of milliseconds above 0 (got NaN)',
            "endless": '"timeout" must be a number of milliseconds above 0 (got Infinity)',
            "zero": '"timeout" must be a number of milliseconds above 0 (got 0)',
            "a__b": "a server name may not contain '__', which separates server and tool in a "
            "tool's name (mcp__server__tool); rename it",
            "url-untyped": 'a server with a "url" needs "type": "http" (or "sse")',
        }.items()
    }


def test_entry_problem_checks_the_shape_and_leaves_variables_for_later() -> None:
    assert entry_problem("gh", {"type": "http", "url": "https://x/${UNSET_HERE}"}) is None
    assert entry_problem("gh", {"type": "http"}) == 'needs a "url", as a non-empty string'
    assert entry_problem("g h", TIME) == "a server name may hold only letters, digits, _ and -"


# --- where servers come from ------------------------------------------------------------------


def test_the_nearest_place_wins_for_a_name(project: Path, home: dict[str, str]) -> None:
    approve_all = {"enableAllProjectMcpServers": True}
    write(user_file(home), {**servers(s={"command": "user"}), **approve_all})
    write(project / ".mcp.json", servers(s={"command": "mcpjson"}))
    write(project / ".stayer" / "settings.json", servers(s={"command": "project"}))
    write(project / ".claude" / "settings.local.json", servers(s={"command": "claude-local"}))
    local = write(project / ".stayer" / "settings.local.json", servers(s={"command": "local"}))
    flag_file = write(project / "mcp.json", servers(s={"command": "flag-file"}))

    def winner(**options: Any) -> tuple[str, str, str]:
        (config,) = load(project, home, **options).start
        return config.command, config.scope, config.origin

    assert winner() == ("local", "local", str(local))
    local.unlink()
    assert winner() == ("claude-local", "local", str(project / ".claude/settings.local.json"))
    (project / ".claude" / "settings.local.json").unlink()
    assert winner() == ("project", "project", str(project / ".stayer/settings.json"))
    (project / ".stayer" / "settings.json").unlink()
    assert winner() == ("mcpjson", "mcpjson", str(project / ".mcp.json"))
    (project / ".mcp.json").unlink()
    assert winner() == ("user", "user", str(user_file(home)))
    inline = '{"mcpServers": {"s": {"command": "inline"}}}'
    assert winner(flags=["mcp.json"]) == ("flag-file", "flag", str(flag_file))
    assert winner(flags=["mcp.json", inline]) == ("inline", "flag", "--mcp-config")


def test_strict_takes_only_the_mcp_config_servers(project: Path, home: dict[str, str]) -> None:
    write(user_file(home), servers(mine=TIME))
    write(project / ".mcp.json", servers(theirs=TIME))
    given = {"mcpServers": {"flagged": {"command": "srv"}}}
    found = load(project, home, flags=[given], strict=True)
    assert (names(found.start), found.needs_approval) == (["flagged"], ())
    assert found.start[0].trusted is True
    both = load(project, home, flags=[given])
    assert (names(both.start), names(both.needs_approval)) == (["flagged", "mine"], ["theirs"])


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("missing.json", "--mcp-config missing.json: cannot read it (No such file or directory)"),
        ('{"mcpServers": ', "--mcp-config: not valid JSON (Expecting value at line 1 column 16)"),
        ('{"servers": {}}', '--mcp-config: has no "mcpServers" object'),
        ('{"mcpServers": []}', '--mcp-config: has no "mcpServers" object'),
        ("", "--mcp-config: an empty value; give a file, or JSON such as"),
        ("  ", "--mcp-config: an empty value; give a file, or JSON such as"),
        # JSON, never a file named `[...`
        (
            ' [{"mcpServers": {}}]',
            '--mcp-config: must hold a JSON object with "mcpServers", not '
            "a list; give a file, or JSON such as",
        ),
        ("[1,", "--mcp-config: not valid JSON"),
    ],
)
def test_a_broken_mcp_config_stops_the_run_in_one_line(
    project: Path, home: dict[str, str], given: str, said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        load(project, home, flags=[given])
    assert str(raised.value).startswith(said)
    assert "\n" not in str(raised.value)


def test_a_mcp_config_file_that_is_not_an_object_stops_the_run(
    project: Path, home: dict[str, str]
) -> None:
    write(project / "list.json", "[1, 2]")
    with pytest.raises(ConfigError) as raised:
        load(project, home, flags=["list.json"])
    assert str(raised.value) == (
        '--mcp-config list.json: must hold a JSON object with "mcpServers", not a list; give a '
        "file, or JSON such "
        """as '{"mcpServers": {"name": {"command": "..."}}}'"""
    )


def test_a_broken_mcp_json_is_a_warning_and_nothing_of_it_starts(
    project: Path, home: dict[str, str]
) -> None:
    write(user_file(home), {**servers(mine=TIME), "enableAllProjectMcpServers": True})
    write(project / ".mcp.json", '{"mcpServers": {\n  "a": {"command": "x"},\n}}')
    found = load(project, home)
    assert (names(found.start), found.needs_approval) == (["mine"], ())
    assert found.warnings == (
        f"{project / '.mcp.json'}:3:1: not valid JSON (Expecting property name enclosed in "
        "double quotes); none of its MCP servers were started",
    )
    write(project / ".mcp.json", '{"servers": {}}')
    assert load(project, home).warnings == (
        f'{project / ".mcp.json"}: has no "mcpServers" object; none of its MCP servers were '
        "started",
    )


def test_bad_approval_values_are_dropped_but_a_bad_disabled_list_stops_the_run(
    project: Path, home: dict[str, str]
) -> None:
    write(project / ".mcp.json", servers(theirs=TIME))
    write(user_file(home), {"enabledMcpjsonServers": "theirs", "mcpServers": ["x"]})
    loaded = load_settings(project, home)
    assert [line.split(": ", 1)[1] for line in loaded.warnings] == [
        'enabledMcpjsonServers: input should be a valid array (got "theirs"); ignored this '
        "value, the rest of the file applies",
        'mcpServers: input should be an object (got ["x"]); ignored this value, the rest of '
        "the file applies",
    ]
    assert names(load(project, home).needs_approval) == ["theirs"]  # fewer start, never more
    # dropping a disabled list would start what someone turned off: the file is unusable
    write(user_file(home), {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": "x"})
    with pytest.raises(ConfigError, match="disabledMcpjsonServers: input should be a valid array"):
        load(project, home)


# --- approval ---------------------------------------------------------------------------------


def test_a_projects_servers_wait_for_approval(project: Path, home: dict[str, str]) -> None:
    origin = write(project / ".mcp.json", servers(theirs=TIME))
    write(project / ".claude" / "settings.json", servers(shared={"command": "srv"}))
    found = load(project, home)
    assert found.start == ()
    assert found.needs_approval == (
        McpServerConfig(
            name="shared",
            transport="stdio",
            scope="project",
            origin=str(project / ".claude/settings.json"),
            command="srv",
            cwd=str(project),
        ),
        McpServerConfig(
            name="theirs",
            transport="stdio",
            scope="mcpjson",
            origin=str(origin),
            command="uvx",
            args=("mcp-server-time",),
            cwd=str(project),
        ),
    )
    assert all(config.trusted is False for config in found.needs_approval)


@pytest.mark.parametrize(
    "approver",
    ["user", "flag", ".stayer/settings.local.json", ".claude/settings.local.json"],
)
def test_the_users_own_files_approve(project: Path, home: dict[str, str], approver: str) -> None:
    write(project / ".mcp.json", servers(a=TIME, b=TIME, c=TIME))
    approval = {"enabledMcpjsonServers": ["a", "c"], "disabledMcpjsonServers": ["c"]}
    if approver == "flag":  # --settings
        loaded = load_settings(project, home, flag_settings=approval)
        found = load_mcp_servers(cwd=project, env=home, settings=loaded, tracked=lambda p: False)
    else:
        write(user_file(home) if approver == "user" else project / approver, approval)
        found = load(project, home)
    assert names(found.start) == ["a"]
    assert found.start[0].trusted is True  # approved: what it says of its tools counts
    assert names(found.needs_approval) == ["b"]
    assert names(found.disabled) == ["c"]  # disabled wins over enabled
    assert found.warnings == ()


def test_enable_all_starts_every_project_server_but_the_disabled(
    project: Path, home: dict[str, str]
) -> None:
    write(project / ".mcp.json", servers(a=TIME, b=TIME))
    write(project / ".stayer" / "settings.json", servers(c=TIME))
    write(
        project / ".stayer" / "settings.local.json",
        {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["b"]},
    )
    found = load(project, home)
    assert (names(found.start), names(found.disabled)) == (["a", "c"], ["b"])
    write(user_file(home), {"enableAllProjectMcpServers": True})
    write(project / ".stayer" / "settings.local.json", {"enableAllProjectMcpServers": False})
    assert names(load(project, home).needs_approval) == ["a", "b", "c"]  # the nearer file says


@pytest.mark.parametrize("folder", [".claude", ".stayer"])
def test_a_project_cannot_approve_its_own_servers(
    project: Path, home: dict[str, str], folder: str
) -> None:
    write(project / ".mcp.json", servers(theirs=TIME))
    settings = write(
        project / folder / "settings.json",
        {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["theirs"]},
    )
    found = load(project, home)
    assert (found.start, names(found.needs_approval)) == ((), ["theirs"])
    assert found.warnings == (
        f"{settings}: enableAllProjectMcpServers, enabledMcpjsonServers ignored: a project's "
        "settings come with the repository, which cannot approve itself; approve with "
        "`stayer mcp approve NAME`, which writes .stayer/settings.local.json",
    )


def test_a_local_file_git_tracks_is_the_repositorys(project: Path, home: dict[str, str]) -> None:
    write(project / ".mcp.json", servers(theirs=TIME))
    local = write(
        project / ".stayer" / "settings.local.json",
        {**servers(shipped=TIME), "enabledMcpjsonServers": ["theirs", "shipped"]},
    )
    found = load(project, home, tracked=lambda path: path == local)
    assert found.start == ()
    assert names(found.needs_approval) == ["shipped", "theirs"]
    assert found.needs_approval[0].scope == "local"
    assert found.warnings == (
        f"{local}: enabledMcpjsonServers ignored: git tracks this file, so it is the "
        "repository's word, not yours; untrack it (git rm --cached) and approve again",
    )


def git(project: Path, *args: str) -> None:
    environment = {"PATH": os.environ["PATH"], "HOME": str(project.parent), "LC_ALL": "C"}
    subprocess.run(["git", *args], cwd=project, env=environment, check=True, capture_output=True)


def test_git_is_asked_whether_it_tracks_the_local_file(project: Path, home: dict[str, str]) -> None:
    write(project / ".mcp.json", servers(theirs=TIME))
    local = write(
        project / ".stayer" / "settings.local.json", {"enabledMcpjsonServers": ["theirs"]}
    )
    assert git_tracks(local) is False  # no repository: nothing ships it
    assert names(load(project, home, tracked=git_tracks).start) == ["theirs"]

    git(project, "init", "-q")
    assert git_tracks(local) is False  # a repository that does not hold it
    assert names(load(project, home, tracked=git_tracks).start) == ["theirs"]
    # without a way to ask git, a file in a work tree might be tracked: fail closed
    assert names(load(project, home, tracked=None).needs_approval) == ["theirs"]

    git(project, "add", ".stayer/settings.local.json")
    assert git_tracks(local) is True
    found = load(project, home, tracked=git_tracks)
    assert (found.start, names(found.needs_approval)) == ((), ["theirs"])


def test_a_local_file_linked_to_a_tracked_one_is_tracked(project: Path) -> None:
    git(project, "init", "-q")
    shipped = write(project / "approvals.json", {"enabledMcpjsonServers": ["theirs"]})
    git(project, "add", "approvals.json")
    (project / ".stayer").mkdir()
    (project / ".stayer" / "settings.local.json").symlink_to(shipped)
    assert git_tracks(project / ".stayer" / "settings.local.json") is True


def test_without_any_mcp_setting_nothing_is_asked(project: Path, home: dict[str, str]) -> None:
    asked: list[Path] = []
    write(project / ".stayer" / "settings.local.json", {"model": "sonnet"})

    def tracked(path: Path) -> bool:
        asked.append(path)
        return True

    assert load(project, home, tracked=tracked) == McpServers()
    assert asked == []  # git is not run for a local file that says nothing of MCP


def test_an_unapproved_server_gets_nothing_of_the_environment(
    project: Path, home: dict[str, str]
) -> None:
    entry = {"type": "http", "url": "https://x/${UNSET}", "headers": {"A": "${TOKEN}"}}
    write(project / ".mcp.json", servers(theirs=entry))
    env = {"TOKEN": "secret", "UNSET": "set-now"}
    (waiting,) = load(project, home, env={"TOKEN": "secret"}).needs_approval
    assert (waiting.url, waiting.headers) == ("https://x/${UNSET}", {"A": "${TOKEN}"})
    write(user_file(home), {"disabledMcpjsonServers": ["theirs"]})
    (off,) = load(project, home, env=env).disabled
    assert (off.url, off.headers, off.trusted) == ("https://x/${UNSET}", {"A": "${TOKEN}"}, False)
    write(user_file(home), {"enabledMcpjsonServers": ["theirs"]})
    (started,) = load(project, home, env=env).start
    assert (started.url, started.headers) == ("https://x/set-now", {"A": "secret"})
    assert load(project, home, env={}).failed == (
        (
            "theirs",
            "needs the environment variable UNSET; set it or give a default as "
            f"${{UNSET:-value}} (in {project / '.mcp.json'})",
        ),
    )


def test_a_fake_repository_shipped_beside_the_local_file_is_not_asked(
    tmp_path: Path, home: dict[str, str]
) -> None:
    # the repository ships a folder that looks like a bare repository (its `config` says the
    # work tree is that folder) beside an approval, hoping git asks it and hears "untracked"
    source = tmp_path / "source"
    write(source / ".mcp.json", servers(theirs=TIME))
    claude = source / ".claude"
    write(claude / "settings.local.json", {"enableAllProjectMcpServers": True})
    write(claude / "HEAD", "ref: refs/heads/main\n")
    write(claude / "objects" / ".keep", "")
    write(claude / "refs" / ".keep", "")
    write(
        claude / "config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
    )
    git(source, "init", "-q")
    git(source, "add", "-A")
    git(source, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(source), str(clone))
    local = clone / ".claude" / "settings.local.json"
    assert git_tracks(local) is True
    found = load(clone, home, tracked=git_tracks)
    assert (found.start, names(found.needs_approval)) == ((), ["theirs"])


def test_a_linked_work_tree_is_asked_through_its_git_file(tmp_path: Path) -> None:
    main = tmp_path / "main"
    write(main / "shipped.json", "{}")
    git(main, "init", "-q")
    git(main, "add", "-A")
    git(main, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = tmp_path / "linked"
    assert (linked / ".git").is_file()
    write(linked / ".stayer" / "settings.local.json", "{}")
    assert git_tracks(linked / "shipped.json") is True
    assert git_tracks(linked / ".stayer" / "settings.local.json") is False


# --- what a repository's file may be and what its servers may get --------------------------------


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "folder"])
def test_a_mcp_json_that_is_no_regular_file_is_a_warning(
    project: Path, home: dict[str, str], target: str
) -> None:
    write(user_file(home), servers(mine=TIME))
    if target == "fifo":
        os.mkfifo(project / ".mcp.json")  # nothing writes to it: a blocking open would hang
        kind = "a device, FIFO or socket"
    elif target == "folder":
        (project / ".mcp.json").mkdir()
        kind = "a folder"
    else:
        (project / ".mcp.json").symlink_to(target)
        kind = "a device, FIFO or socket"
    found = load(project, home)
    assert names(found.start) == ["mine"]
    assert found.warnings == (
        f"{project / '.mcp.json'}: cannot read it (it is {kind}, not a regular file); none of "
        "its MCP servers were started",
    )


def test_a_mcp_json_over_a_megabyte_is_left_out(project: Path, home: dict[str, str]) -> None:
    padding = " " * (1 << 20)
    write(project / ".mcp.json", json.dumps(servers(theirs=TIME)) + padding)
    found = load(project, home)
    assert (found.needs_approval, found.failed) == ((), ())
    assert found.warnings == (
        f"{project / '.mcp.json'}: larger than 1,048,576 bytes, so not read; none of its MCP "
        "servers were started",
    )
    write(project / ".mcp.json", json.dumps(servers(theirs=TIME)) + padding[:-200])
    assert names(load(project, home).needs_approval) == ["theirs"]


def test_the_withheld_credentials_are_child_envs() -> None:
    from stayer.config.mcp_servers import MODEL_CREDENTIALS, PASS_ENV
    from stayer.exec import child_env

    assert (MODEL_CREDENTIALS, PASS_ENV) == (child_env.CREDENTIALS, child_env.PASS_ENV)


@pytest.mark.parametrize("brought_by", [".mcp.json", ".claude/settings.json", "tracked local"])
def test_a_repositorys_server_never_gets_the_model_credentials(
    project: Path, home: dict[str, str], brought_by: str
) -> None:
    entry = {"command": "x", "args": ["${ANTHROPIC_API_KEY:-none}"], "env": {"K": "${SAFE}"}}
    if brought_by == ".mcp.json":
        origin = write(project / ".mcp.json", servers(theirs=entry))
    elif brought_by == "tracked local":
        origin = write(project / ".claude" / "settings.local.json", servers(theirs=entry))
    else:
        origin = write(project / ".claude" / "settings.json", servers(theirs=entry))
    write(user_file(home), {"enableAllProjectMcpServers": True})
    env = {"ANTHROPIC_API_KEY": "sk-secret", "SAFE": "fine"}
    found = load(project, home, env=env, tracked=lambda path: True)
    assert found.start == ()
    assert found.failed == (
        (
            "theirs",
            "names ANTHROPIC_API_KEY, a credential stayer reaches the model with, which a server "
            "the repository brings does not get; to give it on purpose, set "
            "STAYER_PASS_ENV=ANTHROPIC_API_KEY in the environment or your own settings "
            f"(in {origin})",
        ),
    )
    passed = load(project, home, env={**env, "STAYER_PASS_ENV": "ANTHROPIC_API_KEY"})
    assert passed.start[0].args == ("sk-secret",)
    # the user's own servers are theirs to configure
    write(user_file(home), servers(mine=entry))
    (mine,) = load(project, home, env=env, tracked=lambda path: True).start
    assert (mine.args, mine.env) == (("sk-secret",), {"K": "fine"})


# --- Claude Code's ~/.claude.json ------------------------------------------------------------


def claude_json(home: Mapping[str, str]) -> Path:
    return Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json"


def test_claude_codes_own_file_gives_user_and_local_servers_and_approvals(
    project: Path, home: dict[str, str]
) -> None:
    def server(tag: str) -> dict[str, Any]:
        return {"command": "run", "args": [tag]}

    write(project / ".mcp.json", servers(shared=server("mcpjson"), off=TIME, other=TIME))
    write(project / ".claude" / "settings.json", servers(both=server("project settings")))
    origin = write(
        claude_json(home),
        {
            **servers(mine=server("claude user"), mine2=server("claude user")),
            "projects": {
                str(project): {
                    **servers(shared=server("claude local"), both=server("claude local")),
                    "enabledMcpjsonServers": ["off", "other"],
                    "disabledMcpjsonServers": ["off"],
                },
                "/elsewhere": {**servers(stray=TIME), "enableAllProjectMcpServers": True},
            },
            "numStartups": 12,
        },
    )
    write(user_file(home), servers(mine2=server("stayer user")))
    found = load(project, home)
    started = {config.name: (config.args[0], config.scope, config.origin) for config in found.start}
    local = f'{origin} (projects["{project}"])'
    assert started == {
        "mine": ("claude user", "user", str(origin)),
        "mine2": ("stayer user", "user", str(user_file(home))),  # stayer's own file wins
        "shared": ("claude local", "local", local),  # local beats the project's .mcp.json
        "both": ("claude local", "local", local),  # ... and its settings
        "other": ("mcp-server-time", "mcpjson", str(project / ".mcp.json")),  # approved there
    }
    assert names(found.disabled) == ["off"]
    assert found.warnings == ()
    # a local settings file is nearer still
    write(project / ".stayer" / "settings.local.json", servers(shared=server("stayer local")))
    (shared,) = [c for c in load(project, home).start if c.name == "shared"]
    assert shared.args == ("stayer local",)


def test_claude_codes_own_file_is_left_unread_as_claude_settings_are(
    project: Path, home: dict[str, str]
) -> None:
    write(claude_json(home), servers(mine=TIME))
    assert names(load(project, home).start) == ["mine"]
    assert load(project, home, env={"STAYER_NO_CLAUDE_SETTINGS": "1"}) == McpServers()
    write(user_file(home), {"readClaudeSettings": False})
    assert load(project, home) == McpServers()
    # a project may not say which file speaks for the user
    write(user_file(home), {})
    elsewhere = write(project / "fake" / ".claude.json", servers(fake=TIME))
    settings = write(
        project / ".claude" / "settings.json", {"env": {"CLAUDE_CONFIG_DIR": str(elsewhere.parent)}}
    )
    environment = {**home, **load_settings(project, home).settings.env}
    found = load_mcp_servers(cwd=project, env=environment, settings=load_settings(project, home))
    assert found.start == ()
    assert found.warnings == (
        f"{settings}: env CLAUDE_CONFIG_DIR set by a project's settings, so .claude.json was not "
        "read",
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{"mcpServers": ',
            ":1:16: not valid JSON (Expecting value); its MCP servers and approvals were not read",
        ),
        ("[]", ": not a JSON object; its MCP servers and approvals were not read"),
        ('{"mcpServers": []}', ': "mcpServers" is not an object; its servers were not read'),
        ("\xff", ": cannot read it (not UTF-8 text); its MCP servers and approvals were not read"),
    ],
)
def test_a_broken_claude_json_is_one_warning(
    project: Path, home: dict[str, str], text: str, said: str
) -> None:
    write(user_file(home), servers(mine=TIME))
    path = claude_json(home)
    path.write_bytes(text.encode("latin-1"))
    found = load(project, home)
    assert names(found.start) == ["mine"]
    assert found.warnings == (f"{path}{said}",)


def test_claude_json_approvals_of_the_wrong_type_are_dropped(
    project: Path, home: dict[str, str]
) -> None:
    write(project / ".mcp.json", servers(theirs=TIME))
    project_entry = {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": "theirs"}
    path = write(claude_json(home), {"projects": {str(project): project_entry}})
    found = load(project, home)
    assert (found.start, names(found.needs_approval)) == ((), ["theirs"])
    assert found.warnings == (
        f'{path} (projects["{project}"]): disabledMcpjsonServers is not a list of names, so it '
        "was ignored",
    )
