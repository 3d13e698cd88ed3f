"""Many workers against one server: asyncio tasks in this process, and several processes
(each with its own store and its own tasks), reserving against one limit and committing.
Shared by test_redis.py and test_postgres.py.

The checks: no reservation ever sees a total over the limit, the limit is used exactly (the
workers ask for more than it), every commit is counted once (commits repeated by every worker
change nothing), and a released hold gives its amount back.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from typing import Any

from harnessweaver.state import Store

WORKER = (
    r"""
import asyncio, json, sys

async def main(backend, url, key, limit, name, tasks, per_task):
    if backend == "redis":
        from harnessweaver.state.redis import RedisStore as Made
    else:
        from harnessweaver.state.postgres import PostgresStore as Made
    store = Made(url)
    try:
        stats = await work(store, key, limit, name, tasks, per_task)
    finally:
        await store.close()
    print(json.dumps(stats))

"""
    + "\n"
)


async def work(
    store: Store, key: str, limit: float, name: str, tasks: int, per_task: int
) -> dict[str, Any]:
    """``tasks`` tasks, each making ``per_task`` attempts: reserve 1 against ``limit``; when
    granted, commit it (twice: the second is a no-op) or, one attempt in three, release it and
    move on. Returns what was granted, committed and the largest total seen."""
    stats: dict[str, Any] = {"granted": 0, "committed": 0, "released": 0, "max_total": 0.0}

    async def one(task: int) -> None:
        for attempt in range(per_task):
            hold = f"{name}/{task}/{attempt}"
            got = await store.reserve(key, hold, 1, limit=limit, ttl=60)
            stats["max_total"] = max(stats["max_total"], got.total)
            if not got.granted:
                continue
            assert not got.repeated
            stats["granted"] += 1
            if attempt % 3 == 1:
                await store.release(key, hold)
                stats["released"] += 1
                continue
            for _ in range(2):
                total = await store.commit(key, hold, 1)
                stats["max_total"] = max(stats["max_total"], total)
            stats["committed"] += 1

    await asyncio.gather(*(one(task) for task in range(tasks)))
    return stats


def _worker_source() -> str:
    import inspect

    return (
        "from __future__ import annotations\n"
        + WORKER
        + "from typing import Any\n"
        + inspect.getsource(work)
        + "\nasyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]),"
        + " sys.argv[5], int(sys.argv[6]), int(sys.argv[7])))\n"
    )


def run_processes(
    backend: str, url: str, key: str, limit: float, processes: int, tasks: int, per_task: int
) -> list[dict[str, Any]]:
    """``processes`` Python processes at once, each running :func:`work` on its own store."""
    source = _worker_source()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                source,
                backend,
                url,
                key,
                str(limit),
                f"p{n}",
                str(tasks),
                str(per_task),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(processes)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"a worker process failed: {err[-3000:]}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


async def check_tasks(make_store: Callable[[], Store]) -> None:
    """100 tasks over 4 stores of this process (4 connection pools) against a limit of 75:
    never over, the limit reached, every commit counted once."""
    key = f"hw1/concurrency/{uuid.uuid4().hex}/calls"
    limit = 75
    stores = [make_store() for _ in range(4)]
    try:
        results = await asyncio.gather(
            *(work(store, key, limit, f"s{n}", 25, 4) for n, store in enumerate(stores))
        )
        _check(results, limit, await stores[0].total(key), asked=4 * 25 * 4)
        # No limit: 4 stores x 25 tasks commit 3 holds each, every commit repeated: 300.
        free = f"{key}-free"

        async def charge(store: Store, n: int, task: int) -> None:
            for attempt in range(3):
                for _ in range(2):
                    await store.commit(free, f"s{n}/{task}/{attempt}", 1)

        await asyncio.gather(
            *(charge(store, n, task) for n, store in enumerate(stores) for task in range(25))
        )
        assert await stores[0].total(free) == 300
    finally:
        for store in stores:
            await store.close()


def _check(results: list[dict[str, Any]], limit: float, total: float, asked: int) -> None:
    granted = sum(r["granted"] for r in results)
    committed = sum(r["committed"] for r in results)
    released = sum(r["released"] for r in results)
    assert max(r["max_total"] for r in results) <= limit, "a total over the limit was seen"
    assert granted == committed + released
    assert total == committed, "a commit lost or counted twice"
    assert total <= limit
    # Amounts of 1: a reservation is refused only when the total is the limit. More were
    # asked for than the limit, so it was reached, and everything held under it was granted.
    assert granted < asked, "no reservation was ever refused"
    assert max(r["max_total"] for r in results) == limit
    assert granted >= limit


def check_processes(backend: str, url: str, store_total: Callable[[str], float]) -> None:
    """4 processes x 20 tasks x 3 attempts (240 reservations) against a limit of 80."""
    key = f"hw1/concurrency/{uuid.uuid4().hex}/calls"
    limit = 80
    results = run_processes(backend, url, key, limit, processes=4, tasks=20, per_task=3)
    _check(results, limit, store_total(key), asked=4 * 20 * 3)
