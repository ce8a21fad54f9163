"""The editor's files over ACP: `ClientFiles`, the tools' `EditorFiles` made of the client's
`fs/read_text_file` and `fs/write_text_file` (protocols.md §2.3), so Read sees a buffer's unsaved
text and Write and Edit land in the buffer the person sees.

A client offers each method on its own (`clientCapabilities.fs`); the half it does not offer is
the disk's (`DiskFiles`), and a client that offers neither gets no `EditorFiles` at all
(`client_files`). Whatever goes wrong in a request (an error reply, a malformed one, the client
gone) is a one-line `ToolFailure` for the model, never a crash and never a write to the disk in
the editor's stead.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from stayer.tools.base import ToolFailure
from stayer.tools.builtin.editor_text import DiskFiles, said_by

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities


class ClientFiles:
    """`EditorFiles` over one ACP session's client connection: reads through the client when
    `reads`, writes through it when `writes`, and the disk for the half it does not offer."""

    def __init__(
        self, client: Client, session_id: str = "", *, reads: bool = True, writes: bool = True
    ) -> None:
        self._client = client
        self.session_id = session_id
        """The ACP session the requests are for; set once the session is open (the session's
        own id, known only then)."""
        self._reads = reads
        self._writes = writes
        self._disk = DiskFiles()

    async def read_text(self, path: Path) -> str:
        """The text of `path` as the editor has it (`fs/read_text_file`, the whole file)."""
        if not self._reads:
            return await self._disk.read_text(path)
        try:
            response = await self._client.read_text_file(session_id=self._session(), path=str(path))
        except Exception as exc:  # the client's error reply, a malformed one, or the client gone
            raise ToolFailure(f"The editor could not read {path}: {_said(exc)}.") from None
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        """Make the editor's `path` hold `text` (`fs/write_text_file`)."""
        if not self._writes:
            await self._disk.write_text(path, text)
            return
        try:
            await self._client.write_text_file(
                session_id=self._session(), path=str(path), content=text
            )
        except Exception as exc:  # the client's error reply, a malformed one, or the client gone
            raise ToolFailure(f"The editor could not write {path}: {_said(exc)}.") from None

    def _session(self) -> str:
        if not self.session_id:  # a request before the session is open: nobody to ask
            raise ToolFailure("The editor's session is not open yet, so its files are unknown.")
        return self.session_id


def client_files(client: Client, capabilities: ClientCapabilities | None) -> ClientFiles | None:
    """The editor's files for an ACP session (its `session_id` to be set once it opens) whose
    client advertised `capabilities` at `initialize`: each of its `fs` methods it offers, or
    None when it offers neither."""
    fs = capabilities.fs if capabilities is not None else None
    reads = bool(fs is not None and fs.read_text_file)
    writes = bool(fs is not None and fs.write_text_file)
    if not reads and not writes:
        return None
    return ClientFiles(client, reads=reads, writes=writes)


def _said(exc: Exception) -> str:
    """What the client said went wrong, on one line: its error's message and details."""
    from acp import RequestError

    details = None
    if isinstance(exc, RequestError):
        details = exc.data.get("details") if isinstance(exc.data, dict) else exc.data
    return said_by(exc, details)
