"""MCP servers over the real CLI: real servers (the reference `mcp-server-time` and the test
server `tests/mcp_servers/kitchen.py`) on stdio and HTTP, the fake model server on the wire.

Runs that call a server's tool wait for the servers first (`MCP_CONNECTION_NONBLOCKING=0`), so
the first request already carries their tools; the runs about not waiting leave that off.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import clean_env, stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply
from tests.mcp_servers.reference import time_server

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = ROOT / "tests" / "mcp_servers" / "kitchen.py"
BLOCKING = {"MCP_CONNECTION_NONBLOCKING": "0"}
STREAM = ("--output-format", "stream-json", "--verbose")


def kitchen(*args: str) -> dict[str, Any]:
    """The test server's entry, started with `args`."""
    return {"command": sys.executable, "args": [str(KITCHEN), *args]}


def mcp_config(**servers: Mapping[str, Any]) -> str:
    return json.dumps({"mcpServers": servers})


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def init_line(stdout: str) -> dict[str, Any]:
    return next(line for line in lines(stdout) if line.get("subtype") == "init")


def statuses(stdout: str) -> dict[str, str]:
    return {entry["name"]: entry["status"] for entry in init_line(stdout)["mcp_servers"]}


def tool_names(request: RecordedRequest) -> list[str]:
    body = request.body
    assert isinstance(body, dict)
    return [tool["name"] for tool in body.get("tools", [])]


def tool_spec(request: RecordedRequest, name: str) -> dict[str, Any]:
    body = request.body
    assert isinstance(body, dict)
    return next(tool for tool in body["tools"] if tool["name"] == name)


def results(request: RecordedRequest) -> dict[str, tuple[str, bool]]:
    """The tool results the request's last message carries: id → (text, is_error)."""
    last = request.messages[-1]
    assert isinstance(last, dict)
    found: dict[str, tuple[str, bool]] = {}
    for block in last["content"]:
        if block.get("type") != "tool_result":
            continue
        content = block["content"]
        text = (
            content
            if isinstance(content, str)
            else "".join(part.get("text", "") for part in content)
        )
        found[block["tool_use_id"]] = (text, bool(block.get("is_error")))
    return found


def system_text(request: RecordedRequest) -> str:
    body = request.body
    assert isinstance(body, dict)
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user folder of the test's own, so no real settings or approvals apply."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def env_for(server: FakeModelServer, home: Path, **more: str) -> dict[str, str]:
    return {**server.env(), "HOME": str(home), **more}


def test_working_servers_tools_are_offered_and_called_and_a_broken_one_is_reported(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    """The issue's own check: the reference server and a small one work, a command that does
    not exist is reported in the init line, and the run goes on."""
    server.enqueue(
        reply(
            ToolCall("toolu_1", "mcp__kitchen__add", {"a": 2, "b": 3}),
            ToolCall("toolu_2", "mcp__time__get_current_time", {"timezone": "UTC"}),
        ),
        reply("2 + 3 = 5, and I know the time."),
    )
    config = mcp_config(
        kitchen=kitchen(),
        time={"command": str(time_server()), "args": ["--local-timezone", "UTC"]},
        broken={"command": "no-such-program-for-stayer"},
    )
    done = stayer("-p", "add 2 and 3, and say the time", "--mcp-config", config,
                  "--allowedTools", "mcp__kitchen,mcp__time", *STREAM,
                  cwd=project, env=env_for(server, home, **BLOCKING))  # fmt: skip

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {
        "kitchen": "connected",
        "time": "connected",
        "broken": "failed",
    }
    broken = next(e for e in init_line(done.stdout)["mcp_servers"] if e["name"] == "broken")
    assert "no-such-program-for-stayer" in broken["error"]
    first, second = server.requests
    assert {"mcp__kitchen__add", "mcp__time__get_current_time"} <= set(tool_names(first))
    found = results(second)
    assert found["toolu_1"] == ("5", False)
    text, failed = found["toolu_2"]
    assert not failed and '"timezone": "UTC"' in text


def test_a_server_that_never_comes_up_does_not_hold_back_the_first_request(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    """Claude Code waited about 21 s for a slow server; the first model call leaves at once,
    and the init line says the server is still pending."""
    server.enqueue(reply("hello"))
    never = tmp_path / "never-created"
    config = mcp_config(slow=kitchen("--wait-file", str(never)))
    done = stayer("-p", "hi", "--mcp-config", config, *STREAM, cwd=project,
                  env=env_for(server, home))  # fmt: skip

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"slow": "pending"}
    body = server.requests[0].body
    assert isinstance(body, dict)  # the init line says what the definitions sent cost
    assert init_line(done.stdout)["tool_tokens"] == pytest.approx(
        len(json.dumps(body["tools"])) / 4, rel=0.2
    )
    (request,) = server.requests
    assert not [name for name in tool_names(request) if name.startswith("mcp__")]


def test_a_projects_servers_start_only_once_approved(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    """A cloned repository's `.mcp.json` starts programs: unapproved, its server is listed as
    needing approval and never started; approved in the user's settings, it runs."""
    started = tmp_path / "started"
    entry = {
        "command": "sh",
        "args": ["-c", f'touch "{started}" && exec "$0" "$1"', sys.executable, str(KITCHEN)],
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    server.enqueue(reply("hello"))
    done = stayer("-p", "hi", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"repo": "needs-approval"}
    assert not started.exists()

    server.enqueue(reply("hello"))
    text = stayer("-p", "hi", cwd=project, env=env_for(server, home))
    assert "MCP server repo (from the project's .mcp.json) was not started" in text.stderr
    assert not started.exists()

    approved = json.dumps({"enabledMcpjsonServers": ["repo"]})
    server.enqueue(reply(ToolCall("toolu_1", "mcp__repo__echo", {"text": "hi"})), reply("ok"))
    done = stayer("-p", "echo", "--settings", approved, "--allowedTools", "mcp__repo", *STREAM,
                  cwd=project, env=env_for(server, home, **BLOCKING))  # fmt: skip
    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"repo": "connected"}
    assert started.exists()
    assert results(server.requests[-1])["toolu_1"] == ("hi", False)


def test_a_project_cannot_approve_its_own_servers(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    entry = {"command": "sh", "args": ["-c", f'touch "{started}"']}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    server.enqueue(reply("hello"))
    done = stayer("-p", "hi", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"repo": "needs-approval"}
    assert not started.exists()


def test_two_hundred_tools_are_deferred_found_by_tool_search_loaded_and_called(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "ToolSearch", {"query": "select:mcp__many__tool_107"})),
        reply(ToolCall("toolu_2", "mcp__many__tool_107", {})),
        reply("tool 107 said ok"),
    )
    config = mcp_config(many=kitchen("--tools", "200"))
    # About 30k tokens of definitions: past a tenth of a 200k window, so they are deferred.
    done = stayer("-p", "use tool 107", "--mcp-config", config, "--allowedTools", "mcp__many",
                  "--model", "claude-sonnet-4-6", *STREAM, cwd=project,
                  env=env_for(server, home, **BLOCKING))  # fmt: skip

    assert done.status == 0, done.stderr
    first, second, third = server.requests
    assert "ToolSearch" in tool_names(first)
    assert "mcp__many__tool_107" not in tool_names(first)
    search = tool_spec(first, "ToolSearch")
    assert "mcp__many__tool_107" in search["description"]
    assert "mcp__many__tool_107" in tool_names(second)
    assert results(third)["toolu_2"] == ("ok", False)
    init = init_line(done.stdout)
    assert 0 < init["tool_tokens"] < 20_000  # 200 schemas whole would be far more


def test_a_five_megabyte_result_is_saved_whole_and_the_model_gets_its_ends(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_1", "mcp__kitchen__big", {})), reply("big"))
    config = mcp_config(kitchen=kitchen())
    done = stayer("-p", "big", "--mcp-config", config, "--allowedTools", "mcp__kitchen",
                  cwd=project, env=env_for(server, home, **BLOCKING))  # fmt: skip

    assert done.status == 0, done.stderr
    text, failed = results(server.requests[-1])["toolu_1"]
    assert not failed
    assert len(text) < 120_000
    saved = [Path(word.strip("`'\".,()")) for word in text.split() if "tool-results" in word]
    assert saved, text[:500]
    assert saved[0].stat().st_size >= 5 * 1024 * 1024


def test_rules_and_hooks_judge_mcp_tools_by_name(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    """A deny rule on one tool hides it; in default mode an unallowed call is denied headless;
    a PreToolUse hook whose matcher is a pattern over MCP names sees and blocks the call."""
    hook_log = tmp_path / "hook.jsonl"
    hook = f"cat >> {hook_log}; echo 'no echo today' >&2; exit 2"
    settings = {
        "permissions": {"deny": ["mcp__kitchen__add"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "mcp__kit.*__e.*", "hooks": [{"type": "command", "command": hook}]}
            ]
        },
    }
    server.enqueue(
        reply(ToolCall("toolu_1", "mcp__kitchen__echo", {"text": "x"})),
        reply(ToolCall("toolu_2", "mcp__kitchen__pid", {})),
        reply("done"),
    )
    config = mcp_config(kitchen=kitchen())
    done = stayer("-p", "go", "--mcp-config", config, "--settings", json.dumps(settings),
                  "--allowedTools", "mcp__kitchen__echo", *STREAM, cwd=project,
                  env=env_for(server, home, **BLOCKING))  # fmt: skip

    assert done.status == 0, done.stderr
    first = server.requests[0]
    assert "mcp__kitchen__add" not in tool_names(first)
    assert "mcp__kitchen__echo" in tool_names(first)
    echo_text, echo_failed = results(server.requests[1])["toolu_1"]
    assert echo_failed and "no echo today" in echo_text
    assert json.loads(hook_log.read_text().splitlines()[0])["tool_name"] == "mcp__kitchen__echo"
    pid_text, pid_failed = results(server.requests[2])["toolu_2"]
    assert pid_failed and "mcp__kitchen__pid" in pid_text


def test_resources_instructions_and_http(
    server: FakeModelServer, project: Path, home: Path, http_kitchen: str
) -> None:
    """A server over streamable HTTP: its instructions reach the system prompt, and its
    resources are listed and read with ListMcpResources and ReadMcpResource."""
    server.enqueue(
        reply(ToolCall("toolu_1", "ListMcpResources", {})),
        reply(ToolCall("toolu_2", "ReadMcpResource", {"server": "web", "uri": "memo://greeting"})),
        reply("read it"),
    )
    config = mcp_config(web={"type": "http", "url": http_kitchen})
    done = stayer("-p", "read the greeting", "--mcp-config", config, "--allowedTools",
                  "ListMcpResources,ReadMcpResource", *STREAM, cwd=project,
                  env=env_for(server, home, **BLOCKING))  # fmt: skip

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"web": "connected"}
    first = server.requests[0]
    assert "Answer in haiku." in system_text(first)
    assert "memo://greeting" in results(server.requests[1])["toolu_1"][0]
    assert "hello there" in results(server.requests[2])["toolu_2"][0]


@pytest.fixture
def http_kitchen() -> Iterator[str]:
    """The test server on streamable HTTP (127.0.0.1, a port it picks), with instructions."""
    argv = [sys.executable, str(KITCHEN), "--transport", "http", "--instructions",
            "Answer in haiku."]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_a_servers_stderr_goes_to_the_session_log_not_the_terminal(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    server.enqueue(reply("hello"))
    config = mcp_config(chatty=kitchen("--stderr", "chatter-from-the-server"))
    env = env_for(server, home, **BLOCKING, STAYER_CONFIG_DIR=str(home / ".stayer"))
    done = stayer("-p", "hi", "--mcp-config", config, cwd=project, env=env)

    assert done.status == 0, done.stderr
    assert "chatter-from-the-server" not in done.stderr + done.stdout
    logs = list((home / ".stayer").rglob("mcp-logs/chatty.log"))
    assert logs and "chatter-from-the-server" in logs[0].read_text()


def test_an_interrupt_during_a_slow_mcp_call_reaches_the_server(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    """Ctrl+C while an MCP tool runs: the server is told to cancel it (it leaves a marker when
    its wait is cancelled), and the run ends as interrupted."""
    markers = tmp_path / "markers"
    markers.mkdir()
    server.enqueue(reply(ToolCall("toolu_1", "mcp__kitchen__wait", {})))
    config = mcp_config(kitchen=kitchen("--markers", str(markers)))
    argv = [sys.executable, "-m", "stayer", "-p", "wait", "--mcp-config", config,
            "--allowedTools", "mcp__kitchen", *STREAM]  # fmt: skip
    env = clean_env(env_for(server, home, **BLOCKING))
    process = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.PIPE, text=True)
    try:
        _wait_for(markers / "started", process)  # the server took the call
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
        _wait_for(markers / "cancelled", process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    result = lines(out)[-1]
    assert (result["type"], result["subtype"]) == ("result", "error_during_execution")


def _wait_for(path: Path, process: subprocess.Popen[str], timeout_s: float = 30.0) -> None:
    """Until the marker `path` exists (the signal the test server gives), or fail."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared (stayer: {process.poll()})")
        time.sleep(0.01)


def test_a_bad_mcp_config_is_one_line(server: FakeModelServer, project: Path, home: Path) -> None:
    done = stayer("-p", "hi", "--mcp-config", "{not json", cwd=project,
                  env=env_for(server, home))  # fmt: skip

    assert done.status != 0
    (line,) = done.stderr.splitlines()
    assert line.startswith("stayer: ") and "--mcp-config" in line
    assert server.requests == []


def test_servers_claude_mcp_add_kept_in_claude_json_start_here_too(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    """A Claude Code user's own servers (`claude mcp add` keeps them in ~/.claude.json) come
    along when they switch; the empty `mcpServers` Claude Code writes for every project does
    not count as one."""
    claude_json = {
        "mcpServers": {"cc": kitchen()},
        "projects": {str(project): {"mcpServers": {}, "allowedTools": []}},
    }
    (home / ".claude.json").write_text(json.dumps(claude_json))
    server.enqueue(reply("hello"))
    env = env_for(server, home, **BLOCKING, CLAUDE_CONFIG_DIR=str(home))  # the file's place
    done = stayer("-p", "hi", *STREAM, cwd=project, env=env)

    assert done.status == 0, done.stderr
    assert statuses(done.stdout) == {"cc": "connected"}
    assert "mcp__cc__echo" in tool_names(server.requests[0])


@pytest.mark.parametrize("moved", ["CLAUDE_CONFIG_DIR", "HOME"])
def test_a_repository_cannot_choose_or_break_the_users_claude_json(
    server: FakeModelServer, project: Path, home: Path, moved: str
) -> None:
    """A project's settings that point the user's folders into the repository, at a folder
    named .claude.json, neither break start-up nor get that path looked into."""
    (project / "cfg" / ".claude.json").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {moved: "cfg"}}))
    server.enqueue(reply("hello"))
    done = stayer("-p", "hi", cwd=project, env=env_for(server, home))

    assert (done.status, done.stdout) == (0, "hello\n"), done.stderr
    assert "Traceback" not in done.stderr
