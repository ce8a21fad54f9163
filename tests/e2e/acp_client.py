"""The official `acp` package's client side driving a real `stayer acp` subprocess: an editor
that records every `session/update`, answers permission questions from a script, and lets a
test wait for an update it expects.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeniedOutcome,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer


class Editor:
    """An ACP client: `updates` holds every update received, in order; `answers` the option
    ids to answer permission questions with, in order (None: the question is cancelled;
    "error": an error reply);
    `questions` what was asked."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.answers: list[str | None] = []
        self.questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self._changed = asyncio.Event()

    def on_connect(self, conn: acp.Agent) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self._changed.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.questions.append((tool_call, options))
        self._changed.set()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "error":
            raise acp.RequestError.internal_error({"details": "the editor broke"})
        chosen = AllowedOutcome(outcome="selected", option_id=answer)
        return RequestPermissionResponse(outcome=chosen)

    # what this editor does not offer (it says so by leaving the capabilities out)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        raise acp.RequestError.method_not_found("fs/read_text_file")

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        raise acp.RequestError.method_not_found("terminal/create")

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        raise acp.RequestError.method_not_found("terminal/output")

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        raise acp.RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        raise acp.RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        raise acp.RequestError.method_not_found("terminal/kill")

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **kwargs: Any
    ) -> CreateElicitationResponse:
        raise acp.RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def wait_for(self, found: Callable[[], bool], timeout_s: float = 20.0) -> None:
        """Wait until `found()` holds, checked each time an update or a question arrives."""
        async with asyncio.timeout(timeout_s):
            while not found():
                self._changed.clear()
                await self._changed.wait()

    def of_kind(self, kind: str) -> list[Any]:
        """The updates of one `sessionUpdate` kind."""
        return [update for update in self.updates if update.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        """The text of every chunk of `kind`, joined."""
        return "".join(update.content.text for update in self.of_kind(kind))


@asynccontextmanager
async def stayer_acp(
    server: FakeModelServer,
    cwd: Path,
    *args: str,
    editor: Editor | None = None,
    env: Mapping[str, str] | None = None,
    module: str = "stayer",
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process, Editor]]:
    """`stayer acp ARGS` in `cwd` against `server` (with `env` added), with an `Editor`
    connected to it; `module` runs another command line (one with a planted fault)."""
    editor = editor or Editor()
    async with acp.spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        module,
        "acp",
        *args,
        cwd=cwd,
        env=clean_env({**server.env(), **(env or {})}),
        use_unstable_protocol=True,
    ) as (conn, process):
        yield conn, process, editor


async def until_exists(path: Path, timeout_s: float = 20.0) -> None:
    """Wait until the marker file a scripted command writes exists."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():  # the command says it runs: a signal, not a guess
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.01)
