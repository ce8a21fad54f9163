"""`--json-schema` in a session: the StructuredOutput tool its model answers through, and the
stop check that sends the model back to give its answer that way when it stops without.

Only the session opened with the schema has them: a subagent derived from it is assembled
from its own toolbox, which never holds the tool, so it is neither offered it nor held to it.
"""

from __future__ import annotations

from stayer.loop.state import StopCheck
from stayer.tools.base import Tool, Toolbox
from stayer.tools.names import STRUCTURED_OUTPUT

from .options import QueryOptions


def answer_tools(options: QueryOptions) -> tuple[Tool[dict[str, object]], ...]:
    """The StructuredOutput tool for the options' schema, or none; raises `ConfigError` for a
    schema that cannot be used."""
    if options.json_schema is None:
        return ()
    from stayer.tools.structured_output import StructuredOutput, answer_schema

    return (StructuredOutput(answer_schema(options.json_schema)),)


def answer_check(tools: Toolbox) -> StopCheck:
    """The stop check: the run may complete once the model has given its answer."""
    from stayer.tools.structured_output import StructuredOutput

    tool = tools.find(STRUCTURED_OUTPUT)
    assert isinstance(tool, StructuredOutput)

    async def check() -> str | None:
        if tool.take() is not None:
            return None
        return (
            f"You have not given your final answer through the {STRUCTURED_OUTPUT} tool. Call "
            "it now, once, with the answer as its input, matching its schema."
        )

    return check
