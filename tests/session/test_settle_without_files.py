"""A run with no settings file skips the settings models (see `test_startup_imports`), and must
come out exactly as a run whose only settings file says nothing: the same options, environment,
rules and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.session.options import QueryOptions
from stayer.session.settings import settle

GIVEN = (
    QueryOptions(),
    QueryOptions(
        permission_mode="acceptEdits",
        allowed_tools="Bash(ls:*) Read",
        disallowed_tools=["Bash(rm:*)"],
        add_dirs=["/tmp"],
        model="claude-sonnet-4-5",
        done_when="make test",
        autocompact_window=100_000,
        autocompact_percent=80,
        env={"A": "1"},
    ),
)


@pytest.mark.parametrize("options", GIVEN)
def test_no_settings_file_folds_in_as_an_empty_one(tmp_path: Path, options: QueryOptions) -> None:
    env = {"HOME": str(tmp_path / "home"), "STAYER_CONFIG_DIR": str(tmp_path / "stayer"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}  # fmt: skip
    bare = tmp_path / "bare"
    bare.mkdir()
    empty = tmp_path / "empty"
    (empty / ".stayer").mkdir(parents=True)
    (empty / ".stayer" / "settings.json").write_text("{}")

    without = settle(options, bare, env)
    with_empty = settle(options, empty, env)

    assert without.loaded.merged is None
    assert with_empty.loaded.merged is not None
    assert (without.options, without.env, without.ask, without.warnings) == (
        with_empty.options, with_empty.env, with_empty.ask, with_empty.warnings,
    )  # fmt: skip
    assert without.loaded.settings == with_empty.loaded.settings
    assert without.loaded.hooks == with_empty.loaded.hooks == {}
