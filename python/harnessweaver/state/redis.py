"""The Redis backend of the state store (``redis`` 5+, its asyncio client).

Every operation is one Lua script (``state/lua/*.lua``, byte-identical in the TypeScript
package, so a Node worker and a Python worker share one budget), run atomically by the server
with the server's own clock (``TIME``). The scripts are sent by their SHA-1 (``EVALSHA``); a
server that does not know one (a fresh or restarted server) gets it once with ``EVAL``, which
also caches it there.

Layout for a counter key ``K`` (wrapped as the hash tag ``{K}``, so a cluster keeps a key's
parts on one slot): ``{K}:base`` (the committed sum, a float as a string), ``{K}:live`` (hash
hold -> amount), ``{K}:exp`` (zset hold -> expires_at in ms), ``{K}:done`` (zset hold ->
expires_at in ms: the committed marks), ``{K}:held`` (the running sum of the live holds'
amounts, a float as a string, absent while there is none: no call reads all the holds of a
key); a record: ``{K}:rec`` (hash ``v`` version, ``d`` JSON).

Committed charges survive a crash of the server only as far as its persistence does: run it
with ``appendonly yes`` (the tests use ``appendfsync always``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from .store import (
    Record,
    Reservation,
    StateUnavailable,
    check_counter_args,
    check_key,
    check_life,
    check_version,
    dump_json,
)

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["SCRIPTS", "RedisStore", "redis_keys"]


COUNTER_SCRIPTS = frozenset({"reserve", "commit", "release", "total"})
"""The scripts that run on one counter: each is ``lua/counter.lua`` followed by its own text."""


def _load_scripts() -> dict[str, tuple[str, str]]:
    folder = resources.files(__package__).joinpath("lua")
    scripts: dict[str, tuple[str, str]] = {}
    prelude = folder.joinpath("counter.lua").read_text(encoding="utf-8")
    for name in ("reserve", "commit", "release", "total", "read", "swap", "delete"):
        body = folder.joinpath(f"{name}.lua").read_text(encoding="utf-8")
        if name in COUNTER_SCRIPTS:  # one prelude (time, purge, total, touch), written once
            body = prelude + body
        scripts[name] = (body, hashlib.sha1(body.encode("utf-8")).hexdigest())
    return scripts


SCRIPTS = _load_scripts()
"""Script name -> (its text, its SHA-1), read once at import."""


def redis_keys(key: str) -> tuple[str, str, str, str, str]:
    """A counter's Redis keys: base, live, exp, done, held (the running sum of the live holds)."""
    tag = "{" + key + "}"
    return f"{tag}:base", f"{tag}:live", f"{tag}:exp", f"{tag}:done", f"{tag}:held"


def _record_key(key: str) -> str:
    return "{" + key + "}:rec"


def _num(value: float) -> str:
    return repr(float(value))


def _opt(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _float(raw: Any) -> float:
    return float(raw.decode() if isinstance(raw, bytes) else raw)


class RedisStore:
    """A :class:`~harnessweaver.state.store.Store` on Redis. ``url`` is a ``redis://`` or
    ``rediss://`` URL (credentials allowed); it never appears in an error or a repr.

    The client is made on first use, in the running event loop (asyncio)."""

    backend = "redis"

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float = 2.0,
        socket_timeout: float = 5.0,
        max_connections: int = 64,
    ) -> None:
        self._url = url
        self._options: dict[str, Any] = {
            "socket_connect_timeout": connect_timeout,
            "socket_timeout": socket_timeout,
            "max_connections": max_connections,
            # No retry by the client: the store decides (_run).
            "retry": Retry(NoBackoff(), 0),
        }
        self._client: aioredis.Redis | None = None
        self._closed = False

    def __repr__(self) -> str:
        return "RedisStore(backend='redis')"

    def _redis(self) -> aioredis.Redis:
        if self._client is None:
            # A blocking pool: past max_connections a call waits for a connection (within
            # the caller's timeout) rather than failing at once.
            pool = aioredis.BlockingConnectionPool.from_url(self._url, **self._options)
            self._client = aioredis.Redis(connection_pool=pool)
        return self._client

    async def _run(self, operation: str, script: str, keys: tuple[str, ...], *args: str) -> Any:
        body, sha = SCRIPTS[script]
        if self._closed:
            raise StateUnavailable(self.backend, operation, "closed")
        client = self._redis()
        # Every script but swap may run twice with the same answer (a hold id is charged
        # once), so a broken connection (a server restarted since the connection's last
        # use) is tried once more on a new one. A swap is not: if its reply was lost it may
        # have run, and a second run would answer False. Before a swap, one turn of the event
        # loop lets a closed connection be seen as closed when it is taken from the pool.
        attempts = 1 if script == "swap" else 2
        if script == "swap":
            await asyncio.sleep(0)
        for attempt in range(attempts):
            try:
                try:
                    return await client.evalsha(sha, len(keys), *keys, *args)
                except NoScriptError:
                    return await client.eval(body, len(keys), *keys, *args)
            except RedisConnectionError as exc:
                if attempt + 1 < attempts:
                    continue
                raise StateUnavailable.of(self.backend, operation, exc) from None
            except (RedisError, OSError) as exc:
                raise StateUnavailable.of(self.backend, operation, exc) from None
        raise AssertionError("unreachable")

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
        check_counter_args(key, hold, amount, limit=limit, ttl=ttl, ttl_required=True, life=life)
        args = (hold, _num(amount), _opt(limit), _num(ttl), _opt(life))
        granted, total, repeated = await self._run("reserve", "reserve", redis_keys(key), *args)
        return Reservation(bool(granted), _float(total), bool(repeated))

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        check_counter_args(key, hold, amount, ttl=ttl, life=life)
        args = (hold, _num(amount), _opt(ttl), _opt(life))
        return _float(await self._run("commit", "commit", redis_keys(key), *args))

    async def release(self, key: str, hold: str) -> float:
        check_key(key)
        check_key(hold, "hold id")
        return _float(await self._run("release", "release", redis_keys(key), hold))

    async def total(self, key: str) -> float:
        check_key(key)
        return _float(await self._run("total", "total", redis_keys(key)))

    async def read(self, key: str) -> Record:
        check_key(key)
        version, data = await self._run("read", "read", (_record_key(key),))
        if not version:
            return Record(None, 0)
        return Record(json.loads(data), int(version))

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        check_key(key)
        check_life(life)
        check_version(version)
        args = (str(version), dump_json(value), _opt(life))
        return bool(await self._run("swap", "swap", (_record_key(key),), *args))

    async def delete(self, *keys: str) -> None:
        for key in keys:
            check_key(key)
        for key in keys:
            await self._run("delete", "delete", (*redis_keys(key), _record_key(key)))

    async def close(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(RedisError, OSError):
                await client.aclose(close_connection_pool=True)
