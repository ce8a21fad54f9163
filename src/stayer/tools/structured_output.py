"""StructuredOutput: how the model gives its final answer as JSON that matches the caller's
schema (`--json-schema`, claude-agent-sdk's `output_format`), as in Claude Code.

The tool's input schema is the caller's; an input that does not match it is an error result
the model can fix. The last matching answer of a run is `answer` until the session's stop
check takes it (`take`); the printers read it off the call itself. The schema is the caller's
own, so it is trusted as given (its regular expressions included).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stayer.errors import ConfigError
from stayer.messages import JSON

from .base import Tool, ToolContext, ToolInputError, ToolOutput
from .names import STRUCTURED_OUTPUT

_MAX_PROBLEMS = 5


def answer_schema(given: str | Mapping[str, Any]) -> dict[str, JSON]:
    """The caller's schema (JSON text or a mapping), checked; raises `ConfigError` in one line
    when it is no JSON object or no valid JSON Schema."""
    from jsonschema import exceptions, validators  # type: ignore[import-untyped]  # no stubs

    if isinstance(given, str):
        try:
            given = json.loads(given)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"--json-schema: not valid JSON ({error.msg} at character {error.pos}); give a "
                'JSON Schema object such as {"type": "object", "properties": {...}}'
            ) from None
    if not isinstance(given, Mapping) or given.get("type", "object") != "object":
        raise ConfigError(
            "--json-schema: the answer must be a JSON object, so give a schema with "
            '"type": "object"'
        )
    schema: dict[str, JSON] = {"type": "object", **dict(given)}
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as error:
        raise ConfigError(f"--json-schema: not a valid JSON Schema ({error.message})") from None
    return schema


class StructuredOutput(Tool[dict[str, Any]]):
    """Takes the model's final answer as JSON matching `schema`; see the module."""

    name = STRUCTURED_OUTPUT
    description = (
        "Give your final answer through this tool, once the task is done: its input is the "
        "answer, as JSON matching the required schema. Call it exactly once, at the end; if "
        "it reports a mismatch, fix the answer and call it again."
    )
    read_only = True

    def __init__(self, schema: dict[str, JSON]) -> None:
        from jsonschema import validators

        self._schema = schema
        self._validator = validators.validator_for(schema)(schema)
        self.answer: dict[str, Any] | None = None

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return self._schema

    def parse_input(self, raw: Mapping[str, JSON]) -> dict[str, Any]:
        given = dict(raw)
        errors = sorted(self._validator.iter_errors(given), key=lambda error: list(error.path))
        if errors:
            raise ToolInputError("; ".join(_problem(error) for error in errors[:_MAX_PROBLEMS]))
        return given

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.answer = tool_input
        return ToolOutput("Your answer is recorded. Stop here.")

    def take(self) -> dict[str, Any] | None:
        """The answer given since the last `take`, if any; the next run starts with none."""
        answer, self.answer = self.answer, None
        return answer


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.absolute_path) or "input"
    return f"{where}: {' '.join(str(error.message).split())}"
