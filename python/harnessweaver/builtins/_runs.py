"""Per-run state for built-in middleware that remember what happened earlier in a run.

One middleware instance serves every run of its harness, often several at once, so what it
remembers is kept per run, keyed by ``env.run_id``. The memory is bounded twice: a run's state
is dropped when its ``task.end`` says the run is over for good, and at most ``limit`` runs are
kept in any case, the one used longest ago dropped first, so runs that never end for good (a
crash, a caller that stops emitting, a suspended run nobody resumes) cannot make the state
grow without bound.

``task.end`` also fires when a run only stops: suspended, or stopped by a provider error, an
error or one of the run loop's budgets, all of which ``harness.resume`` can go on with, under
the same run id. Such a run keeps its state, so a resumed run goes on with the counts it had
(a budget guard that forgot what a run spent would let a resumed run spend it again). Only
the exit reasons after which a run cannot go on drop it; an exit reason this module does not
know keeps the state, the safe side, until the bound drops it.

State that outlives a process (``harnessweaver hook``: one process per event of a coding
agent) goes through two small seams: :func:`tracked` collects the ``RunStates`` that the
middleware built while a harness loads, in the order they were built, and each state can
``dump()`` itself to JSON and ``restore()`` a dump into a fresh state. Tracking is off unless
a caller turns it on, so nothing changes for a harness that lives in one process.

The stateful built-ins now keep their state on a state store (``harnessweaver.state``), not in
``RunStates``: while tracking, the in-memory store a loaded harness attaches them to is
collected instead, as a :class:`StoreSnapshot` (one per store) whose ``dump()`` and
``restore()`` carry that store's keys. This keeps the hook command's seam working until it
keeps its state in a store shared by its processes (an SQLite file) instead.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, Generic, Protocol, TypeVar, cast, runtime_checkable

from ..events import TaskEndEvent

__all__ = [
    "FINAL_EXIT_REASONS",
    "MAX_RUNS",
    "Persistent",
    "RunStates",
    "StoreSnapshot",
    "track_store",
    "tracked",
]

S = TypeVar("S")

MAX_RUNS: Final = 4096
"""How many runs' state one middleware keeps at most (each is a few small counters)."""

FINAL_EXIT_REASONS: Final = frozenset(
    {"completed", "blocked", "escalated", "denied", "retry_exhausted"}
)
"""The exit reasons after which a run cannot be resumed: its state is dropped at ``task.end``."""


@runtime_checkable
class Persistent(Protocol):
    """A state that can be written out as JSON and read back into a fresh state."""

    def dump(self) -> Any:
        """The state as JSON-compatible values."""
        ...

    def restore(self, data: Any) -> None:
        """Take the state ``data`` holds (a ``dump()``); ``ValueError`` if it is malformed."""
        ...


_tracking: list[Any] | None = None


@contextmanager
def tracked() -> Iterator[list[Any]]:
    """Collect every ``RunStates`` made inside the block, in the order they are made.

    Loading one harness spec builds its middleware in the same order each time, so the n-th
    state of one process is the n-th state of the next (a caller checks it loaded the same
    harness). Not thread-safe: meant for a process that loads one harness.
    """
    global _tracking
    previous, _tracking = _tracking, []
    try:
        yield _tracking
    finally:
        _tracking = previous


class RunStates(Generic[S]):
    """The state of each run, made by ``factory`` on first use; a bounded, LRU mapping."""

    __slots__ = ("_factory", "_limit", "_states")

    def __init__(self, factory: Callable[[], S], limit: int = MAX_RUNS) -> None:
        if limit < 1:
            raise ValueError(f"RunStates limit must be at least 1, got {limit}")
        self._factory = factory
        self._limit = limit
        self._states: OrderedDict[str, S] = OrderedDict()
        if _tracking is not None:
            _tracking.append(self)

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._states

    def __getitem__(self, run_id: str) -> S:
        """The run's state, created if the run is new; the run becomes the most recent."""
        state = self._states.get(run_id)
        if state is None:
            state = self._states[run_id] = self._factory()
            if len(self._states) > self._limit:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(run_id)
        return state

    def peek(self, run_id: str) -> S | None:
        """The run's state if it has one (the run becomes the most recent), without creating
        it: a run that only reads its state, such as a guard refusing a call again and again,
        is in use all the same."""
        state = self._states.get(run_id)
        if state is not None:
            self._states.move_to_end(run_id)
        return state

    def end(self, run_id: str, event: TaskEndEvent) -> None:
        """Forget the run at its ``task.end`` if it is over for good."""
        if event.exit_reason in FINAL_EXIT_REASONS:
            self._states.pop(run_id, None)

    def dump(self) -> list[list[Any]]:
        """Every run's state, least recently used first: ``[[run_id, state.dump()], ...]``."""
        return [[run_id, cast(Persistent, state).dump()] for run_id, state in self._states.items()]

    def restore(self, data: Any) -> None:
        """Take the runs of a :meth:`dump` (each state made by the factory, then restored)."""
        if not isinstance(data, list):
            raise ValueError(f"RunStates.restore takes a list of [run_id, state], got {data!r}")
        for item in data:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise ValueError(f"RunStates.restore: not a [run_id, state] pair: {item!r}")
            state = self[item[0]]
            if not isinstance(state, Persistent):
                raise ValueError(f"RunStates.restore: {type(state).__name__} cannot be restored")
            state.restore(item[1])


def track_store(store: object) -> None:
    """Collect ``store`` (once) while :func:`tracked` is on, if it is an in-memory store."""
    from ..state.memory import MemoryStore

    if _tracking is None or type(store) is not MemoryStore:
        return
    if not any(isinstance(s, StoreSnapshot) and s.store is store for s in _tracking):
        _tracking.append(StoreSnapshot(store))


class StoreSnapshot:
    """An in-memory store's keys as JSON values, and back: ``[[key, entry], ...]``, least
    recently used first, each time to expiry kept as seconds from now (the clocks of two
    processes do not agree)."""

    __slots__ = ("store",)

    def __init__(self, store: Any) -> None:
        self.store = store

    def dump(self) -> list[list[Any]]:
        store = self.store
        out: list[list[Any]] = []
        with store._lock:
            now = store._clock()
            for key, entry in store._keys.items():
                entry.purge(now)
                if entry.empty:
                    continue
                out.append(
                    [
                        key,
                        {
                            "counter": entry.has_counter,
                            "base": entry.base,
                            "live": {h: [a, at - now] for h, (a, at) in entry.live.items()},
                            "done": {h: at - now for h, at in entry.done.items()},
                            "counter_life": _left(entry.counter_expires, now),
                            "record": entry.record,
                            "version": entry.version,
                            "record_life": _left(entry.record_expires, now),
                        },
                    ]
                )
        return out

    def restore(self, data: Any) -> None:
        from ..state.memory import _Entry

        store = self.store
        try:
            with store._lock:
                now = store._clock()
                for key, item in data:
                    entry = _Entry()
                    entry.has_counter = bool(item["counter"])
                    entry.base = float(item["base"])
                    for hold, (amount, left) in item["live"].items():
                        entry.add_live(str(hold), float(amount), now + float(left))
                    for hold, left in item["done"].items():
                        entry.add_done(str(hold), now + float(left))
                    entry.counter_expires = _at(item["counter_life"], now)
                    record = item["record"]
                    entry.record = None if record is None else str(record)
                    entry.version = int(item["version"])
                    entry.record_expires = _at(item["record_life"], now)
                    store._keys[str(key)] = entry
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a state store snapshot: {type(exc).__name__}") from None


def _left(at: float | None, now: float) -> float | None:
    return None if at is None else at - now


def _at(left: Any, now: float) -> float | None:
    return None if left is None else now + float(left)
