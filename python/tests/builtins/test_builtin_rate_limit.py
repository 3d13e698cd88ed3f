"""``harnessweaver.rate_limit``: a sliding window of calls per scope, Block or Retry past it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from builtins_support import CLOCK, bus_with, call, request, user

import harnessweaver as hw
from harnessweaver.builtins import RateLimit
from harnessweaver.builtins.rates import RateLimitSettings
from harnessweaver.state import MemoryStore, attach

pytestmark = pytest.mark.anyio


def ctx(run_id: str = "run-1", **attributes: Any) -> hw.RunContext:
    return hw.RunContext(envelope=hw.Envelope(clock=CLOCK, run_id=run_id, attributes=attributes))


async def check(bus: hw.HookBus, context: hw.RunContext, n: int) -> hw.Outcome:
    return (await bus.emit("tool.before", call("search", n=n), context)).outcome


async def test_calls_past_the_limit_are_refused() -> None:
    bus, run = bus_with(RateLimit, limit=2, per="1m"), ctx()
    assert await check(bus, run, 1) == hw.Continue()
    assert await check(bus, run, 2) == hw.Continue()
    assert await check(bus, run, 3) == hw.Block(
        reason="rate limit of 2 calls per 1m in this run reached", code="rate_limited"
    )


async def test_retry_waits_a_whole_window() -> None:
    bus, run = bus_with(RateLimit, limit=1, per=90, on_exceed="retry"), ctx()
    assert await check(bus, run, 1) == hw.Continue()
    assert await check(bus, run, 2) == hw.Retry(
        reason="rate limit of 1 call per 90s in this run reached", delay=90.0, code="rate_limited"
    )


async def test_the_same_event_is_counted_once() -> None:
    bus, run = bus_with(RateLimit, limit=1, per="1m"), ctx()
    for _ in range(3):
        assert await check(bus, run, 1) == hw.Continue()
    assert (await check(bus, run, 2)).kind == "block"


async def test_model_requests_share_the_window() -> None:
    bus, run = bus_with(RateLimit, limit=1, per="1m"), ctx()
    assert (await bus.emit("model.before", request(user("hi")), run)).outcome == hw.Continue()
    assert (await check(bus, run, 1)).kind == "block"


async def test_a_user_scope_is_shared_by_that_users_runs_only() -> None:
    bus = bus_with(RateLimit, limit=1, per="1m", scope="user")
    assert await check(bus, ctx("a", user="ann"), 1) == hw.Continue()
    refused = await check(bus, ctx("b", user="ann"), 1)
    assert refused == hw.Block(
        reason="rate limit of 1 call per 1m for this user reached", code="rate_limited"
    )
    assert await check(bus, ctx("c", user="bob"), 1) == hw.Continue()


async def test_two_workers_on_one_store_share_the_window() -> None:
    store = MemoryStore()
    settings = RateLimitSettings(limit=2, per="1m", scope="org")
    one, two = RateLimit(settings), RateLimit(settings)
    attach(one, store, name="rate")
    attach(two, store, name="rate")
    env = hw.Envelope(clock=CLOCK, run_id="r")
    assert await one(call("search", n=1), env) is None
    assert await two(call("search", n=2), env) is None
    assert isinstance(await one(call("search", n=3), env), hw.Block)


async def test_the_window_slides() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    guard = RateLimit(RateLimitSettings(limit=1, per="1m"))
    attach(guard, store)
    env = hw.Envelope(clock=CLOCK, run_id="r")
    assert await guard(call("search", n=1), env) is None
    now[0] = 59.0
    assert isinstance(await guard(call("search", n=2), env), hw.Block)
    now[0] = 60.5  # the first call's place is free again
    assert await guard(call("search", n=3), env) is None


async def test_a_missing_user_is_a_closed_failure() -> None:
    bus, run = bus_with(RateLimit, limit=1, per="1m", scope="user"), ctx()
    outcome = await check(bus, run, 1)
    assert outcome.kind == "block" and outcome.code == "middleware_error"
    assert [r.get("error") for r in run.trace if r["kind"] == "failure"] == ["LookupError"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"per": "1m"}, "limit: Field required"),
        ({"limit": 0, "per": "1m"}, "limit: Input should be greater than or equal to 1"),
        ({"limit": 1, "per": "1 minute"}, "per"),
        ({"limit": 1, "per": "0s"}, "is not a positive duration"),
        ({"limit": 1, "per": -1}, "per"),
        ({"limit": 1, "per": "1m", "on_exceed": "wait"}, "on_exceed"),
        ({"limit": 1, "per": "1m", "scope": "team"}, "scope"),
    ],
)
def test_settings_are_checked(values: dict[str, Any], message: str) -> None:
    with pytest.raises(hw.RegistrationError, match=re.escape(message)):
        bus_with(RateLimit, **values)
