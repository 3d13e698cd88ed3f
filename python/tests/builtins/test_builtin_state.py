"""The stateful built-ins on a state store: scopes, lifetimes, exactly-once charges, budget
windows and reservations, shared records, and what a store outage does under each fail mode."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from builtins_support import CLOCK, call, request, response, result, task_end, user

import harnessweaver as hw
from harnessweaver.builtins import BudgetGuard, LoopGuard, ToolFailureGuard
from harnessweaver.builtins._state import MAX_SWAPS, duration
from harnessweaver.builtins.budget import BudgetSettings
from harnessweaver.builtins.failures import ToolFailureSettings
from harnessweaver.builtins.loops import LoopGuardSettings
from harnessweaver.state import MemoryStore, Record, StateUnavailable, attach

pytestmark = pytest.mark.anyio


def env(run_id: str = "r", clock: hw.Clock = CLOCK, **attributes: Any) -> hw.Envelope:
    return hw.Envelope(clock=clock, run_id=run_id, attributes=attributes)


def budget(store: MemoryStore, **settings: Any) -> BudgetGuard:
    guard = BudgetGuard(BudgetSettings(**settings))
    attach(guard, store, name="budget")
    return guard


class Down(MemoryStore):
    """A store that is down while ``down`` is set."""

    down = False

    async def total(self, key: str) -> float:
        if self.down:
            raise ConnectionError("refused")
        return await super().total(key)

    async def read(self, key: str) -> Record:
        if self.down:
            raise OSError("refused")
        return await super().read(key)


class Racing(MemoryStore):
    """A store where another worker wins every swap."""

    async def swap(self, key: str, version: int, value: Any, *, life: float | None = None) -> bool:
        self.swaps = getattr(self, "swaps", 0) + 1
        return False


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("250ms", 0.25), ("30s", 30.0), ("1m", 60.0), ("1.5h", 5400.0), ("30d", 2592000.0), (2, 2.0)],
)
def test_durations(text: str | float, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("bad", ["0s", "1 m", "1w", "", "-1s", 0, -2, float("inf"), True, None])
def test_what_is_not_a_duration(bad: Any) -> None:
    with pytest.raises(ValueError):
        duration(bad)


async def test_an_org_budget_is_shared_by_two_workers() -> None:
    store = MemoryStore()
    one, two = (budget(store, max_tokens=30, warn_at=None, scope="org") for _ in range(2))
    await one(response(input_tokens=20), env("a"))
    await two(response(input_tokens=10), env("b"))
    refused = await one(request(user("next")), env("a"))
    assert refused == hw.Block(
        reason="the org has spent 30 tokens of its 30 tokens budget", code="budget_exceeded"
    )
    assert await store.total("hw1/app/budget/org/-/tokens") == 30


async def test_a_shared_charge_is_made_once_a_run_charge_every_time() -> None:
    store = MemoryStore()
    org = budget(store, max_tokens=100, scope="org")
    mine = BudgetGuard(BudgetSettings(max_tokens=100))
    attach(mine, store, name="mine")
    for _ in range(3):
        await org(response(input_tokens=10), env())
        await mine(response(input_tokens=10), env())
    assert await store.total("hw1/app/budget/org/-/tokens") == 10
    assert await store.total("hw1/app/mine/run/r/tokens") == 30


async def test_a_window_starts_the_budget_again() -> None:
    store = MemoryStore()
    guard = budget(store, max_tokens=10, warn_at=None, scope="org", per="1d")
    day = hw.FixedClock(datetime(2026, 11, 30, 23, 0, tzinfo=UTC))
    await guard(response(input_tokens=10), env(clock=day))
    assert (await guard(request(user("x")), env(clock=day))) == hw.Block(
        reason="the org has spent 10 tokens of its 10 tokens budget per 1d",
        code="budget_exceeded",
    )
    next_day = hw.FixedClock(datetime(2026, 12, 1, 0, 30, tzinfo=UTC))
    assert await guard(request(user("x")), env(clock=next_day)) is None


async def test_reservations_keep_concurrent_workers_under_the_limit() -> None:
    store = MemoryStore()
    workers = [
        budget(store, max_tokens=1000, reserve_tokens=300, warn_at=None, scope="org")
        for _ in range(8)
    ]
    answers: list[object] = []

    async def ask(i: int) -> None:
        answers.append(await workers[i](request(user("go")), env(f"w{i}")))

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(ask, i)
    granted = [a for a in answers if a is None]
    assert len(granted) == 3  # 3 x 300 held fits in 1000, a fourth does not
    assert await store.total("hw1/app/budget/org/-/tokens") == 900
    refusals = {a.reason for a in answers if isinstance(a, hw.Block)}  # type: ignore[attr-defined]
    assert refusals == {
        "the org has spent or holds 900 tokens of its 1,000 tokens budget; "
        "a request holds 300 tokens"
    }


async def test_a_response_releases_its_reservation() -> None:
    store = MemoryStore()
    guard = budget(store, max_tokens=1000, reserve_tokens=300, warn_at=None, scope="org")
    assert await guard(request(user("go")), env()) is None
    assert await store.total("hw1/app/budget/org/-/tokens") == 300
    await guard(response(input_tokens=40), env())
    assert await store.total("hw1/app/budget/org/-/tokens") == 40


async def test_a_refused_request_lets_its_other_holds_go() -> None:
    store = MemoryStore()
    guard = budget(
        store,
        max_tokens=1000,
        reserve_tokens=100,
        max_cost_usd=1.0,
        reserve_cost_usd=0.5,
        warn_at=None,
        scope="org",
    )
    await store.commit("hw1/app/budget/org/-/cost_usd", "seed", 0.75)
    refused = await guard(request(user("go")), env())
    assert isinstance(refused, hw.Block) and "a request holds $0.5000" in refused.reason
    assert await store.total("hw1/app/budget/org/-/tokens") == 0


async def test_warnings_are_once_per_run_in_a_shared_scope() -> None:
    store = MemoryStore()
    guard = budget(store, max_tokens=100, scope="org")
    await guard(response(input_tokens=80), env("a"))
    for run in ("a", "b"):
        warned = await guard(request(user("x")), env(run))
        assert isinstance(warned, hw.Continue) and warned.modified is not None
        assert await guard(request(user("x")), env(run)) is None


async def test_a_final_task_end_deletes_only_the_runs_keys() -> None:
    store = MemoryStore()
    run = budget(store, max_tokens=100)
    org = BudgetGuard(BudgetSettings(max_tokens=100, scope="org"))
    attach(org, store, name="org")
    for guard in (run, org):
        await guard(response(input_tokens=80), env())
        await guard(request(user("x")), env())  # warned: a run-scope record
    await run(task_end("suspended"), env())
    assert await store.total("hw1/app/budget/run/r/tokens") == 80
    for guard in (run, org):
        await guard(task_end("completed"), env())
    assert await store.total("hw1/app/budget/run/r/tokens") == 0
    assert (await store.read("hw1/app/budget/run/r/warned")).value is None
    assert (await store.read("hw1/app/org/run/r/warned")).value is None
    assert await store.total("hw1/app/org/org/-/tokens") == 80


@pytest.mark.parametrize("guard", ["budget", "loop", "failures"])
async def test_closed_refuses_while_the_store_is_down_and_recovers(guard: str) -> None:
    store = Down()
    made: Any = {
        "budget": lambda: BudgetGuard(BudgetSettings(max_tokens=100)),
        "loop": lambda: LoopGuard(LoopGuardSettings()),
        "failures": lambda: ToolFailureGuard(ToolFailureSettings()),
    }[guard]()
    attach(made, store, name="g")
    event = request(user("x")) if guard == "budget" else call("search")
    store.down = True
    assert await made(event, env()) == hw.Block(
        reason="middleware g: state store unavailable (memory)", code="state_unavailable"
    )
    store.down = False
    assert await made(event, env()) is None


async def test_open_fails_so_the_bus_records_it_and_goes_on() -> None:
    store = Down()
    guard = LoopGuard(LoopGuardSettings())
    bus = hw.HookBus()
    bus.register(guard, fail_mode="open", name="loop")
    attach(guard, store, name="loop", fail_mode="open")
    store.down = True
    ctx = hw.RunContext(envelope=env())
    outcome = (await bus.emit("tool.before", call("search"), ctx)).outcome
    assert outcome == hw.Continue()
    failures = [r for r in ctx.trace if r["kind"] == "failure"]
    assert [(r["error"], r["fail_mode"]) for r in failures] == [("StateUnavailable", "open")]
    with pytest.raises(StateUnavailable):
        await guard(call("search"), env())


async def test_a_swap_lost_every_time_is_an_unavailable_store() -> None:
    store = Racing()
    guard = ToolFailureGuard(ToolFailureSettings())
    attach(guard, store, name="failing")
    answer = await guard(result("search", error=True), env())
    assert answer == hw.Block(
        reason="middleware failing: state store unavailable (memory)", code="state_unavailable"
    )
    assert store.swaps == MAX_SWAPS


async def test_a_loop_shared_by_a_users_runs_warns_the_run_that_earned_it() -> None:
    store = MemoryStore()
    guard = LoopGuard(LoopGuardSettings(warn_after=2, block_after=3, scope="user"))
    attach(guard, store, name="loop")
    a, b, c = env("a", user="ann"), env("b", user="ann"), env("c", user="bob")
    assert await guard(call("search", q=1), a) is None
    assert await guard(call("search", q=1), b) is None  # 2 for ann: b is warned
    assert await guard(request(user("x")), a) is None
    warned = await guard(request(user("x")), b)
    assert isinstance(warned, hw.Continue) and warned.modified is not None
    assert "for this user" in warned.modified.request.messages[-1].content  # type: ignore[union-attr]
    assert await guard(call("search", q=1), c) is None  # bob's own window
    refused = await guard(call("search", q=1), a)
    assert refused == hw.Block(
        reason="search was called with the same arguments 3 times within the last 20 tool "
        "calls for this user; try something else",
        code="loop_detected",
    )


async def test_a_tool_failing_for_one_worker_is_refused_for_all_in_an_org_scope() -> None:
    store = MemoryStore()
    one, two = (ToolFailureGuard(ToolFailureSettings(scope="org")) for _ in range(2))
    for guard in (one, two):
        attach(guard, store, name="failing")
    for _ in range(3):
        await one(result("search", error=True), env("a"))
    assert await two(call("search"), env("b")) == hw.Block(
        reason="tool 'search' failed 3 times in a row; it is not called again in this org",
        code="tool_failing",
    )


async def test_a_record_of_another_shape_reads_as_empty() -> None:
    store = MemoryStore()
    guard = ToolFailureGuard(ToolFailureSettings(max_consecutive=1))
    attach(guard, store, name="failing")
    await store.swap("hw1/app/failing/run/r/failures", 0, {"not": "a list"})
    assert await guard(call("search"), env()) is None
    await guard(result("search", error=True), env())
    assert isinstance(await guard(call("search"), env()), hw.Block)


async def test_an_unattached_guard_keeps_its_own_memory() -> None:
    one = LoopGuard(LoopGuardSettings(block_after=2, warn_after=None))
    two = LoopGuard(LoopGuardSettings(block_after=2, warn_after=None))
    assert await one(call("search"), env()) is None
    assert await two(call("search"), env()) is None  # its own count
    assert isinstance(await one(call("search"), env()), hw.Block)


async def test_two_processes_share_one_sqlite_file(tmp_path: Any) -> None:
    from harnessweaver.builtins import RateLimit
    from harnessweaver.builtins.rates import RateLimitSettings
    from harnessweaver.state import SqliteStore

    path = tmp_path / "state.db"
    stores = [SqliteStore(path), SqliteStore(path)]  # as two workers' processes would open it
    try:
        budgets = [budget(s, max_tokens=30, warn_at=None, scope="org") for s in stores]
        rates = [RateLimit(RateLimitSettings(limit=2, per="1m", scope="org")) for _ in stores]
        loops = [LoopGuard(LoopGuardSettings(block_after=2, warn_after=None, scope="org"))]
        loops.append(LoopGuard(LoopGuardSettings(block_after=2, warn_after=None, scope="org")))
        for store, rate, loop in zip(stores, rates, loops, strict=True):
            attach(rate, store, name="rate")
            attach(loop, store, name="loop")
        await budgets[0](response(input_tokens=20), env("a"))
        await budgets[1](response(input_tokens=10), env("b"))
        assert isinstance(await budgets[0](request(user("x")), env("a")), hw.Block)
        assert await rates[0](call("search", n=1), env("a")) is None
        assert await rates[1](call("search", n=2), env("b")) is None
        assert isinstance(await rates[0](call("search", n=3), env("a")), hw.Block)
        assert await loops[0](call("search"), env("a")) is None
        assert isinstance(await loops[1](call("search"), env("b")), hw.Block)
    finally:
        for store in stores:
            await store.close()


@pytest.mark.parametrize("exit_reason", ["not_expressible", "completed", "suspended"])
async def test_a_run_that_ends_before_its_response_lets_its_reservation_go(
    exit_reason: str,
) -> None:
    # An adapter that cannot send the request with the guard's note ends the run between
    # model.before and model.after: the hold must not stay on the shared budget for 10 min.
    store = MemoryStore()
    guard = budget(store, max_tokens=1000, reserve_tokens=300, warn_at=None, scope="org")
    assert await guard(request(user("go")), env("a")) is None
    assert await guard(request(user("go")), env("b")) is None
    assert await store.total("hw1/app/budget/org/-/tokens") == 600
    await guard(task_end(exit_reason), env("a"))
    assert await store.total("hw1/app/budget/org/-/tokens") == 300  # b's request still holds
    await guard(response(input_tokens=40), env("b"))
    await guard(task_end(exit_reason), env("b"))
    assert await store.total("hw1/app/budget/org/-/tokens") == 40
