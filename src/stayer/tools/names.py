"""The names of the built-in tools the rest of stayer has to know, and the groups of them it
judges alike, so that nothing outside `stayer.tools` spells a tool's name.

These stand where a capability flag on the tool cannot: before the tools are loaded (start-up
sends only their specs), in a settings file's rules, in a transcript written long ago. The tool
classes take their names from here, and a test keeps each name a built-in's.
"""

from __future__ import annotations

READ = "Read"
"""The tool whose calls say which files the model has read (compaction shows them again)."""

TODO_WRITE = "TodoWrite"
"""The tool that keeps the model's task list (a run with it checks the list before stopping;
a resumed session takes the list back from its last call)."""

EXIT_PLAN_MODE = "ExitPlanMode"
"""The tool that asks the user to accept a plan (only offered where someone can answer)."""

WEB_FETCH = "WebFetch"
"""The tool the pre-approved documentation sites are allowed for (`preapproved`)."""

BASH = "Bash"
EDIT = "Edit"
WRITE = "Write"
NOTEBOOK_EDIT = "NotebookEdit"
GREP = "Grep"
GLOB = "Glob"
"""Tools the REPL shows each in its own way (a command's first line, a diff of the file, a
search's pattern and place)."""

PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep"})
"""Tools whose permission-rule specifiers are paths: Claude Code's Read and Edit, and the file
tools a rule names directly (MultiEdit is Claude Code's, named in settings written for it)."""

WRITING_TOOLS = frozenset({EDIT, WRITE, NOTEBOOK_EDIT, "MultiEdit"})
"""The file tools that write (MultiEdit is Claude Code's, named in settings written for it):
a bare rule of one would allow writing any file on the machine, so a rule kept from a
question is held to the project (`Edit(/**)`)."""

READS_UNDER = {"Bash": READ, "Glob": READ, "Grep": READ}
"""The built-ins whose reads the Read rules judge (each one's `reads_under`), known before the
tools load: a run with a deny rule on reading needs them for its first request, and loading
every tool (and pydantic) for that cost a settings file 150 ms. A test checks it against the
tools themselves."""

PIN = "Pin"

AGENT = "Agent"
"""The tool that starts a subagent (Claude Code's `Agent`)."""

TASK = "Task"
"""`Agent`'s name before Claude Code renamed it: a call by it reaches Agent, and a permission
rule written with it applies to Agent (`TOOL_ALIASES`)."""

SKILL = "Skill"
"""The tool that loads a skill into the conversation (Claude Code's `Skill`)."""

TOOL_ALIASES = {TASK: AGENT}
"""Old names of built-in tools, each to the name it has now: rules written for either apply
to both (settings written for older Claude Code say `Task(Explore)`)."""

RUN_ONLY_TOOLS = frozenset({EXIT_PLAN_MODE, TODO_WRITE, PIN, AGENT, SKILL})
"""Tools that mean something only inside a model's run (a plan to accept, a task list checked
before stopping, notes kept through compaction, a subagent or a skill, which need the session
that runs the model): `stayer mcp serve` leaves them out unless `--tools` names them."""

TOOL_SEARCH = "ToolSearch"
"""The tool that loads the full definitions of MCP tools sent only by name (deferred)."""

LIST_MCP_RESOURCES = "ListMcpResources"
READ_MCP_RESOURCE = "ReadMcpResource"
"""The tools that list and read MCP servers' resources (Claude Code's names)."""

MCP_PREFIX = "mcp__"
"""How every MCP server tool's name begins: `mcp__<server>__<tool>`."""

STRUCTURED_OUTPUT = "StructuredOutput"
"""The tool a run with a JSON schema (`--json-schema`, the SDK's `output_format`) gives its
final answer through; offered to that session alone, never to its subagents."""
