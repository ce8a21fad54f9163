"""One option path: each option is declared once (`stayer.cli.options`), and a field, a flag or
a loop parameter added in one place only fails here; options go to a worker as plain data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stayer.cli.flags import build_parser
from stayer.cli.options import API_ONLY, CLI_ONLY, FLAGS, options_from_args
from stayer.errors import ConfigError
from stayer.loop.state import LoopParams, RetryPolicy
from stayer.providers.scripted import ScriptedProvider
from stayer.session.options import OBJECT_FIELDS, QueryOptions
from stayer.session.setup import prepare

COMPATIBILITY = "accepted for compatibility, not acted on yet"


def parser_destinations() -> set[str]:
    """Every destination of the parser's own flags (the tolerated ones left out)."""
    parser = build_parser()
    tolerated = next(g for g in parser._action_groups if g.title == COMPATIBILITY)
    skipped = {action.dest for action in tolerated._group_actions} | {"help"}
    return {action.dest for action in parser._actions} - skipped


def test_every_option_field_is_set_by_a_flag_or_named_as_the_apis_alone() -> None:
    fields = set(QueryOptions.__struct_fields__)
    assert set(FLAGS) | API_ONLY == fields
    assert set(FLAGS) & API_ONLY == set()


def test_every_flag_sets_an_option_or_is_named_as_the_command_lines_alone() -> None:
    read = {dest for dest, _ in FLAGS.values()}
    assert parser_destinations() == read | CLI_ONLY
    assert read & CLI_ONLY == set()


LOOP_COUNTERPARTS: dict[str, tuple[Any, str, Any]] = {
    # option: (value given, LoopParams field, value it must have there)
    "max_turns": (7, "max_turns", 7),
    "max_budget_usd": (1.5, "max_budget_usd", 1.5),
    "token_budget": (50_000, "token_budget", 50_000),
    "repeat_nudge_after": (2, "repeat_nudge_after", 2),
    "repeat_stop_after": (9, "repeat_stop_after", 9),
    "max_tokens": (1234, "max_tokens", 1234),
    "max_concurrent_tools": (3, "max_concurrent_tools", 3),
    "retry": (RetryPolicy(max_retries=2), "retry", RetryPolicy(max_retries=2)),
    "model": ("claude-haiku-5-5", "model", "claude-haiku-5-5"),
}
"""The options a loop parameter carries as they are given."""


@pytest.mark.parametrize("option", sorted(LOOP_COUNTERPARTS))
def test_an_option_with_a_loop_parameter_reaches_it(tmp_path: Path, option: str) -> None:
    given, field, expected = LOOP_COUNTERPARTS[option]
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    options = QueryOptions(
        cwd=tmp_path, env=env, provider=ScriptedProvider([]), persist_session=False,
        **{option: given},
    )  # fmt: skip
    assert getattr(prepare(options).params, field) == expected


def test_every_loop_counterpart_names_a_real_field() -> None:
    loop_fields = set(LoopParams.__struct_fields__)
    assert {field for _, field, _ in LOOP_COUNTERPARTS.values()} <= loop_fields
    assert set(LOOP_COUNTERPARTS) <= set(QueryOptions.__struct_fields__)


def test_flags_become_options_through_the_one_function(tmp_path: Path) -> None:
    prompt_file = tmp_path / "system.txt"
    prompt_file.write_text("Be brief.")
    args = build_parser().parse_args(
        ["-p", "hi", "--model", "haiku", "--allowedTools", "Read,Bash(ls)", "--betas", "a,b",
         "--system-prompt-file", str(prompt_file), "--dangerously-skip-permissions",
         "--max-turns", "4", "--no-session-persistence"]
    )  # fmt: skip
    options = options_from_args(args)
    assert options.model == "haiku"
    assert list(options.allowed_tools) == ["Read,Bash(ls)"]  # split into rules later
    assert list(options.betas) == ["a", "b"]
    assert options.system_prompt == "Be brief."
    assert options.permission_mode == "bypassPermissions"
    assert (options.max_turns, options.persist_session) == (4, False)


def test_options_travel_to_a_worker_as_plain_data_and_come_back_the_same() -> None:
    options = QueryOptions(
        model="sonnet",
        cwd=Path("/work/repo"),
        allowed_tools=("Read", "Bash(git status)"),
        add_dirs=(Path("/shared"),),
        max_turns=12,
        permission_mode="acceptEdits",
        retry=RetryPolicy(max_retries=3, base_delay_s=1.0),
        env={"A": "1"},
        settings={"permissions": {"deny": ["Read(.env)"]}},
        autocompact_window="auto",
        provider=ScriptedProvider([]),
    )
    spec = json.loads(json.dumps(options.to_spec()))  # nothing but JSON
    assert OBJECT_FIELDS.isdisjoint(spec)
    model = ScriptedProvider([])
    back = QueryOptions.from_spec(spec, provider=model)
    assert back.provider is model
    for name in set(QueryOptions.__struct_fields__) - OBJECT_FIELDS:
        mine, theirs = getattr(options, name), getattr(back, name)
        plain = json.loads(json.dumps(QueryOptions(**{name: mine}).to_spec().get(name)))
        assert json.loads(json.dumps(QueryOptions(**{name: theirs}).to_spec().get(name))) == plain


def test_a_spec_with_a_field_options_do_not_have_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"no such option\(s\) provider, turbo"):
        QueryOptions.from_spec({"model": "sonnet", "turbo": True, "provider": "x"})


def test_a_spec_whose_values_do_not_fit_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^options spec: .*give each field once"):
        QueryOptions.from_spec({"retry": {"max_retries": 2, "turbo": 1}})
