"""stayer as an Agent Client Protocol agent (`stayer acp`; reference: protocols.md §2), built on
the `agent-client-protocol` package, which owns the JSON-RPC: `agent` answers the editor's
methods, `link` drives one session per ACP session through `stayer.driver.Driver`, `updates`
and `replay` turn events and saved history into `session/update`s, `options` builds each
session's options, `permission` puts questions to the editor, `modes` offers permission modes
and the model, `files` gives the tools the editor's buffers, `lines` keeps what is not a
message away from the package.
"""

from __future__ import annotations

from stayer.session.options import QueryOptions


async def serve_stdio(base: QueryOptions) -> int:
    """Serve ACP on standard input and output until the editor closes them (or sends SIGTERM);
    every session's runs are stopped and its transcript left valid before this returns 0."""
    import asyncio
    import contextlib
    import logging
    import signal
    import sys

    import acp

    from .agent import StayerAgent
    from .lines import LINE_LIMIT, OneLine, filtered

    errors = logging.StreamHandler(sys.stderr)
    errors.setFormatter(OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[errors], force=True)
    source, writer = await acp.stdio_streams(limit=LINE_LIMIT)
    agent = StayerAgent(base)
    serving = asyncio.ensure_future(
        acp.run_agent(agent, writer, filtered(source, writer), use_unstable_protocol=True)
    )
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, serving.cancel)  # an editor stopping its agent
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        await agent.aclose()
    return 0
