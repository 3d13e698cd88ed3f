"""The state interface every stateful middleware reaches: :class:`Store` and its values.

A fleet of workers (processes, machines, a Python and a Node worker) shares one budget, one
rate limit, one loop count only if every guard keeps its state in one store that does each
update atomically. :class:`Store` is that store's whole surface, kept small enough to map onto
one server-side script (Redis), one transaction with row locks (PostgreSQL, SQLite) or one
locked step (memory):

- a **counter** holds ``base`` (the committed sum), live holds ``hold -> (amount, expires_at)``
  and committed marks ``hold -> expires_at`` (kept :data:`MARK_TTL`); ``reserve`` / ``commit``
  / ``release`` keyed by a hold id make a charge exactly once however often a call is retried,
  and a crashed worker's reservation expires on its own;
- a **record** is a small JSON value with a version, changed by compare-and-set (``swap``).

Every call first drops what has expired, then acts, in one atomic step. A store that cannot
answer raises :class:`StateUnavailable`, whose message names the backend and the operation
only, never a URL or a credential.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

__all__ = [
    "BACKENDS",
    "MARK_TTL",
    "OPERATIONS",
    "JsonValue",
    "Record",
    "Reservation",
    "StateUnavailable",
    "Store",
    "check_counter_args",
    "check_key",
    "check_life",
    "check_version",
    "dump_json",
]

MARK_TTL = 7 * 24 * 3600.0
"""Seconds a committed hold id is remembered: a retry or redelivery within this window is
never charged again."""
BACKENDS = ("memory", "sqlite", "redis", "postgres")
"""The backends a spec's ``state.backend`` may name."""
OPERATIONS = ("reserve", "commit", "release", "total", "read", "swap", "delete", "close")
"""The store's operations, as :attr:`StateUnavailable.operation` names them."""


@dataclass(frozen=True, slots=True)
class Reservation:
    """What :meth:`Store.reserve` did.

    ``granted``: the amount is held now (or already was: see ``repeated``); ``total``: the
    counter's total after the call (committed base + live holds); ``repeated``: the hold id
    was already known (live or committed), so nothing was charged again."""

    granted: bool
    total: float
    repeated: bool


@dataclass(frozen=True, slots=True)
class Record:
    """A record as read: ``value`` is ``None`` when there is none, ``version`` is 0 then and
    goes up by one on every successful :meth:`Store.swap`."""

    value: JsonValue | None
    version: int


class StateUnavailable(Exception):
    """The state store could not answer (down, timed out, read-only, full...).

    A stateful middleware turns it into its fail mode: closed → ``Block(code=
    "state_unavailable")``, open → raised again so the bus records and logs the failure.
    The message names the backend, the operation and the kind of failure (an exception class
    name), never a URL, a path's credentials or a server's message, which may quote either."""

    backend: str
    operation: str
    cause: str | None

    def __init__(self, backend: str, operation: str, cause: str | None = None) -> None:
        self.backend = backend
        self.operation = operation
        self.cause = cause
        why = f": {cause}" if cause else ""
        super().__init__(f"state store {backend}: {operation} failed{why}")

    def __reduce__(self) -> tuple[type[StateUnavailable], tuple[str, str, str | None]]:
        return (type(self), (self.backend, self.operation, self.cause))

    @classmethod
    def of(cls, backend: str, operation: str, exc: BaseException) -> StateUnavailable:
        """The failure ``exc`` of ``operation``, named by its class only (its message may
        quote a URL or a server's answer)."""
        if isinstance(exc, StateUnavailable):
            return exc
        if isinstance(exc, TimeoutError):
            return cls(backend, operation, "timed out")
        return cls(backend, operation, type(exc).__name__)


@runtime_checkable
class Store(Protocol):
    """The async interface of a state store (memory, SQLite, Redis, PostgreSQL).

    Keys are full keys (:func:`harnessweaver.state.state_key`); amounts, ``limit``, ``ttl``
    and ``life`` are floats, the durations in seconds. ``life`` drops the key (counter or
    record) that many seconds after its last write (``None``: kept)."""

    backend: str
    """``"memory"``, ``"sqlite"``, ``"redis"`` or ``"postgres"``."""

    async def reserve(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        limit: float | None,
        ttl: float,
        life: float | None = None,
    ) -> Reservation:
        """Hold ``amount`` for ``ttl`` seconds if ``total + amount <= limit`` (always when
        ``limit`` is None). A known hold id (live or committed) changes nothing: granted and
        ``repeated``."""
        ...

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        """Charge ``amount`` under ``hold`` once: the live hold (if any) is replaced by the
        charge, into the base (``ttl`` None, the hold id marked as committed) or as a live
        hold expiring in ``ttl`` seconds (a sliding window). A committed hold id is a no-op.
        Returns the total."""
        ...

    async def release(self, key: str, hold: str) -> float:
        """Drop the live hold ``hold`` (a committed one stays charged). Returns the total."""
        ...

    async def total(self, key: str) -> float:
        """The base plus every live hold; 0 for a missing key."""
        ...

    async def read(self, key: str) -> Record:
        """The record at ``key``, or ``Record(None, 0)``."""
        ...

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        """Write ``value`` if the record's version is ``version`` (0: none yet); True if it
        was written (its version is then ``version + 1``)."""
        ...

    async def delete(self, *keys: str) -> None:
        """Drop the counters and records of ``keys``."""
        ...

    async def close(self) -> None:
        """Release connections, files and threads; further calls raise StateUnavailable."""
        ...


def _number(name: str, value: object, *, positive: bool, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {type(value).__name__}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be greater than 0")


def check_key(key: object, what: str = "key") -> None:
    """A key or hold id is non-empty text (a programming error otherwise: ValueError)."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"a state {what} is non-empty text, got {type(key).__name__}")


def check_life(life: object) -> None:
    """``life`` is None or a positive finite number of seconds."""
    _number("life", life, positive=True, optional=True)


def check_counter_args(
    key: object,
    hold: object,
    amount: object,
    *,
    limit: object = None,
    ttl: object = None,
    ttl_required: bool = False,
    life: object = None,
) -> None:
    """The arguments of ``reserve`` / ``commit`` (ValueError: a caller's bug, not an outage;
    every store checks them the same way before it touches its backend)."""
    check_key(key)
    check_key(hold, "hold id")
    _number("amount", amount, positive=False, optional=False)
    _number("limit", limit, positive=False, optional=True)
    _number("ttl", ttl, positive=True, optional=not ttl_required)
    check_life(life)


def check_version(version: object) -> None:
    """A record version is an int >= 0 (0: no record yet)."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError("a record version is an int >= 0")


def dump_json(value: object) -> str:
    """A record's value as the JSON text every backend stores (compact, no NaN: I-JSON);
    a value that is not JSON is the caller's bug (ValueError)."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a state record is a JSON value: {type(exc).__name__}") from None
