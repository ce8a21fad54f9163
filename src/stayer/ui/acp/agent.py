"""The ACP agent: the methods an editor calls, each carried out on the session it names.

Sessions are stayer sessions (their ids are stayer's, their transcripts saved as any other), so
`session/load` and `session/resume` go on with one saved earlier, from this editor or a
terminal, and `session/list` lists those saved for a folder. What an editor gets wrong (an
unknown session, a mode or model not offered, a folder that is not absolute) is a JSON-RPC
error of one line; a session that cannot open says why in the same way.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from stayer._version import __version__
from stayer.errors import StayerError
from stayer.session.options import QueryOptions

from .files import client_files
from .link import Link
from .modes import (
    MODEL_OPTION,
    check_mode,
    config_options,
    may_bypass,
    mode_state,
    offers_model,
)
from .options import Folders, McpServer, absolute, folders, same_folders, session_options
from .prompts import AcpBlock, prompt_blocks
from .replay import replay

SAVED_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
"""A saved session's id: the form stayer names its transcripts in."""


class Opened(NamedTuple):
    """A session a request opened (or found open), with what the reply tells of it."""

    link: Link
    modes: SessionModeState
    config: list[SessionConfigOptionSelect | SessionConfigOptionBoolean]


class StayerAgent:
    """stayer's ACP agent over `base` (the command line's options); see the module."""

    def __init__(self, base: QueryOptions) -> None:
        self._base = base
        self._client: Client | None = None
        self._links: dict[str, Link] = {}
        self._starts: dict[str, str] = {}
        self._folders: dict[str, Folders] = {}
        self._opening: dict[str, asyncio.Lock] = {}
        self._closed = False
        self.client_capabilities: ClientCapabilities | None = None
        """What the editor said it offers (its `fs` methods, a terminal), once initialised."""

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the one stayer speaks, whatever was asked
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    fork=SessionForkCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="stayer", title="stayer", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        raise RequestError.invalid_params({"details": "stayer offers no authentication methods"})

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        opened = await self._session(cwd, mcp_servers, additional_directories)
        return NewSessionResponse(
            session_id=opened.link.session_id, modes=opened.modes, config_options=opened.config
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        opened = await self._session(cwd, mcp_servers, additional_directories, resume=session_id)
        for update in replay(opened.link.session.history, opened.link.translator):
            await opened.link.send_update(update)
        return LoadSessionResponse(modes=opened.modes, config_options=opened.config)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        opened = await self._session(cwd, mcp_servers, additional_directories, resume=session_id)
        return ResumeSessionResponse(modes=opened.modes, config_options=opened.config)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        opened = await self._session(
            cwd, mcp_servers, additional_directories, resume=session_id, fork=True
        )
        return ForkSessionResponse(
            session_id=opened.link.session_id, modes=opened.modes, config_options=opened.config
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        from stayer.session.paths import config_root, project_slug
        from stayer.session.transcript import summaries

        folder = absolute(cwd, "cwd") if cwd else Path.cwd()
        saved = config_root(os.environ) / "projects" / project_slug(folder)
        # reads every transcript: off the event loop, where other sessions' runs go on
        found = await asyncio.to_thread(summaries, saved, cwd=folder, limit=100)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=summary.session_id,
                    cwd=str(folder),
                    title=summary.first_prompt[:80] or None,
                    updated_at=datetime.datetime.fromtimestamp(
                        summary.modified, tz=datetime.UTC
                    ).isoformat(),
                )
                for summary in found
            ]
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        link = self._link(session_id)
        del self._links[session_id]
        self._starts.pop(session_id, None)
        self._folders.pop(session_id, None)
        await link.close()
        return CloseSessionResponse()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        link = self._link(session_id)
        check_mode(mode_id, self._starts[session_id], may_bypass(link.session))
        try:
            link.set_mode(mode_id)
        except StayerError as error:  # what check_mode let through stays one JSON-RPC error
            raise RequestError.invalid_params({"details": str(error)}) from None
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self._link(session_id).session
        if config_id != MODEL_OPTION or not offers_model(session, value):
            raise RequestError.invalid_params(
                {"details": f"no config option {config_id!r} of value {value!r}; see configOptions"}
            )
        try:
            await session.set_model(str(value))
        except StayerError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        return SetSessionConfigOptionResponse(config_options=list(config_options(session)))

    async def prompt(
        self, session_id: str, prompt: list[AcpBlock], **kwargs: Any
    ) -> PromptResponse:
        return await self._link(session_id).prompt(prompt_blocks(prompt))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        link = self._links.get(session_id)
        if link is not None:
            link.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None  # extensions stayer does not know are ignored, as notifications may be

    async def aclose(self) -> None:
        """Stop every session's runs and close them (the editor went away); one still opening
        is closed as it opens."""
        self._closed = True
        links, self._links = list(self._links.values()), {}
        for link in links:
            await link.close()

    def _link(self, session_id: str) -> Link:
        link = self._links.get(session_id)
        if link is None:
            raise RequestError.invalid_params(
                {"details": f"no open session {session_id!r}; open it with session/new or load"}
            )
        return link

    async def _session(
        self,
        cwd: str,
        mcp_servers: Sequence[McpServer] | None,
        additional_directories: Sequence[str] | None,
        *,
        resume: str | None = None,
        fork: bool = False,
    ) -> Opened:
        """The session a request names, opened (a new one; `resume`'s, the link already open
        for it kept; with `fork`, a copy of it), with the modes and options it offers."""
        if resume is None or fork:
            link = await self._open(
                cwd, mcp_servers, additional_directories, resume=resume, fork=fork
            )
        else:
            # one open per id: a second load while the first opens waits for it
            async with self._opening.setdefault(resume, asyncio.Lock()):
                link = self._links.get(resume) or await self._open(
                    cwd, mcp_servers, additional_directories, resume=resume
                )
            same_folders(self._folders[link.session_id], cwd, additional_directories)
        link.announce_commands()
        session = link.session
        modes = mode_state(session, self._starts[link.session_id])
        return Opened(link, modes, list(config_options(session)))

    async def _open(
        self,
        cwd: str,
        mcp_servers: Sequence[McpServer] | None,
        additional_directories: Sequence[str] | None,
        *,
        resume: str | None,
        fork: bool = False,
    ) -> Link:
        """Open a session (the one saved as `resume`, if given) and keep its link."""
        if self._client is None or self._closed:
            raise RequestError.internal_error({"details": "no editor connected"})
        if resume is not None and not SAVED_ID.match(resume):
            # `resume` also takes a transcript's path: an editor names sessions by id only
            raise RequestError.invalid_params(
                {"details": f"{resume!r} is not a session id; session/list gives them"}
            )
        files = client_files(self._client, self.client_capabilities)
        options = session_options(
            self._base,
            cwd=cwd,
            mcp_servers=mcp_servers,
            additional_directories=additional_directories,
            resume=resume,
            fork=fork,
            files=files,
        )
        try:
            link = await Link.open(self._client, options)
        except StayerError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        if self._closed or link.session_id in self._links:  # the editor left; or a duplicate
            await link.close()
            if self._closed:
                raise RequestError.internal_error({"details": "the agent is shutting down"})
            return self._links[link.session_id]
        if files is not None:
            files.session_id = link.session_id
        self._links[link.session_id] = link
        self._starts[link.session_id] = link.session.permission_mode
        self._folders[link.session_id] = folders(cwd, additional_directories)
        return link
