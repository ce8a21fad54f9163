"""`--sandbox` as a user meets it: the model's Bash commands can change only the working
directory (and a private /tmp that lasts the session and is gone after it), cannot reach even
the model server on loopback unless `--sandbox-network`, and where bubblewrap cannot run the
session refuses to start rather than run them unsandboxed."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from tests.e2e.cli import stayer
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.sandboxes import outside_tmp, skip_without_sandbox

FLAGS = ("--dangerously-skip-permissions", "--sandbox")


def _bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(call_id, "Bash", {"command": command})


def _connect(server: FakeModelServer) -> str:
    """A command that connects to the fake model server's own port."""
    return f"exec 3<>/dev/tcp/127.0.0.1/{urlsplit(server.url).port} && echo connected"


def test_commands_write_only_the_working_directory_and_a_private_tmp(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work, host_tmp = tmp_path / "work", tmp_path / "host-tmp"
    work.mkdir()
    host_tmp.mkdir()
    skip_without_sandbox(work)
    with outside_tmp() as outside:
        server.enqueue(
            reply(_bash("call_1", f"echo kept > /tmp/note; touch made {outside}/escaped")),
            reply(_bash("call_2", "cat /tmp/note")),
            reply("Done."),
        )
        done = stayer("-p", "try", *FLAGS, cwd=work, env={**server.env(), "TMPDIR": str(host_tmp)})
        assert not (outside / "escaped").exists()
    assert done.status == 0, done.stderr
    (refused,) = tool_results(server.requests[1])
    assert result_text(refused) == (
        f"touch: cannot touch '{outside}/escaped': Read-only file system\nExit code 1"
    )
    (kept,) = tool_results(server.requests[2])
    assert result_text(kept) == "kept"
    assert (work / "made").exists()
    assert list(host_tmp.iterdir()) == []  # the session's /tmp went with it


def test_the_network_is_cut_unless_sandbox_network(server: FakeModelServer, tmp_path: Path) -> None:
    skip_without_sandbox(tmp_path)
    for extra in ((), ("--sandbox-network",)):
        server.enqueue(reply(_bash("call_1", _connect(server))), reply("Done."))
        done = stayer("-p", "connect", *FLAGS, *extra, cwd=tmp_path, env=server.env())
        assert done.status == 0, done.stderr
    (cut,) = tool_results(server.requests[1])
    (allowed,) = tool_results(server.requests[3])
    assert "Connection refused" in result_text(cut) and cut["is_error"] is True
    assert (result_text(allowed), allowed.get("is_error", False)) == ("connected", False)


def test_without_a_working_bubblewrap_the_session_does_not_start(
    server: FakeModelServer, tmp_path: Path
) -> None:
    missing = tmp_path / "no-bwrap"
    env = {**server.env(), "STAYER_BWRAP": str(missing)}
    done = stayer("-p", "hi", *FLAGS, cwd=tmp_path, env=env)
    assert (done.status, done.stdout) == (2, "")
    assert done.stderr == (
        f"stayer: --sandbox: bubblewrap cannot run here (could not start {missing}: No such "
        "file or directory); install the bubblewrap package (apt-get install bubblewrap), or "
        "run without --sandbox (and without the settings' sandbox.enabled)\n"
    )
    assert server.requests == []


def test_sandbox_network_alone_says_it_does_nothing(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(_bash("call_1", _connect(server))), reply("Done."))
    done = stayer(
        "-p", "hi", "--dangerously-skip-permissions", "--sandbox-network", cwd=tmp_path,
        env=server.env(),
    )  # fmt: skip
    assert done.status == 0, done.stderr
    assert done.stderr == "stayer: --sandbox-network does nothing without --sandbox\n"
    (result,) = tool_results(server.requests[1])
    assert result_text(result) == "connected"
