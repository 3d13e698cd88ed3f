"""The hook command's view of the state store: run-scope keys belong to the agent's session.

A coding agent's session is the hook command's run (``env.run_id`` is the session id), and it
lives longer than a run of the run loop: ``SessionEnd`` ends an invocation, ``--resume`` goes
on under the same id, and the session is forgotten by age (``hookcmd/lifetime.py``). So the
store the hook command gives its harness (an SQLite file by default, or the spec's ``state:``
backend) is wrapped, for run-scope keys only (``hw1/<layer>/<item>/run/<session>/<name>``):

- the subject also names the harness (its key: spec, task, env, every entry and its
  settings) and the session's generation (a new one when the session's row is new, after its
  lifetime ended), so a changed spec or an expired session starts its guards afresh, as
  before;
- every write gives the key the session's lifetime;
- a ``delete`` of such a key (a built-in forgetting a run at a final ``task.end``) is not done:
  the key ages out with the session instead.

Keys of shared scopes (session, user, task, app, org) pass through unchanged: they are the
fleet's, shared with every other worker of that store.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

    from ..state.store import Record, Reservation, Store

__all__ = ["SessionStore"]

_PARTS = 6  # hw1, layer, item, scope, subject, name


class SessionStore:
    """``store`` with run-scope keys made the session's (see the module docstring)."""

    __slots__ = ("_life", "_store", "_tag", "backend")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._tag: str | None = None
        self._life = 0.0
        self.backend = store.backend

    def bind(self, harness: str, generation: str, life: float) -> None:
        """Name the session's run-scope keys by ``harness`` (its key) and the session's
        ``generation``, and give them ``life`` seconds after each write."""
        self._tag = f"{harness[:16]}.{generation}"
        self._life = life

    def __repr__(self) -> str:
        return f"SessionStore({self.backend})"

    def _run_key(self, key: str) -> str | None:
        """The session's key for a run-scope ``key``; None for any other key."""
        parts = key.split("/")
        if len(parts) != _PARTS or parts[3] != "run":
            return None
        if self._tag is None:  # a bug: the command binds it before the emit
            raise RuntimeError("the session's store is used before it knows the session")
        subject = urllib.parse.quote(f"{urllib.parse.unquote(parts[4])}~{self._tag}", safe="")
        return "/".join([*parts[:4], subject, parts[5]])

    def _mapped(self, key: str, life: float | None) -> tuple[str, float | None]:
        run_key = self._run_key(key)
        return (key, life) if run_key is None else (run_key, self._life)

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
        key, life = self._mapped(key, life)
        return await self._store.reserve(key, hold, amount, limit=limit, ttl=ttl, life=life)

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        key, life = self._mapped(key, life)
        return await self._store.commit(key, hold, amount, ttl=ttl, life=life)

    async def release(self, key: str, hold: str) -> float:
        return await self._store.release(self._mapped(key, None)[0], hold)

    async def total(self, key: str) -> float:
        return await self._store.total(self._mapped(key, None)[0])

    async def read(self, key: str) -> Record:
        return await self._store.read(self._mapped(key, None)[0])

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        key, life = self._mapped(key, life)
        return await self._store.swap(key, version, value, life=life)

    async def delete(self, *keys: str) -> None:
        shared = [key for key in keys if self._run_key(key) is None]
        if shared:
            await self._store.delete(*shared)

    async def close(self) -> None:
        await self._store.close()
