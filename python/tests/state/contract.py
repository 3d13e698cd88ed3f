"""The one contract every state store keeps, run against each backend.

Subclass :class:`StoreContract` in a test module and give it the ``make_store`` fixture, a
function returning a new store on the backend under test (all stores it makes share their
data, as processes sharing one server or file do)::

    class TestRedis(StoreContract):
        @pytest.fixture
        def make_store(self, redis_url: str) -> Callable[[], Store]:
            return lambda: RedisStore(redis_url)

        @pytest.fixture
        def secrets(self, redis_url: str) -> tuple[str, ...]:
            return (redis_url,)                 # never in a repr or an error

Tests run under asyncio and trio (``anyio_backend``); a store that only runs on asyncio
overrides ``anyio_backend`` to return ``"asyncio"``. Every test uses keys of its own (a fresh
prefix), so one server can serve the whole suite. Expiry is checked with real time (short
ttls): servers keep their own clocks. It is not ``conftest.py``: a second conftest would shadow
``python/tests/conftest.py``.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from harnessweaver.state import Record, Reservation, StateUnavailable, Store
from harnessweaver.state.store import BACKENDS

__all__ = ["StoreContract", "fresh"]

SHORT = 0.4
"""A ttl or life that passes within a test (seconds)."""
PAST_SHORT = 0.9
"""Long enough to be sure ``SHORT`` has passed, on a loaded machine too."""


def fresh(name: str = "k") -> str:
    """A key no other test (or run of the suite against the same server) uses."""
    return f"hw1/contract/{uuid.uuid4().hex}/{name}"


class StoreContract:
    """What every :class:`~harnessweaver.state.Store` does (docs/state.md)."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    def make_store(self) -> Callable[[], Store]:
        raise NotImplementedError("a StoreContract subclass gives the make_store fixture")

    @pytest.fixture
    def secrets(self) -> tuple[str, ...]:
        """Texts (a URL, a password) that must never show in a repr or an error."""
        return ()

    @pytest.fixture
    async def store(self, make_store: Callable[[], Store]) -> AsyncIterator[Store]:
        made = make_store()
        try:
            yield made
        finally:
            await made.close()

    # -- counters: reserve ------------------------------------------------------------

    async def test_backend_is_named(self, store: Store, secrets: tuple[str, ...]) -> None:
        assert store.backend in BACKENDS
        assert isinstance(store, Store)
        for secret in secrets:
            assert secret not in repr(store)

    async def test_a_missing_counter_is_zero(self, store: Store) -> None:
        assert await store.total(fresh()) == 0
        assert await store.release(fresh(), "h") == 0

    async def test_reserve_holds_within_the_limit(self, store: Store) -> None:
        key = fresh()
        assert await store.reserve(key, "a", 4, limit=10, ttl=60) == Reservation(True, 4, False)
        assert await store.reserve(key, "b", 6, limit=10, ttl=60) == Reservation(True, 10, False)
        assert await store.total(key) == 10

    async def test_reserve_over_the_limit_changes_nothing(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 7, limit=10, ttl=60)
        assert await store.reserve(key, "b", 4, limit=10, ttl=60) == Reservation(False, 7, False)
        assert await store.total(key) == 7
        assert await store.reserve(key, "b", 3, limit=10, ttl=60) == Reservation(True, 10, False)

    async def test_reserve_without_a_limit_always_holds(self, store: Store) -> None:
        key = fresh()
        assert await store.reserve(key, "a", 1e12, limit=None, ttl=60) == Reservation(
            True, 1e12, False
        )

    async def test_a_zero_limit_refuses_any_positive_amount(self, store: Store) -> None:
        key = fresh()
        assert not (await store.reserve(key, "a", 1, limit=0, ttl=60)).granted
        assert (await store.reserve(key, "z", 0, limit=0, ttl=60)).granted

    async def test_a_known_hold_is_repeated_not_charged_again(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 5, limit=10, ttl=60)
        assert await store.reserve(key, "a", 5, limit=10, ttl=60) == Reservation(True, 5, True)
        # known even when it would not fit any more, and whatever amount is asked
        await store.reserve(key, "b", 5, limit=10, ttl=60)
        assert await store.reserve(key, "a", 9, limit=10, ttl=60) == Reservation(True, 10, True)
        assert await store.total(key) == 10

    async def test_a_committed_hold_is_repeated(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 5, limit=10, ttl=60)
        assert await store.commit(key, "a", 5) == 5
        assert await store.reserve(key, "a", 5, limit=10, ttl=60) == Reservation(True, 5, True)
        assert await store.total(key) == 5

    # -- counters: commit and release -------------------------------------------------

    async def test_commit_replaces_the_hold_with_the_actual_amount(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 10, limit=100, ttl=60)
        assert await store.commit(key, "a", 3) == 3
        assert await store.total(key) == 3
        assert await store.release(key, "a") == 3  # a committed hold stays charged

    async def test_commit_is_exactly_once(self, store: Store) -> None:
        key = fresh()
        assert await store.commit(key, "a", 2.5) == 2.5
        assert await store.commit(key, "a", 2.5) == 2.5
        assert await store.commit(key, "a", 99) == 2.5
        assert await store.commit(key, "b", 1) == 3.5

    async def test_commit_without_a_reservation_charges(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "other", 4, limit=None, ttl=60)
        assert await store.commit(key, "a", 6) == 10
        assert await store.release(key, "other") == 6

    async def test_release_drops_a_live_hold_only(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 4, limit=10, ttl=60)
        await store.reserve(key, "b", 5, limit=10, ttl=60)
        assert await store.release(key, "a") == 5
        assert await store.release(key, "a") == 5
        assert await store.release(key, "unknown") == 5
        # a released hold id is free again
        assert await store.reserve(key, "a", 5, limit=10, ttl=60) == Reservation(True, 10, False)

    async def test_fractions_add_up(self, store: Store) -> None:
        key = fresh()
        for i in range(10):
            await store.commit(key, f"h{i}", 0.1)
        assert await store.total(key) == pytest.approx(1.0)

    async def test_keys_and_holds_are_separate(self, store: Store) -> None:
        one, two = fresh("one"), fresh("two")
        await store.commit(one, "a", 1)
        await store.commit(two, "a", 2)
        assert (await store.total(one), await store.total(two)) == (1, 2)

    async def test_any_text_is_a_key_or_a_hold(self, store: Store) -> None:
        for odd in ("{x}:base", "a b/c%2F", "ключ 🔑", "x" * 1000, "'; DROP TABLE x; --"):
            key = fresh(odd)
            assert await store.commit(key, odd, 1) == 1
            assert (await store.reserve(key, odd, 1, limit=1, ttl=60)).repeated
            assert await store.swap(key, 0, odd)
            assert await store.read(key) == Record(odd, 1)

    # -- expiry ---------------------------------------------------------------------

    async def test_a_reservation_expires(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 8, limit=10, ttl=SHORT)
        assert not (await store.reserve(key, "b", 8, limit=10, ttl=60)).granted
        await anyio.sleep(PAST_SHORT)
        assert await store.total(key) == 0
        assert await store.reserve(key, "b", 8, limit=10, ttl=60) == Reservation(True, 8, False)

    async def test_a_commit_after_its_reservation_expired_still_charges(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 5, limit=10, ttl=SHORT)
        await anyio.sleep(PAST_SHORT)
        assert await store.commit(key, "a", 5) == 5
        assert await store.commit(key, "a", 5) == 5

    async def test_a_commit_with_ttl_is_a_window(self, store: Store) -> None:
        key = fresh()
        await store.reserve(key, "a", 1, limit=2, ttl=60)
        assert await store.commit(key, "a", 1, ttl=SHORT) == 1
        assert await store.commit(key, "a", 1, ttl=SHORT) == 1  # not twice
        assert await store.commit(key, "b", 1, ttl=SHORT) == 2
        assert not (await store.reserve(key, "c", 1, limit=2, ttl=60)).granted
        await anyio.sleep(PAST_SHORT)
        assert await store.total(key) == 0
        assert (await store.reserve(key, "c", 1, limit=2, ttl=60)).granted

    async def test_a_counter_lives_life_seconds_after_its_last_write(self, store: Store) -> None:
        key = fresh()
        await store.commit(key, "a", 3, life=SHORT)
        assert await store.total(key) == 3
        await anyio.sleep(PAST_SHORT)
        assert await store.total(key) == 0
        # its marks went with it: the key starts again
        assert await store.commit(key, "a", 3, life=60) == 3

    async def test_a_write_without_life_keeps_the_counter(self, store: Store) -> None:
        key = fresh()
        await store.commit(key, "a", 3, life=SHORT)
        await store.commit(key, "b", 1)
        await anyio.sleep(PAST_SHORT)
        assert await store.total(key) == 4

    async def test_a_record_lives_life_seconds(self, store: Store) -> None:
        key = fresh()
        assert await store.swap(key, 0, {"n": 1}, life=SHORT)
        assert await store.read(key) == Record({"n": 1}, 1)
        await anyio.sleep(PAST_SHORT)
        assert await store.read(key) == Record(None, 0)
        assert await store.swap(key, 0, {"n": 2})

    # -- records ------------------------------------------------------------------------

    async def test_a_missing_record(self, store: Store) -> None:
        assert await store.read(fresh()) == Record(None, 0)

    async def test_swap_is_compare_and_set(self, store: Store) -> None:
        key = fresh()
        assert await store.swap(key, 0, [1])
        assert not await store.swap(key, 0, [2])
        assert await store.read(key) == Record([1], 1)
        assert not await store.swap(key, 2, [3])
        assert await store.swap(key, 1, [3])
        assert await store.read(key) == Record([3], 2)

    async def test_records_hold_json(self, store: Store) -> None:
        key = fresh()
        value = {"s": 'é \u2028 "q"', "n": -1.5e300, "i": 2**53, "l": [None, True, {}], "e": []}
        assert await store.swap(key, 0, value)
        assert await store.read(key) == Record(value, 1)

    async def test_a_record_read_is_a_copy(self, store: Store) -> None:
        key = fresh()
        value: dict[str, list[int]] = {"l": [1]}
        await store.swap(key, 0, value)
        value["l"].append(2)
        read = await store.read(key)
        assert read.value == {"l": [1]}

    async def test_records_and_counters_of_one_key_coexist(self, store: Store) -> None:
        key = fresh()
        await store.commit(key, "a", 2)
        await store.swap(key, 0, "r")
        assert (await store.total(key), await store.read(key)) == (2, Record("r", 1))

    # -- delete ---------------------------------------------------------------------------

    async def test_delete_drops_counters_and_records(self, store: Store) -> None:
        one, two, kept = fresh("one"), fresh("two"), fresh("kept")
        for key in (one, two, kept):
            await store.commit(key, "a", 1)
            await store.reserve(key, "b", 1, limit=None, ttl=60)
            await store.swap(key, 0, "x")
        await store.delete(one, two, fresh("missing"))
        await store.delete()
        for key in (one, two):
            assert (await store.total(key), await store.read(key)) == (0, Record(None, 0))
            assert await store.commit(key, "a", 1) == 1  # its marks are gone too
        assert (await store.total(kept), await store.read(kept)) == (2, Record("x", 1))

    # -- atomicity ------------------------------------------------------------------------

    async def test_concurrent_reservations_never_overspend(
        self, make_store: Callable[[], Store], store: Store
    ) -> None:
        key = fresh()
        others = [make_store() for _ in range(3)]
        granted: list[bool] = []

        async def one(s: Store, i: int) -> None:
            granted.append((await s.reserve(key, f"h{i}", 1, limit=20, ttl=60)).granted)

        try:
            async with anyio.create_task_group() as tg:
                for i in range(60):
                    tg.start_soon(one, [store, *others][i % 4], i)
        finally:
            for s in others:
                await s.close()
        assert granted.count(True) == 20
        assert await store.total(key) == 20

    async def test_concurrent_commits_of_one_hold_charge_once(
        self, make_store: Callable[[], Store], store: Store
    ) -> None:
        key = fresh()
        other = make_store()
        try:
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(lambda s=(store, other)[i % 2]: s.commit(key, "same", 1))
        finally:
            await other.close()
        assert await store.total(key) == 1

    async def test_concurrent_swaps_lose_no_update(
        self, make_store: Callable[[], Store], store: Store
    ) -> None:
        key = fresh()
        other = make_store()

        async def increment(s: Store) -> None:
            for _ in range(200):
                record = await s.read(key)
                count = record.value if isinstance(record.value, int) else 0
                if await s.swap(key, record.version, count + 1):
                    return
            raise AssertionError("never won a swap")

        try:
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(increment, (store, other)[i % 2])
        finally:
            await other.close()
        assert await store.read(key) == Record(12, 12)

    @pytest.mark.parametrize("seed", [1, 2, 3])
    async def test_random_operations_match_the_model(self, store: Store, seed: int) -> None:
        """Reserve, commit (into the base or as a window), release and total in a random
        order on a few keys and hold ids, each answer compared with a plain model."""
        rng = random.Random(seed)
        keys = [fresh(f"m{i}") for i in range(2)]
        model = {key: _Model() for key in keys}
        for step in range(150):
            key, hold = rng.choice(keys), f"h{rng.randrange(8)}"
            amount, m = rng.randrange(0, 5), model[key]
            what = rng.choice(["reserve", "reserve", "commit", "window", "release", "total"])
            if what == "reserve":
                limit = rng.choice([None, 10, 20])
                got: object = await store.reserve(key, hold, amount, limit=limit, ttl=3600)
                expected: object = m.reserve(hold, amount, limit)
            elif what in ("commit", "window"):
                ttl = 3600 if what == "window" else None
                got, expected = (
                    await store.commit(key, hold, amount, ttl=ttl),
                    m.commit(hold, amount, ttl is not None),
                )
            elif what == "release":
                got, expected = await store.release(key, hold), m.release(hold)
            else:
                got, expected = await store.total(key), m.total
            assert got == expected, f"step {step}: {what} {hold} {amount}"

    # -- errors ---------------------------------------------------------------------------

    @pytest.mark.parametrize(
        "call",
        [
            lambda s: s.reserve("", "h", 1, limit=None, ttl=1),
            lambda s: s.reserve(fresh(), "", 1, limit=None, ttl=1),
            lambda s: s.reserve(fresh(), "h", math.nan, limit=None, ttl=1),
            lambda s: s.reserve(fresh(), "h", 1, limit=math.inf, ttl=1),
            lambda s: s.reserve(fresh(), "h", 1, limit=None, ttl=0),
            lambda s: s.reserve(fresh(), "h", 1, limit=None, ttl=1, life=-1),
            lambda s: s.commit(fresh(), "h", True),
            lambda s: s.commit(fresh(), "h", 1, ttl=-1),
            lambda s: s.swap(fresh(), -1, 1),
            lambda s: s.swap(fresh(), 0, math.nan),
            lambda s: s.swap(fresh(), 0, {1, 2}),
            lambda s: s.total(""),
            lambda s: s.delete(""),
        ],
    )
    async def test_bad_arguments_are_value_errors(
        self, store: Store, call: Callable[[Store], object]
    ) -> None:
        with pytest.raises(ValueError):
            await call(store)  # type: ignore[misc]

    async def test_a_closed_store_is_unavailable(
        self, make_store: Callable[[], Store], secrets: tuple[str, ...]
    ) -> None:
        closed = make_store()
        await closed.commit(fresh(), "a", 1)
        await closed.close()
        with pytest.raises(StateUnavailable) as caught:
            await closed.total(fresh())
        assert caught.value.backend == closed.backend
        assert caught.value.operation == "total"
        for secret in secrets:
            assert secret not in str(caught.value)
            assert secret not in repr(caught.value)


class _Model:
    """A counter as the contract describes it, without expiry (ttls of an hour)."""

    def __init__(self) -> None:
        self.base = 0.0
        self.live: dict[str, float] = {}
        self.done: set[str] = set()

    @property
    def total(self) -> float:
        return self.base + sum(self.live.values())

    def reserve(self, hold: str, amount: float, limit: float | None) -> Reservation:
        if hold in self.live or hold in self.done:
            return Reservation(True, self.total, True)
        if limit is not None and self.total + amount > limit:
            return Reservation(False, self.total, False)
        self.live[hold] = amount
        return Reservation(True, self.total, False)

    def commit(self, hold: str, amount: float, window: bool) -> float:
        if hold in self.done:
            return self.total
        self.live.pop(hold, None)
        if window:
            self.live[hold] = amount
        else:
            self.base += amount
            self.done.add(hold)
        return self.total

    def release(self, hold: str) -> float:
        self.live.pop(hold, None)
        return self.total
