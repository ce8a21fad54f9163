"""MCP tool names: `mcp__<server>__<tool>`, only characters providers accept, at most 64 of
them, and two tools never given one name by the cut."""

from __future__ import annotations

import re

from stayer.mcp.naming import MAX_NAME_CHARS, split_name, tool_name, unique_names

_ALLOWED = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_a_plain_name_is_prefix_server_and_tool() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("git-hub", "list-issues") == "mcp__git-hub__list-issues"


def test_characters_providers_refuse_become_underscores() -> None:
    assert tool_name("my server", "get.time/zone:ü") == "mcp__my_server__get_time_zone__"


def test_a_long_name_is_cut_to_64_with_a_stable_hash_that_keeps_two_tools_apart() -> None:
    server = "a-server-with-a-rather-long-name"
    first = tool_name(server, "search_issues_by_label_and_milestone_and_author")
    second = tool_name(server, "search_issues_by_label_and_milestone_and_assignee")
    assert len(first) == len(second) == MAX_NAME_CHARS
    assert _ALLOWED.match(first) and _ALLOWED.match(second)
    assert first != second
    assert first[:-9] == second[:-9]  # the same start; only the hash tells them apart
    assert first == tool_name(server, "search_issues_by_label_and_milestone_and_author")
    assert first == "mcp__a-server-with-a-rather-long-name__search_issues_by_503cfca0"


def test_names_that_clean_alike_but_are_long_still_differ() -> None:
    long_tool = "t" * 80
    assert tool_name("a.b", long_tool) != tool_name("a_b", long_tool)


def test_split_name_gives_back_server_and_tool() -> None:
    assert split_name("mcp__time__get_current_time") == ("time", "get_current_time")
    assert split_name("mcp__time__tool__with__underscores") == ("time", "tool__with__underscores")
    assert split_name(tool_name("srv", "x")) == ("srv", "x")


def test_split_name_refuses_what_is_no_mcp_tool_name() -> None:
    for name in ("Read", "mcp__", "mcp__time", "mcp__time__", "mcp____tool", "mcp_time__x"):
        assert split_name(name) is None, name


def test_names_that_clean_alike_are_kept_apart_by_a_hash() -> None:
    names = unique_names([("a.b", "t"), ("a_b", "t"), ("x", "get.it"), ("x", "get_it")])
    assert names[0] == "mcp__a_b__t" and names[2] == "mcp__x__get_it"
    assert names[1].startswith("mcp__a_b__t_") and names[3].startswith("mcp__x__get_it_")
    assert len(set(names)) == 4
    assert names == unique_names([("a.b", "t"), ("a_b", "t"), ("x", "get.it"), ("x", "get_it")])
