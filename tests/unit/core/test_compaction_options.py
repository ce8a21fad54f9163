"""The compaction policy and recovery thresholds a run gets from its options and environment,
and the one-line refusals of values that cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.loop.state import CompactPolicy
from stayer.providers.scripted import ScriptedProvider
from stayer.session.compaction import compact_policy
from stayer.session.options import QueryOptions
from stayer.session.paths import config_root, project_slug, session_folder
from stayer.session.setup import prepare

SESSION = "0b6c3c0e-1d2e-4f3a-9b8c-7d6e5f4a3b2c"


def policy(env: dict[str, str] | None = None, **options: object) -> CompactPolicy:
    return compact_policy(QueryOptions(**options), env or {}, Path("/w"), SESSION)  # type: ignore[arg-type]


def test_the_defaults_compact_automatically_and_save_prompts_in_the_session_folder() -> None:
    assert policy({"STAYER_CONFIG_DIR": "/cfg"}) == CompactPolicy(
        saved_prompts=Path("/cfg/projects/-w") / SESSION / "prompts"
    )


def test_switches_are_on_only_when_truthy_and_auto_means_the_models_window() -> None:
    assert policy({"DISABLE_AUTO_COMPACT": "0", "DISABLE_COMPACT": "false"}).auto
    assert not policy({"DISABLE_AUTO_COMPACT": "TRUE"}).auto
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "120000"}
    assert policy(env, autocompact_window="auto").window is None


def test_the_environment_and_the_options_set_the_threshold() -> None:
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "120000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}
    assert (policy(env).window, policy(env).percent) == (120_000, 70)
    chosen = policy(env, autocompact_window=150_000, autocompact_percent=60)
    assert (chosen.window, chosen.percent) == (150_000, 60)  # the option wins
    assert (
        policy({"DISABLE_AUTO_COMPACT": "1"}).auto,
        policy({"DISABLE_AUTO_COMPACT": "1"}).reactive,
    ) == (False, True)
    assert (policy({"DISABLE_COMPACT": "1"}).auto, policy({"DISABLE_COMPACT": "1"}).reactive) == (
        False,
        False,
    )


@pytest.mark.parametrize(
    ("env", "options", "message"),
    [
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "0"}, {}, "from 1 to 100, not '0'"),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "lots"}, {}, "from 1 to 100, not 'lots'"),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "big"}, {}, "a number of tokens, not 'big'"),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "5000"}, {}, "at least 100,000 tokens, not 5,000"),
        ({}, {"autocompact_window": 50_000}, "--autocompact must be at least 100,000"),
        ({}, {"pins": ["ok", "  "]}, "--pin needs a note"),
    ],
)
def test_unusable_values_are_refused_in_one_line(
    env: dict[str, str], options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as refused:
        policy(env, **options)
    assert "\n" not in str(refused.value)


def test_pins_and_thresholds_reach_the_loop(tmp_path: Path) -> None:
    options = QueryOptions(
        cwd=tmp_path,
        provider=ScriptedProvider([]),
        pins=["Keep the public API stable."],
        repeat_nudge_after=2,
        repeat_stop_after=4,
    )
    params = prepare(options, "go").params
    assert params.compaction.pins == ("Keep the public API stable.",)
    assert "# Pinned by the user\n" in params.system_prompt
    assert "- Keep the public API stable." in params.system_prompt
    assert (params.repeat_nudge_after, params.repeat_stop_after) == (2, 4)


@pytest.mark.parametrize(("nudge", "stop"), [(0, 5), (4, 3), (3, 3)])
def test_repeat_thresholds_out_of_order_are_refused(tmp_path: Path, nudge: int, stop: int) -> None:
    options = QueryOptions(
        cwd=tmp_path,
        provider=ScriptedProvider([]),
        repeat_nudge_after=nudge,
        repeat_stop_after=stop,
    )
    with pytest.raises(ConfigError, match="repeated failures must be nudged"):
        prepare(options, "go")


def test_a_session_id_names_a_folder_so_it_must_be_a_uuid(tmp_path: Path) -> None:
    bad = QueryOptions(cwd=tmp_path, provider=ScriptedProvider([]), session_id="../../etc")
    with pytest.raises(ConfigError, match=r"the session id must be a UUID, not '\.\./\.\./etc'"):
        prepare(bad, "go")
    good = QueryOptions(cwd=tmp_path, provider=ScriptedProvider([]), session_id=SESSION)
    assert prepare(good, "go").started.session_id == SESSION


def test_session_files_live_under_the_config_root_by_project() -> None:
    assert config_root({"STAYER_CONFIG_DIR": "/x"}) == Path("/x")
    assert config_root({"STAYER_CONFIG_DIR": "rel"}) == Path.cwd() / "rel"  # never relative
    assert config_root({}) == Path.home() / ".stayer"
    assert project_slug(Path("/home/me/my project.v2")) == "-home-me-my-project-v2"
    assert session_folder({"STAYER_CONFIG_DIR": "/x"}, Path("/a/b"), SESSION) == Path(
        f"/x/projects/-a-b/{SESSION}"
    )
