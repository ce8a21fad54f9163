"""`stayer mcp serve` driven over real stdio by the `mcp` SDK's own client: the built-in tools
are listed and called, and every call is judged as a headless run judges a model's call (the
mode, the flags' and settings' rules, hooks, input validation), each refusal an error result
that says why. Closing standard input ends the server cleanly."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import sys
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, ImageContent, TextContent
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from stayer.tools.names import BASH, EDIT, READ, RUN_ONLY_TOOLS, WRITE
from tests.e2e.cli import clean_env, stayer
from tests.sandboxes import skip_without_sandbox

SERVE = ("-m", "stayer", "mcp", "serve")


@asynccontextmanager
async def served(
    cwd: Path, *flags: str, status: Path | None = None, env: Mapping[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """A client session with `stayer mcp serve FLAGS` started in `cwd`; its standard error goes
    to `cwd/serve.err`. With `status`, the server's exit status is written there once it ends."""
    command, args = sys.executable, [*SERVE, *flags]
    if status is not None:  # a shell between, to record how the server ended
        script = f'"$0" "$@"; echo $? > {status}'
        command, args = "sh", ["-c", script, sys.executable, *args]
    params = StdioServerParameters(command=command, args=args, cwd=cwd, env=clean_env(env))
    with (cwd / "serve.err").open("w") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def text(result: CallToolResult) -> str:
    return "".join(part.text for part in result.content if isinstance(part, TextContent))


async def test_lists_the_built_in_tools_with_their_schemas_and_read_only_hints(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {READ, EDIT, BASH} <= set(tools)
    assert not RUN_ONLY_TOOLS & set(tools)  # a plan, a task list, pins: a model run's own
    read, bash = tools[READ], tools[BASH]
    assert read.input_schema["required"] == ["file_path"]
    assert read.description and bash.description
    assert read.annotations is not None and read.annotations.read_only_hint is True
    assert bash.annotations is not None and bash.annotations.read_only_hint is False


async def test_the_sdk_client_in_its_default_mode_speaks_the_newer_protocol_era_too(
    tmp_path: Path,
) -> None:
    (tmp_path / "note.txt").write_text("hello\n")
    params = StdioServerParameters(
        command=sys.executable, args=list(SERVE), cwd=tmp_path, env=clean_env()
    )
    async with Client(params) as client:  # no initialize handshake: server/discover
        version = client.protocol_version
        result = await client.call_tool(READ, {"file_path": str(tmp_path / "note.txt")})
    assert version in MODERN_PROTOCOL_VERSIONS
    assert (result.is_error, text(result)) == (False, "     1\thello")


async def test_tools_picks_the_tools_offered(tmp_path: Path) -> None:
    async with served(tmp_path, "--tools", READ, BASH) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool(
            EDIT, {"file_path": "x", "old_string": "a", "new_string": "b"}
        )
    assert tools == [BASH, READ]
    assert result.is_error
    assert text(result).startswith(f"Error: no tool named {EDIT!r}. Available: {BASH}, {READ}.")


async def test_read_returns_the_file_and_an_edit_after_it_is_allowed(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("hello\n")
    edit = {"file_path": str(note), "old_string": "hello", "new_string": "goodbye"}
    async with served(tmp_path, "--permission-mode", "acceptEdits") as client:
        unread = await client.call_tool(EDIT, edit)
        read = await client.call_tool(READ, {"file_path": str(note)})
        edited = await client.call_tool(EDIT, edit)  # the session remembers the file was read
    assert unread.is_error and "has not been read yet" in text(unread)
    assert (read.is_error, text(read)) == (False, "     1\thello")
    assert not edited.is_error, text(edited)
    assert note.read_text() == "goodbye\n"


async def test_a_call_the_mode_would_ask_about_is_denied_saying_how_to_allow_it(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as client:
        result = await client.call_tool(BASH, {"command": "touch made.txt"})
    assert result.is_error
    assert text(result).startswith("Permission to use Bash has been denied")
    assert "--allowedTools Bash" in text(result)
    assert not (tmp_path / "made.txt").exists()


@pytest.mark.parametrize(
    "flags",
    [("--allowedTools", "Bash(touch:*)"), ("--permission-mode", "bypassPermissions")],
    ids=["allow-rule", "bypass"],
)
async def test_a_bash_call_the_flags_allow_runs(tmp_path: Path, flags: tuple[str, str]) -> None:
    async with served(tmp_path, *flags) as client:
        made = await client.call_tool(BASH, {"command": "touch made.txt"})
        said = await client.call_tool(BASH, {"command": "echo hi"})
    assert (made.is_error, text(made)) == (False, "(Bash completed with no output)")
    assert (said.is_error, text(said)) == (False, "hi")
    assert (tmp_path / "made.txt").exists()


async def test_a_deny_rule_from_settings_refuses_a_read(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("the secret\n")
    settings = json.dumps({"permissions": {"deny": ["Read(secret.txt)"]}})
    async with served(tmp_path, "--settings", settings) as client:
        result = await client.call_tool(READ, {"file_path": str(tmp_path / "secret.txt")})
    assert result.is_error
    assert text(result) == "Permission to use Read has been denied by a deny rule."


async def test_a_pre_tool_use_hook_blocks_a_call_with_its_words(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "echo 'no reading today' >&2; exit 2"}
    settings = json.dumps({"hooks": {"PreToolUse": [{"matcher": READ, "hooks": [hook]}]}})
    (tmp_path / "note.txt").write_text("hello\n")
    async with served(tmp_path, "--settings", settings) as client:
        result = await client.call_tool(READ, {"file_path": str(tmp_path / "note.txt")})
    assert result.is_error
    assert text(result) == (
        "PreToolUse:Read hook error: [echo 'no reading today' >&2; exit 2]: no reading today"
    )


async def test_a_post_tool_use_hook_adds_its_word_to_the_result(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "echo 'looked at it' >&2; exit 2"}
    settings = json.dumps({"hooks": {"PostToolUse": [{"matcher": READ, "hooks": [hook]}]}})
    (tmp_path / "note.txt").write_text("hello\n")
    async with served(tmp_path, "--settings", settings) as client:
        result = await client.call_tool(READ, {"file_path": str(tmp_path / "note.txt")})
    assert not result.is_error
    said = text(result)
    assert said.startswith("     1\thello\n\nPostToolUse hook blocking error:\n")
    assert said.endswith("looked at it")


async def test_an_image_comes_back_as_mcp_image_content(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(_png())
    async with served(tmp_path) as client:
        result = await client.call_tool(READ, {"file_path": str(tmp_path / "dot.png")})
    assert not result.is_error
    [image] = result.content
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == _png()


async def test_a_huge_result_is_saved_whole_and_its_start_and_end_returned(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, "--dangerously-skip-permissions") as client:
        result = await client.call_tool(BASH, {"command": "seq 1 300000"})
    said = text(result)
    assert not result.is_error
    assert len(said) < 40_000
    saved = Path(said.split("saved to ", 1)[1].split(". ", 1)[0])
    assert saved.read_text().splitlines() == [str(n) for n in range(1, 300_001)]
    assert said.rstrip().endswith("300000")


async def test_calls_that_are_not_concurrency_safe_run_one_at_a_time(tmp_path: Path) -> None:
    # the first waits for a file only the second makes: run alongside, both would succeed;
    # one at a time, the first can only time out, and the second runs after it
    command = "echo up > started; until [ -e go ]; do sleep 0.02; done; echo went"
    async with served(tmp_path, "--dangerously-skip-permissions") as client:
        first = asyncio.ensure_future(client.call_tool(BASH, {"command": command, "timeout": 2000}))
        await asyncio.to_thread(_written, tmp_path / "started")  # the first call is running
        second = await client.call_tool(BASH, {"command": "touch go; echo made"})
        first_result = await first
    assert first_result.is_error, text(first_result)
    assert (second.is_error, text(second)) == (False, "made")


async def test_a_call_the_client_cancels_is_stopped_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    command = "echo $$ > running.pid; exec sleep 300"
    async with served(tmp_path, "--dangerously-skip-permissions") as client:
        call = asyncio.ensure_future(client.call_tool(BASH, {"command": command}))
        pid = int(await asyncio.to_thread(_written, tmp_path / "running.pid"))
        call.cancel()  # the client tells the server (notifications/cancelled)
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.to_thread(_gone, pid)
        after = await client.call_tool(BASH, {"command": "echo still here"})
    assert (after.is_error, text(after)) == (False, "still here")


async def test_a_protected_path_is_refused_even_when_permissions_are_skipped(
    tmp_path: Path,
) -> None:
    hook = tmp_path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    planted = {"file_path": str(hook), "content": "#!/bin/sh\necho planted\n"}
    async with served(tmp_path, "--dangerously-skip-permissions") as client:
        result = await client.call_tool(WRITE, planted)
    assert result.is_error
    assert text(result).startswith(f"Permission to use Write on {hook} has been denied")
    assert text(result).endswith('--allowedTools "Write(.git/hooks/pre-commit)").')
    assert not hook.exists()


async def test_invalid_input_is_an_error_result_with_the_validation_line(tmp_path: Path) -> None:
    async with served(tmp_path) as client:
        result = await client.call_tool(READ, {"offset": 3})
    assert result.is_error
    assert text(result) == "InputValidationError: file_path: Field required"


async def test_closing_stdin_ends_the_server_cleanly_and_stops_its_background_shells(
    tmp_path: Path,
) -> None:
    status = tmp_path / "status"
    command = "echo $$ > shell.pid; exec sleep 300"
    async with served(tmp_path, "--dangerously-skip-permissions", status=status) as client:
        started = await client.call_tool(BASH, {"command": command, "run_in_background": True})
        assert not started.is_error, text(started)
    assert _written(status) == "0\n"
    assert (tmp_path / "serve.err").read_text() == ""
    shell = int((tmp_path / "shell.pid").read_text())
    assert not Path(f"/proc/{shell}").exists() or "zombie" in _state(shell)  # stopped at exit


def _written(path: Path) -> str:
    """What `path` holds once something is written there (the shell writes it at exit)."""
    deadline = time.monotonic() + 20
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"nothing was written to {path.name}"
        time.sleep(0.01)
    return path.read_text()


def _png() -> bytes:
    """A 2 x 2 red PNG image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        checked = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + checked

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _gone(pid: int) -> None:
    """Wait until process `pid` has ended."""
    deadline = time.monotonic() + 20
    while Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid):
        assert time.monotonic() < deadline, f"process {pid} is still running"
        time.sleep(0.01)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except FileNotFoundError:  # it ended just now
        return "zombie"


async def test_with_sandbox_bash_runs_in_it_and_its_tmp_goes_when_the_server_ends(
    tmp_path: Path,
) -> None:
    skip_without_sandbox(tmp_path)
    host_tmp = tmp_path / "host-tmp"  # where the server makes the sandbox's private /tmp
    host_tmp.mkdir()
    status = tmp_path / "status"
    flags = ("--sandbox", "--dangerously-skip-permissions")
    async with served(tmp_path, *flags, status=status, env={"TMPDIR": str(host_tmp)}) as client:
        wrote = await client.call_tool(BASH, {"command": "echo inside > /tmp/left.txt"})
        escaped = await client.call_tool(BASH, {"command": "touch /etc/stayer-escaped"})
        [left] = host_tmp.glob("stayer-sandbox-tmp-*/left.txt")
        assert left.read_text() == "inside\n"
    assert not wrote.is_error, text(wrote)
    assert escaped.is_error and "Read-only file system" in text(escaped)
    assert _written(status) == "0\n"
    assert list(host_tmp.iterdir()) == []


def test_a_flag_serve_does_not_take_is_one_line_and_status_2(tmp_path: Path) -> None:
    done = stayer("mcp", "serve", "--model", "sonnet", cwd=tmp_path)
    assert (done.status, done.stdout) == (2, "")
    assert done.stderr.startswith("stayer: mcp serve: unrecognized arguments: --model sonnet; ")
    assert done.stderr.count("\n") == 1


def test_a_bad_permission_mode_is_one_line_before_anything_is_served(tmp_path: Path) -> None:
    done = stayer("mcp", "serve", "--permission-mode", "yolo", cwd=tmp_path)
    assert (done.status, done.stdout) == (2, "")
    assert done.stderr.startswith("stayer: unknown permission mode 'yolo'")
    assert done.stderr.count("\n") == 1


def test_help_says_what_it_serves_and_serves_nothing(tmp_path: Path) -> None:
    done = stayer("mcp", "serve", "--help", cwd=tmp_path)
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: stayer mcp serve [--permission-mode MODE]")
    assert "--allowedTools" in done.stdout and "--settings" in done.stdout
