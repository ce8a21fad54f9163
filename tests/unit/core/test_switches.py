"""Switch variables read one way everywhere: on for 1/true/yes/on, off otherwise."""

from __future__ import annotations

import pytest

from stayer.switches import env_flag


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " yes ", "on"])
def test_a_switch_is_on_for_the_words_that_say_so(value: str) -> None:
    assert env_flag({"DISABLE_X": value}, "DISABLE_X")


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "", "  "])
def test_a_switch_is_off_otherwise_and_when_unset(value: str) -> None:
    assert not env_flag({"DISABLE_X": value}, "DISABLE_X")
    assert not env_flag({}, "DISABLE_X")
