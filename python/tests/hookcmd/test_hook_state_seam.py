"""The builtins' state seam: ``tracked`` collects the states a harness builds, and each
state's ``dump`` restores into a fresh state that behaves the same."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.builtins import BudgetGuard, LoopGuard, ToolFailureGuard
from harnessweaver.builtins._runs import RunStates, tracked
from harnessweaver.builtins.budget import BudgetSettings
from harnessweaver.builtins.failures import ToolFailureSettings
from harnessweaver.builtins.loops import LoopGuardSettings


def _call(tool: str, n: int) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name=tool), call=hw.ToolCall(name=tool, arguments={"n": n})
    )


def _copy(states: RunStates[Any], fresh: RunStates[Any]) -> None:
    fresh.restore(json.loads(json.dumps(states.dump())))


def test_tracked_collects_the_states_built_inside_only() -> None:
    with tracked() as states:
        first = LoopGuard(LoopGuardSettings())
        second = BudgetGuard(BudgetSettings(max_tokens=10))
    outside = ToolFailureGuard(ToolFailureSettings())
    assert states == [first.runs, second.runs]
    assert outside.runs not in states


@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2)), max_size=30))
def test_a_restored_loop_guard_decides_as_the_original(calls: list[tuple[str, int]]) -> None:
    settings = LoopGuardSettings(warn_after=2, block_after=3, window=5)
    original, env = LoopGuard(settings), hw.Envelope(run_id="r")
    for tool, n in calls:
        asyncio.run(original(_call(tool, n), env))
    restored = LoopGuard(settings)
    _copy(original.runs, restored.runs)
    for tool, n in [("a", 0), ("b", 1), ("a", 0)]:
        mine = asyncio.run(original(_call(tool, n), env))
        theirs = asyncio.run(restored(_call(tool, n), env))
        assert type(mine) is type(theirs)
    assert original.runs.dump() == restored.runs.dump()


def test_budget_and_failure_states_round_trip() -> None:
    budget = BudgetGuard(BudgetSettings(max_tokens=10))
    spent = budget.runs["r"]
    spent.tokens, spent.cost_usd, spent.warned = 7, 0.5, {"tokens"}
    again = BudgetGuard(BudgetSettings(max_tokens=10))
    _copy(budget.runs, again.runs)
    assert again.runs["r"] == spent
    failures = ToolFailureGuard(ToolFailureSettings())
    failures.runs["r"]["tool"].consecutive = 2
    more = ToolFailureGuard(ToolFailureSettings())
    _copy(failures.runs, more.runs)
    assert more.runs["r"]["tool"].consecutive == 2
    assert more.runs.dump() == failures.runs.dump()


@pytest.mark.parametrize(
    "bad", [3, [3], [["r"]], [["r", {"recent": 3}]], [["r", {"recent": [], "pending": [1]}]]]
)
def test_a_malformed_dump_is_a_value_error(bad: Any) -> None:
    guard = LoopGuard(LoopGuardSettings())
    with pytest.raises(ValueError):
        guard.runs.restore(bad)
