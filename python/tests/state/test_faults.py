"""A store's server killed (SIGKILL) in the middle of a run, then started again on the same port
and data: while it is down every call through a StateView is StateUnavailable within the view's
timeout (never a hang, never an answer), with no URL or password in it; once it is back the
same store (no new object, no reconnect by hand) counts on from what was committed before.

For both servers, each test with a server of its own (it is killed)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from servers import SECRET, postgres_server, redis_server

from harnessweaver.state import StateUnavailable, StateView, Store

TIMEOUT = 0.25
"""The view's timeout (the default, ``state.timeout`` in a spec)."""
SLACK = 0.5
"""What a loaded CI machine may add to it."""


def _redis() -> Iterator[tuple[Any, Callable[[], Store]]]:
    from harnessweaver.state.redis import RedisStore

    with redis_server(SECRET) as server:
        yield server, lambda: RedisStore(server.url)


def _postgres() -> Iterator[tuple[Any, Callable[[], Store]]]:
    from harnessweaver.state.postgres import PostgresStore

    with postgres_server(SECRET) as server:
        yield server, lambda: PostgresStore(server.url)


@pytest.fixture(params=["redis", "postgres"])
def killable(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Callable[[], Store]]]:
    """A server of this test's own and a way to make stores on it."""
    yield from (_redis() if request.param == "redis" else _postgres())


async def _until(predicate: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


def test_killed_mid_run_then_restarted(killable: tuple[Any, Callable[[], Store]]) -> None:
    server, make_store = killable
    asyncio.run(_killed_mid_run(server, make_store))


async def _killed_mid_run(server: Any, make_store: Callable[[], Store]) -> None:
    store = make_store()
    view = StateView(store, layer="app", item="budget", fail_mode="closed", timeout=TIMEOUT)
    key = "hw1/app/budget/org/-/tokens"
    limit = 10_000.0
    attempted: list[str] = []
    committed: list[str] = []  # commits that answered: these must never be lost
    failures: list[tuple[float, BaseException]] = []
    running = True

    async def worker(n: int) -> None:
        i = 0
        while running:
            hold = f"w{n}/{i}"
            i += 1
            attempted.append(hold)
            started = time.monotonic()
            try:
                got = await view.reserve(key, hold, 1, limit=limit, ttl=600)
                assert got.granted
                await view.commit(key, hold, 1)
                committed.append(hold)
            except StateUnavailable as exc:
                failures.append((time.monotonic() - started, exc))
                await asyncio.sleep(0.01)

    workers = [asyncio.create_task(worker(n)) for n in range(8)]
    try:
        await _until(lambda: len(committed) >= 100, 60)
        before = len(committed)
        await asyncio.to_thread(server.kill)
        # Down: a burst of failures, each within the timeout, the workers still going.
        await _until(lambda: len(failures) >= 40, 30)
        down_since = len(committed)
        await asyncio.sleep(0.3)
        assert len(committed) == down_since, "a commit answered while the server was down"
        for elapsed, exc in failures:
            assert elapsed <= 2 * TIMEOUT + SLACK, f"a failure took {elapsed:.2f} s"
            assert exc.backend == store.backend
            for text in (SECRET, str(server.port)):
                assert text not in str(exc) and text not in repr(exc)
        for view_call in (view.total(key), view.read(key), view.swap(key, 0, 1)):
            started = time.monotonic()
            with pytest.raises(StateUnavailable):
                await view_call
            assert time.monotonic() - started <= TIMEOUT + SLACK
        block = view.unavailable(failures[0][1])  # what a closed middleware answers
        assert block.code == "state_unavailable"
        # Back: the same store recovers by itself.
        await asyncio.to_thread(server.start)
        restarted = len(committed)
        await _until(lambda: len(committed) >= restarted + 100, 60)
    finally:
        running = False
        await asyncio.gather(*workers, return_exceptions=True)
    assert before >= 100
    # Nothing committed before the kill is lost, nor anything that answered since.
    total = await view.total(key)
    assert total >= len(committed)
    # A call that failed may or may not have reached the server: committing each such hold
    # again (exactly once by its hold id) settles the count to exactly one per attempt.
    done = set(committed)
    for hold in attempted:
        if hold not in done:
            await view.commit(key, hold, 1)
    assert await view.total(key) == len(set(attempted))
    for hold in committed[:50]:  # a committed hold is still known: repeated, not charged
        assert (await view.reserve(key, hold, 1, limit=limit, ttl=600)).repeated
    await store.close()


def test_down_from_the_start_then_up(killable: tuple[Any, Callable[[], Store]]) -> None:
    """A store made while its server is down (a worker starting during an outage): unavailable
    within the timeout, then working once the server is up, the tables made then."""
    server, make_store = killable
    server.kill()

    async def go() -> None:
        store = make_store()
        view = StateView(store, layer="app", item="loop", fail_mode="open", timeout=TIMEOUT)
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(StateUnavailable):
                await view.swap("hw1/app/loop/run/r1/seen", 0, {"n": 1})
            assert time.monotonic() - started <= TIMEOUT + SLACK
        await asyncio.to_thread(server.start)
        assert await view.swap("hw1/app/loop/run/r1/seen", 0, {"n": 1})
        record = await view.read("hw1/app/loop/run/r1/seen")
        assert (record.value, record.version) == ({"n": 1}, 1)
        await store.close()

    asyncio.run(go())


def test_a_record_survives_a_restart(killable: tuple[Any, Callable[[], Store]]) -> None:
    server, make_store = killable

    async def go() -> None:
        store = make_store()
        view = StateView(store, layer="app", item="loop", fail_mode="closed", timeout=TIMEOUT)
        key = "hw1/app/loop/user/u1/seen"
        assert await view.swap(key, 0, {"calls": 1})
        assert await view.swap(key, 1, {"calls": 2})
        await asyncio.to_thread(server.restart)
        record = await view.read(key)  # at once: the store saw its connections closed
        assert (record.value, record.version) == ({"calls": 2}, 2)
        assert await view.swap(key, 2, {"calls": 3})
        await store.close()

    asyncio.run(go())
