"""The built-in tools as the model sees them: generated, do not edit.

Made by scripts/gen_tool_specs.py from the tool classes, so a run can send its first request
without loading the tools (or pydantic). tests/unit/tools/test_specs_current.py checks it.
"""

from stayer.messages import ToolSpec

BUILTIN_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="Agent",
        description="Starts a subagent: a separate agent with its own conversation, tools and context window, which works on one task on its own and reports back.\n\n- Use it for work that would fill your context with material you do not need to keep (a broad search of a large codebase, reading many files to answer one question), and for independent pieces of work that can go on side by side.\n- Do not use it for a task a single Read, Grep or Glob call would do, or for a file you already know the path of.\n- The agent types you may start are listed in a system reminder; pick the one whose description fits the task, or leave `subagent_type` out for a general-purpose agent.\n- The agent sees nothing of this conversation: write `prompt` so it stands alone, say exactly what to do and what its report should contain, and whether it should change files or only look.\n- Several Agent calls in one message run at the same time. Start independent agents together rather than one after another.\n- The result is the agent's final report only, not its tool calls or their output; it is the agent's own account, so check what matters before relying on it. The user does not see it: tell them what they need to know.\n- By default (`run_in_background` left out or true) the call returns at once and the report comes in a later message; do not ask for it or wait for it in a loop. Set it to false when you need the report before you can go on.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "description": {
                    "description": "A short description of the task in 3 to 5 words, shown while it runs.",
                    "type": "string",
                },
                "prompt": {
                    "description": "The whole task for the agent, with everything it needs to know: it sees none of this conversation.",
                    "type": "string",
                },
                "subagent_type": {
                    "default": "general-purpose",
                    "description": "The type of agent to start (one of those listed in the system reminder); general-purpose when left out.",
                    "type": "string",
                },
                "model": {
                    "description": "The model the agent uses: sonnet, opus, haiku, fable or a full model id; leave it out for the agent type's own (else this session's).",
                    "type": "string",
                },
                "effort": {
                    "description": "How hard the agent should work at its answers; leave it out for the agent type's own (else this session's).",
                    "enum": ["low", "medium", "high", "xhigh", "max"],
                    "type": "string",
                },
                "run_in_background": {
                    "default": True,
                    "description": "Left out or true, the call returns at once and the agent's report reaches you in a later message when it finishes (you may go on meanwhile); false waits for the report in this call.",
                    "type": "boolean",
                },
                "isolation": {
                    "description": '"worktree" to have the agent work in a git worktree of its own, so its changes stay apart from yours until merged.',
                    "type": "string",
                },
            },
            "required": ["description", "prompt"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Bash",
        description="Runs a shell command with bash and returns what it printed (stdout, then stderr).\n\nUse it for things only a shell can do: running tests, builds, git, package managers, and other programs. For files there are dedicated tools that are cheaper and safer: Read instead of cat/head/tail, Edit or Write instead of sed/awk/echo redirection, Glob instead of find/ls for locating files, Grep instead of grep/rg.\n\n- The working directory persists between calls: after `cd dir`, later commands run in dir. Prefer absolute paths anyway, and quote paths that contain spaces.\n- Commands run without a terminal and with stdin closed, so anything interactive (editors, pagers, prompts, `git rebase -i`) fails or hangs; pass flags that avoid it.\n- The default timeout is 120 s; set `timeout` (ms, up to 600000) for longer work. A command that times out is stopped, with all the processes it started.\n- Long output is saved to a file and you get its start, its end and the file's path (Read or Grep the file for the rest); filter it with grep, head or tail when you only need part of it.\n- Chain dependent steps with `&&`; run independent commands as separate calls.\n- For a server or a long build, set `run_in_background`: the call returns a shell id at once, BashOutput shows what it printed since you last looked, and KillShell stops it. Background commands have no timeout and are stopped when the session ends; do not add `&` yourself.\n- A non-zero exit code is reported as an error along with the output.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "command": {"description": "The shell command to run.", "type": "string"},
                "timeout": {
                    "description": "Optional timeout in milliseconds (at most 600000). Defaults to 120000 (2 minutes).",
                    "minimum": 1,
                    "type": "integer",
                },
                "description": {
                    "description": "A short description of what the command does, in 5-10 words, in the active voice (e.g. 'List files in the current directory').",
                    "type": "string",
                },
                "run_in_background": {
                    "description": "Set to true to run this command in the background. Use BashOutput to read the output later.",
                    "type": "boolean",
                },
            },
            "required": ["command"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="BashOutput",
        description="Reads the output of a command started with Bash and run_in_background.\n\n- Returns only what the command printed since the last read, with its status (running, completed, failed, killed) and, once it ended, its exit code.\n- `filter` keeps only the lines that match a regular expression; the other new lines are dropped for good.\n- Use it to follow servers, watchers and long builds without waiting for them.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "bash_id": {
                    "description": "The ID of the background shell to read output from.",
                    "type": "string",
                },
                "filter": {
                    "description": "Optional regular expression: only output lines that match it are shown. Lines that do not match are dropped and cannot be read again.",
                    "type": "string",
                },
            },
            "required": ["bash_id"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="KillShell",
        description="Stops a command started with Bash and run_in_background, with every process it started. Takes the shell's ID. Output not yet read stays readable with BashOutput.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "shell_id": {
                    "description": "The ID of the background shell to kill.",
                    "type": "string",
                }
            },
            "required": ["shell_id"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Glob",
        description="Finds files by name with a glob pattern, such as '**/*.py' or 'src/**/*.{ts,tsx}', and lists their absolute paths, most recently modified first.\n\n- Fast on any size of codebase. Use it to locate files by name; use Grep to search their contents.\n- A pattern without '/' matches file names at any depth ('*.py' finds every Python file); a pattern with '/' is taken from the search directory.\n- Files in directories ignored by .gitignore, and hidden files, are skipped unless the pattern names a hidden path itself (e.g. '.github/**/*.yml').\n- At most 100 paths are returned; narrow the pattern or path if the result says it was cut.\n- For open-ended searches that may take several rounds of globbing and grepping, run several searches in one turn.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "pattern": {
                    "description": "The glob to match file paths against, e.g. '**/*.py', '*.md' or 'src/**/*.{ts,tsx}'.",
                    "type": "string",
                },
                "path": {
                    "description": "The directory to search in. Leave it out to search the working directory; do not pass 'undefined' or 'null'.",
                    "type": "string",
                },
            },
            "required": ["pattern"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Grep",
        description="Searches file contents with ripgrep (regular expressions), respecting .gitignore.\n\n- Always use this tool for content search instead of running grep or rg through Bash: it is tuned for this harness and its output is paged.\n- The pattern uses ripgrep's (Rust) regex syntax: 'log.*Error', 'function\\s+\\w+'. Literal braces need escaping: 'interface\\{\\}' finds 'interface{}'.\n- Narrow the search with `path`, `glob` (e.g. '*.py', '**/*.{ts,tsx}') or `type` (e.g. 'py', 'js').\n- output_mode: 'files_with_matches' (default) lists matching files, newest first; 'content' shows the matching lines (with -n line numbers, -A/-B/-C context); 'count' shows how many lines match in each file.\n- Patterns match within one line unless multiline is true.\n- Results are paged: at most 250 lines or entries unless head_limit says otherwise; the result says which offset continues it.\n- Lines longer than 500 characters are shortened; Read the file to see them whole.\n- For open-ended searches, run several Grep and Glob calls in one turn.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "pattern": {
                    "description": "The regular expression to search for (ripgrep syntax), e.g. 'log.*Error' or 'def\\s+\\w+'.",
                    "type": "string",
                },
                "path": {
                    "description": "File or directory to search in. Defaults to the working directory.",
                    "type": "string",
                },
                "glob": {
                    "description": "Only search files whose paths match this glob, e.g. '*.js' or '*.{ts,tsx}' (rg --glob). Several globs may be separated by spaces.",
                    "type": "string",
                },
                "type": {
                    "description": "Only search files of this type, e.g. 'py', 'js', 'rust', 'go' (rg --type). Faster than glob for standard file types.",
                    "type": "string",
                },
                "output_mode": {
                    "default": "files_with_matches",
                    "description": "'files_with_matches' lists matching files (the default); 'content' shows matching lines (and supports -A/-B/-C/-n); 'count' shows match counts per file.",
                    "enum": ["content", "files_with_matches", "count"],
                    "type": "string",
                },
                "-i": {"description": "Search case-insensitively (rg -i).", "type": "boolean"},
                "-n": {
                    "description": "Show line numbers (rg -n). Content mode only; defaults to true.",
                    "type": "boolean",
                },
                "-A": {
                    "description": "Lines to show after each match (rg -A). Content mode only.",
                    "minimum": 0,
                    "type": "integer",
                },
                "-B": {
                    "description": "Lines to show before each match (rg -B). Content mode only.",
                    "minimum": 0,
                    "type": "integer",
                },
                "-C": {
                    "description": "Lines to show before and after each match (rg -C). Content mode only.",
                    "minimum": 0,
                    "type": "integer",
                },
                "head_limit": {
                    "description": "Return at most this many lines (content), files (files_with_matches) or entries (count), after skipping `offset`. Defaults to 250; 0 means no limit (use sparingly: large results flood the context).",
                    "minimum": 0,
                    "type": "integer",
                },
                "offset": {
                    "description": "Skip this many lines/files/entries before applying head_limit, to page through large results. Defaults to 0.",
                    "minimum": 0,
                    "type": "integer",
                },
                "multiline": {
                    "description": "Let a match span lines, with '.' matching newlines (rg -U --multiline-dotall). Defaults to false.",
                    "type": "boolean",
                },
            },
            "required": ["pattern"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Read",
        description='Reads a file from the local filesystem and returns it with line numbers, like `cat -n`: each line is its number, a tab, then the text.\n\n- Reads up to 2000 lines from the start by default. For long files pass `offset` (1-based line number) and `limit` to read a slice; the result says where to continue when more remains.\n- Lines longer than 2000 characters are cut.\n- A file that is not UTF-8 is decoded as its byte-order mark says, or else with a guess at its encoding; the result then names the encoding used.\n- Images (png, jpg, jpeg, gif, webp) come back as images you can look at; a large one is scaled down first.\n- Jupyter notebooks (.ipynb) come back as their cells with outputs; for a notebook, `offset` and `limit` count cells.\n- PDFs come back as the text of each page. Pass `pages` (e.g. "1-5") to pick pages; one read shows at most 20 pages.\n- Other binary files, and directories, cannot be read: use Bash (e.g. `ls`) or Glob for directories.\n- The line-number prefix is not part of the file: leave it out when you copy text into an Edit.\n- You must Read a file before you Edit or overwrite it. When several files may be useful, read them together in one turn.\n- Reading a path that does not exist is an error that suggests similar names.',
        input_schema={
            "additionalProperties": False,
            "properties": {
                "file_path": {
                    "description": "Absolute path of the file to read (a relative path is taken from the working directory).",
                    "type": "string",
                },
                "offset": {
                    "description": "Line number to start reading from (1 is the first line). Give it only when the file is too long to read at once.",
                    "minimum": 0,
                    "type": "integer",
                },
                "limit": {
                    "description": "How many lines to read (default 2000). Give it only when the file is too long to read at once.",
                    "minimum": 1,
                    "type": "integer",
                },
                "pages": {
                    "description": 'Page range for PDF files, such as "1-5" or "3" (at most 20 pages per read). Only for PDF files.',
                    "type": "string",
                },
            },
            "required": ["file_path"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Edit",
        description="Replaces exact text in a file: old_string becomes new_string.\n\n- Read the file first; an edit to a file that was not read, or that changed since, is refused.\n- Copy old_string exactly as the file has it, with the same indentation, and without the line-number prefix Read shows (everything up to and including its tab).\n- old_string must occur exactly once. If it occurs more often, add surrounding lines to make it unique, or set replace_all to change every occurrence (useful for renaming).\n- Keep edits small and targeted; use Write only to replace a whole file.\n- The file keeps its encoding and its line endings.\n- An empty old_string creates the file with new_string as its contents, if it does not exist yet.\n- The result shows the edited region with line numbers.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "file_path": {
                    "description": "Absolute path of the file to change (a relative path is taken from the working directory).",
                    "type": "string",
                },
                "old_string": {
                    "description": "The exact text to replace, including whitespace and indentation, without Read's line-number prefixes. Empty only to create a new file (or fill an empty one).",
                    "type": "string",
                },
                "new_string": {
                    "description": "The text to put in its place (must differ).",
                    "type": "string",
                },
                "replace_all": {
                    "default": False,
                    "description": "Replace every occurrence of old_string. By default old_string must occur exactly once.",
                    "type": "boolean",
                },
            },
            "required": ["file_path", "old_string", "new_string"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Write",
        description="Writes a file, replacing it entirely if it exists.\n\n- To overwrite an existing file you must have read it with Read first, and it must not have changed since; otherwise the write is refused.\n- To change part of an existing file, prefer Edit: it sends only the change.\n- Create new files only when the task needs them; do not write documentation or README files unless asked.\n- Parent directories are created as needed. The content is written exactly as given, line endings untouched: as UTF-8 for a new file, in its own encoding for a file that exists.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "file_path": {
                    "description": "Absolute path of the file to write (a relative path is taken from the working directory). Missing parent directories are created.",
                    "type": "string",
                },
                "content": {
                    "description": "The complete contents the file should have.",
                    "type": "string",
                },
            },
            "required": ["file_path", "content"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="NotebookEdit",
        description="Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, or deletes it.\n\n- Read the notebook first; a change to a notebook that was not read, or that changed since, is refused.\n- Name the cell by its id (cell_id). In a notebook without ids, use cell-N, counting from 0.\n- edit_mode insert puts a new cell after cell_id, or at the top without one; it needs cell_type.\n- Replacing a code cell clears its outputs and execution count; run the notebook again to get new ones.\n- Use this tool, not Edit or Write, for notebooks: it keeps the file a valid notebook.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "notebook_path": {
                    "description": "Absolute path of the .ipynb file (a relative path is taken from the working directory).",
                    "type": "string",
                },
                "cell_id": {
                    "description": "The id of the cell to change or delete; for insert, the cell the new one goes after (leave it out to insert at the top). In a notebook without cell ids, name a cell as cell-N, counting from 0.",
                    "type": "string",
                },
                "new_source": {
                    "description": "The cell's new source (ignored for delete).",
                    "type": "string",
                },
                "cell_type": {
                    "description": "code or markdown: required for insert; for replace, changes the cell's type (by default it keeps its own).",
                    "enum": ["code", "markdown"],
                    "type": "string",
                },
                "edit_mode": {
                    "default": "replace",
                    "description": "replace (the default), insert or delete.",
                    "enum": ["replace", "insert", "delete"],
                    "type": "string",
                },
            },
            "required": ["notebook_path", "new_source"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="WebFetch",
        description="Fetches a web page and answers a question about it.\n\nGive the page's `url` and a `prompt` saying what you want to know or extract. The page is fetched, converted from HTML to markdown, and read by a small, fast model, which answers the prompt; you get its answer, not the whole page.\n\n- The URL must be complete (http or https). http is upgraded to https, except for localhost.\n- Read-only: it never changes anything. Prefer a more specific tool when one fits (an MCP server's fetch tool, or the `gh` CLI through Bash for GitHub).\n- Each site needs the user's approval (a few documentation sites are approved already). Local and private network addresses are refused unless the user allowed that host by name.\n- When a page redirects to another host, the redirect is not followed: the result gives the new URL, and you call WebFetch again with it.\n- Very large pages are cut before the model reads them, so ask about what you need.\n- Pages are kept for 15 minutes: asking another question about the same URL soon after is fast and does not fetch it again.\n- Binary content (a PDF, an image) is saved to a file that Read can open.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "url": {
                    "description": "The URL to fetch: a full http or https address.",
                    "type": "string",
                },
                "prompt": {
                    "description": "What to find out from the page: the question the page's content should answer, or what to extract from it.",
                    "type": "string",
                },
            },
            "required": ["url", "prompt"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="TodoWrite",
        description='Keeps your task list for this session: each call replaces the whole list with the one given.\n\n- Use it for work of three or more distinct steps, or when the user gives several things to do; skip it for a single quick change.\n- Write each task twice: content in the imperative ("Fix the parser") and activeForm as it is being done ("Fixing the parser").\n- Mark a task in_progress before you start it and completed as soon as it is fully done (tests pass, nothing left half-made); work on one task at a time where you can.\n- Add tasks you discover as you go; remove tasks that turn out not to be needed.\n- The run is not finished while a task is pending or in_progress: when you would stop with open tasks, you are sent back to finish them.',
        input_schema={
            "additionalProperties": False,
            "properties": {
                "todos": {
                    "description": "The whole task list as it should now be; it replaces the previous one.",
                    "items": {
                        "additionalProperties": False,
                        "properties": {
                            "content": {
                                "description": 'The task in the imperative, such as "Run the tests".',
                                "maxLength": 1000,
                                "minLength": 1,
                                "type": "string",
                            },
                            "status": {
                                "description": "pending, in_progress or completed.",
                                "enum": ["pending", "in_progress", "completed"],
                                "type": "string",
                            },
                            "activeForm": {
                                "description": 'The task as it is being done, such as "Running the tests".',
                                "maxLength": 1000,
                                "minLength": 1,
                                "type": "string",
                            },
                        },
                        "required": ["content", "status", "activeForm"],
                        "type": "object",
                    },
                    "maxItems": 100,
                    "type": "array",
                }
            },
            "required": ["todos"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="ExitPlanMode",
        description="Use this in plan mode, once the plan is ready, to present it for the user's approval and leave plan mode.\n\n- Only for tasks that need writing or running code: planning the steps of a change. Not for research or questions, which need no approval.\n- Read what you need first; the plan should name the files and steps concretely.\n- If the user refuses, you stay in plan mode: revise the plan as they say, or ask.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "plan": {
                    "description": "The plan to present for approval, in Markdown: concise, step by step.",
                    "minLength": 1,
                    "type": "string",
                }
            },
            "required": ["plan"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Skill",
        description="Loads a skill: a set of instructions (and sometimes scripts and reference files) for a particular kind of task.\n\n- The skills you may load are listed, each with a description, in a system reminder. When the task at hand matches a skill's description, load it before starting the task, and follow its instructions.\n- Give the skill's name as listed; put anything it should work on in `args`.\n- The skill's instructions arrive in the conversation after this call's result. A skill already loaded is there still: do not load it again for the same task.\n- A skill the user ran as a slash command is already loaded; do not load it again.\n- Only load skills that are listed; do not guess names.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "skill": {
                    "description": 'The name of the skill, as listed (e.g. "pdf" or "my-plugin:review").',
                    "type": "string",
                },
                "args": {
                    "default": "",
                    "description": "Arguments for the skill, if it takes any.",
                    "type": "string",
                },
            },
            "required": ["skill"],
            "type": "object",
        },
    ),
    ToolSpec(
        name="Pin",
        description="Pins a short note that must survive, word for word, when a long conversation is summarised to fit the context window.\n\n- Use it for facts that must not blur: an exact requirement or limit the user set, a command that must (or must never) be run, a decision and its reason, a value to reach.\n- Do not pin what the code or files already hold; they can be read again.\n- At most 20 notes of up to 1000 characters each.",
        input_schema={
            "additionalProperties": False,
            "properties": {
                "note": {
                    "description": "The fact to keep, in one or two sentences that make sense on their own.",
                    "maxLength": 1000,
                    "minLength": 1,
                    "type": "string",
                }
            },
            "required": ["note"],
            "type": "object",
        },
    ),
)
