"""What `stayer -p` imports before its first model request leaves: a fixed list, not a timing.

Start-up, from launch to the first request reaching the server, is what every headless run
waits for, and most of it is importing: pydantic and the models built on it cost tens of
milliseconds (the settings were pydantic models too, 50-80 ms for anyone with a settings file),
and so did dataclasses by the hundred. So the path to the first request imports
only what that request needs, and the rest is imported inside the function that first uses it:

* the settings models and their parser (`stayer.config.model`, `stayer.config.parse`; msgspec
  types them, and pydantic stays away) load only when a settings file exists;
* hooks (`stayer.hooks`: the runner, the reply models, matching) only when settings define
  hooks (msgspec types their replies: pydantic stays away);
* the shell parser and the command tables (tree-sitter, `stayer.exec.shell_syntax`, the
  readers and program tables) with the first command a permission check or the Bash tool
  reads;
* the tools' implementations and their pydantic input models with the first tool call (the
  request carries their specs, generated data in `stayer.tools.builtin_specs`);
* the price table (`stayer.providers.price_table`, generated from `genai_prices`, which a run
  never imports) with the first cost worked out;
* the parsers of agent, skill, command and plugin files (`stayer.agents.definitions`,
  `.skills`, `.plugins`) and PyYAML behind them only when such a file is found: the catalog
  (`stayer.agents.catalog`) only stats their folders.

Something start-up must read (a cache of model names, say) stays a plain file read with the
standard library. stayer's records are `msgspec.Struct`s, never dataclasses: CPython 3.11 builds
a dataclass by compiling its generated methods at import, about half a millisecond a class, and
the ~130 records on this path cost 70 ms that way; a Struct is built in C in a hundredth of that
(`test_no_record_is_a_dataclass` keeps it so).

A module you add to this path must be cheap and needed by the first request; then add it to
`STARTUP` below on purpose. If this test fails, move the new module-level import into the
function that uses it (with `TYPE_CHECKING` for annotations) rather than growing the list.

Each run is the real CLI under `python -X importtime`, against the fake model server holding
its answer: the process is stopped once the server has the request, so what it printed by then
is what start-up imported.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_text

STARTUP = frozenset(
    {
        "stayer",
        "stayer._version",
        "stayer.agents",  # the records a session's catalog holds (`Resolved.catalog`)
        "stayer.agents.builtin",  # with the catalog: the built-in agents, plain records
        "stayer.agents.catalog",  # stats the agent, skill and command folders; reads none
        "stayer.agents.model",
        "stayer.cli",
        "stayer.cli.flags",
        "stayer.cli.options",
        "stayer.cli.subcommands",
        "stayer.cli.unused_flags",  # the one-line notes on flags given where they do nothing
        "stayer.config",
        "stayer.config.dirs",
        "stayer.config.sources",
        "stayer.context",
        "stayer.context.compact",
        "stayer.context.git",
        "stayer.context.imports",
        "stayer.context.memory",
        "stayer.context.ownership",
        "stayer.context.prompt",
        "stayer.context.saved_prompt",
        "stayer.errors",
        "stayer.events",
        "stayer.exec",
        "stayer.exec.background",
        "stayer.exec.capture",
        "stayer.exec.child_env",
        "stayer.exec.child_watch",
        "stayer.exec.globs",
        "stayer.exec.lines",
        "stayer.exec.probe",
        "stayer.exec.process",
        "stayer.exec.sandbox",
        "stayer.exec.watchdog",
        "stayer.exec.watchdog_program",
        "stayer.json_text",  # the request body and the transcript are written with it (json, re)
        "stayer.loop",
        "stayer.loop.abort",
        "stayer.loop.asking",
        "stayer.loop.budget",
        "stayer.loop.compaction",
        "stayer.loop.executor",
        "stayer.loop.fallback",
        "stayer.loop.reattach",
        "stayer.loop.recovery",
        "stayer.loop.response",
        "stayer.loop.run",
        "stayer.loop.state",
        "stayer.loop.stream_cut",
        "stayer.loop.tool_exec",
        "stayer.loop.tool_round",
        "stayer.loop.turn",
        "stayer.mcp",  # its package docstring only: nothing of the MCP SDK loads
        "stayer.mcp.tokens",  # what the tool definitions cost, for the init line
        "stayer.messages",
        "stayer.permissions",
        "stayer.permissions.matching",
        "stayer.permissions.policy",
        "stayer.permissions.protected",
        "stayer.permissions.reach",
        "stayer.permissions.rules",
        "stayer.permissions.shell",
        "stayer.permissions.texts",
        "stayer.providers",
        "stayer.providers._encoded",
        "stayer.providers._clients",
        "stayer.providers._http",
        "stayer.providers._watchdog",
        "stayer.providers.anthropic",
        "stayer.providers.base",
        "stayer.providers.endpoints",
        "stayer.providers.model_list",  # the model-name cache: a plain file read
        "stayer.providers.models",  # the alias table
        "stayer.providers.prices",
        "stayer.providers.profiles",
        "stayer.providers.select",
        "stayer.session",
        "stayer.session.ask_model",
        "stayer.session.assemble",
        "stayer.session.children",  # the subagent tree's bounds, read from the environment
        "stayer.session.compaction",
        "stayer.session.fallback",
        "stayer.session.git_history",
        "stayer.session.limits",
        "stayer.session.listings",  # the first message lists the agent types and skills
        "stayer.session.mode_bounds",  # the rule for switching into bypassPermissions
        "stayer.session.mode_reminder",  # the first request says when plan mode is on
        "stayer.session.options",
        "stayer.session.paths",
        "stayer.session.permission_check",
        "stayer.session.protected_look",
        "stayer.session.reasoning",  # the thinking and effort the first request asks for
        "stayer.session.resolve",
        "stayer.session.repair",
        "stayer.session.sandboxing",
        "stayer.session.scrub",  # with transcript_read and _write: the transcript module split
        "stayer.session.recording",
        "stayer.session.resuming",
        "stayer.session.session",
        "stayer.session.session_mcp",  # the MCP part of Session (a mixin): the link is lazy
        "stayer.session.session_tree",  # the subagent part of Session (a mixin)
        "stayer.session.setup",
        "stayer.session.settings",
        "stayer.session.skill_host",  # every session's; rendering loads with the first skill
        "stayer.session.system_prompt",
        "stayer.session.todo_check",
        "stayer.session.toolset",
        "stayer.session.transcript",
        "stayer.session.transcript_read",
        "stayer.session.transcript_write",
        "stayer.session.trees",
        "stayer.switches",
        "stayer.tools",
        "stayer.tools.base",
        "stayer.tools.builtin_specs",
        "stayer.tools.names",
        "stayer.tools.preapproved",
        "stayer.tools.registry",
        "stayer.tools.saved",
        "stayer.driver",
        "stayer.ui",
        "stayer.ui.closed_output",
        "stayer.ui.headless",
        "stayer.ui.live",
        "stayer.ui.live_output",
        "stayer.ui.stream_json",
        "stayer.ui.wording",
    }
)
"""The stayer modules a plain `stayer -p` may import before its first request."""

THIRD_PARTY = frozenset(
    {"anyio", "certifi", "h11", "httpcore", "httpx", "httpx_sse", "idna", "msgspec", "sniffio",
     "typing_extensions"}
    # what the HTTP stack only looks for (an optional codec, HTTP/2, SOCKS, trio), and the
    # interpreter's own probes
    | {"brotli", "brotlicffi", "zstandard", "h2", "socksio", "trio", "org", "sitecustomize"}
)  # fmt: skip
"""The packages outside the standard library it may import by then: the HTTP client's, and
msgspec, whose structs are stayer's records."""

LATER = (
    "pydantic",
    "pydantic_core",
    "tree_sitter",
    "genai_prices",
    "stayer.providers.listed",
    "stayer.providers.price_table",
    "stayer.config.model",
    "stayer.config.parse",
    "yaml",  # agents', skills' and commands' front matter: only when such a file exists
    "stayer.agents.definitions",
    "stayer.agents.frontmatter",
    "stayer.agents.skills",
    "stayer.agents.plugins",
    "stayer.hooks",
    "stayer.hooks.callbacks",
    "stayer.hooks.reply",
    "stayer.hooks.runner",
    "stayer.exec.shell_syntax",
    "stayer.exec.readers",
    "stayer.exec.programs",
    "stayer.tools.builtin",
    "stayer.tools.builtin.bash",
)
"""Named here as well, so a failure says plainly which costly module came back."""


def imported_before_first_request(cwd: Path, server: FakeModelServer) -> set[str]:
    """Every module `stayer -p` in `cwd` imported by the time its first request arrived."""
    server.enqueue(anthropic_text("never sent").stalled(before_headers=30))
    command = [sys.executable, "-X", "importtime", "-m", "stayer", "-p", "hi",
               "--output-format", "stream-json", "--verbose"]  # fmt: skip
    # A file, not a pipe: what stayer started (its watchdog) may hold the descriptor open.
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=clean_env(server.env()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            server.wait_for_requests(1, timeout_s=30)
        finally:
            process.kill()  # holding its answer, the process imports nothing more until then
            process.wait()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    server.wait_for_abandoned(1)
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    assert "stayer.session.session" in modules, stderr[-2000:]
    return modules


def beyond_startup(modules: set[str]) -> list[str]:
    """The stayer modules imported that a plain run does not import."""
    return sorted(m for m in modules if m.split(".")[0] == "stayer" and m not in STARTUP)


SETTINGS_MODULES = [
    "stayer.config.locate",
    "stayer.config.model",
    "stayer.config.parse",
    "stayer.config.typing_errors",
]
HOOK_MODULES = [
    "stayer.hooks",
    "stayer.hooks.callbacks",
    "stayer.hooks.match",
    "stayer.hooks.reply",
    "stayer.hooks.runner",
    "stayer.session.hook_points",
]


def top_level_third_party(modules: set[str]) -> set[str]:
    tops = {name.split(".")[0] for name in modules}
    return {top for top in tops if top not in sys.stdlib_module_names and top != "stayer"}


def test_a_plain_run_imports_only_what_the_first_request_needs(
    server: FakeModelServer, tmp_path: Path
) -> None:
    modules = imported_before_first_request(tmp_path, server)

    assert [name for name in LATER if name in modules] == []
    assert beyond_startup(modules) == []
    assert sorted(top_level_third_party(modules) - THIRD_PARTY) == []


def test_a_settings_file_loads_the_settings_models_and_nothing_more(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / ".stayer").mkdir()
    (tmp_path / ".stayer" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]}})
    )
    modules = imported_before_first_request(tmp_path, server)

    assert beyond_startup(modules) == SETTINGS_MODULES
    assert "pydantic" not in modules  # msgspec types the settings
    assert "stayer.tools.builtin" not in modules  # a deny rule on reading loads no tool
    assert "tree_sitter" not in modules


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_hooks_load_only_when_the_settings_define_some(
    server: FakeModelServer, tmp_path: Path, event: str
) -> None:
    (tmp_path / ".stayer").mkdir()
    hook = {"type": "command", "command": "true"}
    (tmp_path / ".stayer" / "settings.json").write_text(
        json.dumps({"hooks": {event: [{"matcher": "", "hooks": [hook]}]}})
    )
    modules = imported_before_first_request(tmp_path, server)

    assert beyond_startup(modules) == sorted(SETTINGS_MODULES + HOOK_MODULES)
    assert "tree_sitter" not in modules
    assert "pydantic" not in modules  # msgspec types the hooks' replies too


def test_no_record_is_a_dataclass() -> None:
    """stayer's records are msgspec Structs: a dataclass on the start-up path costs about half a
    millisecond to build, a Struct a hundredth of that (see the module docstring)."""
    src = Path(__file__).resolve().parents[2] / "src" / "stayer"
    using = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if re.search(r"^\s*(from dataclasses import|import dataclasses)", path.read_text(), re.M)
    )
    assert using == [], "use msgspec.Struct (frozen=True) for records instead of dataclasses"


def test_a_run_prices_its_calls_without_importing_the_price_package(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """The cost in the `result` comes from the generated table: `genai_prices` (a second of
    pydantic and 2,300 models on a busy machine) is never imported, before the answer or after."""
    server.enqueue(anthropic_text("hello"))
    command = [sys.executable, "-X", "importtime", "-m", "stayer", "-p", "hi",
               "--output-format", "stream-json", "--verbose"]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, env=clean_env(server.env()), capture_output=True, text=True
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert (result["type"], result["result"]) == ("result", "hello"), done.stderr[-2000:]
    assert result["total_cost_usd"] > 0
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "stayer.providers.price_table" in imported
    assert [name for name in imported if name.startswith("genai_prices")] == []
