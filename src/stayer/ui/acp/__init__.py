"""stayer as an Agent Client Protocol agent (`stayer acp`; reference: protocols.md §2), built on
the `agent-client-protocol` package, which owns the JSON-RPC: `agent` answers the editor's
methods, `link` drives one session per ACP session through `stayer.driver.Driver`, `updates`
and `replay` turn events and saved history into `session/update`s, `options` builds each
session's options, `permission` puts questions to the editor, `modes` offers permission modes
and the model, `files` gives the tools the editor's buffers.
"""

from __future__ import annotations

from stayer.session.options import QueryOptions


async def serve_stdio(base: QueryOptions) -> int:
    """Serve ACP on standard input and output until the editor closes them; every session's
    runs are stopped and its transcript left valid before this returns 0."""
    import acp

    from .agent import StayerAgent

    agent = StayerAgent(base)
    try:
        await acp.run_agent(agent, use_unstable_protocol=True)
    finally:
        await agent.aclose()
    return 0
