"""The tree's spend ledger: each run's budget check sees everything the tree spent that the
run has not counted as its own, each dollar once."""

from __future__ import annotations

import asyncio

import pytest

from stayer.loop.abort import AbortSignal
from stayer.session.children import Tree
from stayer.tools.base import ToolFailure


def test_a_run_counts_the_rest_of_the_tree_and_never_what_was_billed_into_it() -> None:
    tree = Tree({})
    top = tree.open_top()
    child, grandchild = tree.open(), tree.open()
    top.own, child.own, grandchild.own = 1.0, 2.0, 4.0
    assert [tree.elsewhere(run) for run in (top, child, grandchild)] == [6.0, 5.0, 3.0]
    tree.bill(child, grandchild)  # the grandchild's report reached the child, with its spend
    assert [tree.elsewhere(run) for run in (top, child)] == [6.0, 1.0]
    tree.bill(top, child)  # and the child's, with both spends, reached the top
    assert tree.elsewhere(top) == 0.0
    assert tree.open_top() is not top and tree.elsewhere(tree.open_top()) == 0.0


async def test_a_spawn_waiting_for_a_place_is_stopped_by_an_abort() -> None:
    tree = Tree({"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "1"})
    first, second = tree.open(), tree.open()
    await tree.slot(AbortSignal(), first)
    abort = AbortSignal()
    waiting = asyncio.ensure_future(tree.slot(abort, second))
    await asyncio.sleep(0)  # let it start waiting (nothing to wait on but the event loop)
    assert not waiting.done()
    abort.abort()
    with pytest.raises(ToolFailure, match="stopped while it waited for a free slot"):
        await waiting
    tree.release(first)
    assert tree.running == 0


def test_limits_from_the_environment() -> None:
    tree = Tree(
        {"CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "5", "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "0"}
    )
    assert (tree.max_depth, tree.max_concurrent) == (5, 10)
    assert tree.warnings == (
        "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS='0' is not a whole number >= 1; using 10",
    )


async def test_a_run_waiting_on_its_children_lends_its_place_and_takes_one_again() -> None:
    tree = Tree({"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "1"})
    parent, child = tree.open(), tree.open()
    await tree.slot(AbortSignal(), parent)
    tree.pause(parent)  # it waits on its child: the one place is the child's now
    await tree.slot(AbortSignal(), child)
    assert (parent.holds, child.holds, tree.running) == (False, True, 1)
    back = asyncio.ensure_future(tree.resume(AbortSignal(), parent))
    await asyncio.sleep(0)  # let it start waiting (nothing to wait on but the event loop)
    assert not back.done()  # the place is the running child's until it ends
    tree.release(child)
    await back
    assert (parent.holds, child.holds, tree.running) == (True, False, 1)
    tree.release(parent)
    assert tree.running == 0
