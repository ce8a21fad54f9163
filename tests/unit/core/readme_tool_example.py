"""A tool of your own, passed to a run beside the built-in ones."""

import asyncio

from pydantic import BaseModel

import stayer


class CountInput(BaseModel):
    path: str


class WordCount(stayer.Tool[CountInput]):
    name = "WordCount"
    description = "Count the words in a text file."
    input_model = CountInput
    read_only = True  # so it runs without asking for permission

    async def call(self, tool_input: CountInput, ctx: stayer.ToolContext) -> stayer.ToolOutput:
        words = len(ctx.resolve(tool_input.path).read_text().split())
        return stayer.ToolOutput(f"{tool_input.path} has {words} words")


async def main() -> None:
    options = stayer.QueryOptions(extra_tools=[WordCount()])
    async for event in stayer.query("How many words are in notes.txt?", options=options):
        if isinstance(event, stayer.Finished):
            print(event.result_text)


if __name__ == "__main__":
    asyncio.run(main())
