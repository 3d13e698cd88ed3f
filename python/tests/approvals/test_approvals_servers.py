"""The approvals book on real Redis and PostgreSQL servers (python/tests/state/servers.py
starts them on 127.0.0.1): file, decide, claim once; many connections claiming one approval
at once, exactly one wins; many filing one binding share one record. Runs in ``nox -s state``
(tools/installed.py ELSEWHERE), like the stores' own server tests."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "state"))
from servers import SECRET, postgres_url, redis_url

from harnessweaver.approvals import ApprovalRefused, Approvals
from harnessweaver.state import StateUnavailable, Store

__all__ = ["postgres_url", "redis_url"]  # the session's servers, fixtures

SPEC = "sha256:" + "9" * 64


def event(amount: int = 5) -> dict[str, Any]:
    return {
        "step": 1,
        "tool": {"name": "refund", "description": "", "parameters": {}},
        "call": {"id": "c", "name": "refund", "arguments": {"amount": amount}},
    }


def redis_store(url: str) -> Store:
    store: Store = pytest.importorskip("harnessweaver.state.redis").RedisStore(url)
    return store


def postgres_store(url: str) -> Store:
    store: Store = pytest.importorskip("harnessweaver.state.postgres").PostgresStore(url)
    return store


@pytest.fixture(params=["redis", "postgres"])
def make_store(request: pytest.FixtureRequest) -> Callable[[], Store]:
    url = request.getfixturevalue(f"{request.param}_url")
    opener = redis_store if request.param == "redis" else postgres_store
    return lambda: opener(url)


async def _lifecycle(make_store: Callable[[], Store], amount: int) -> None:
    filer, decider, claimer = make_store(), make_store(), make_store()
    try:
        book = Approvals(filer, spec=SPEC)
        filed = await book.file(
            hook="tool.before", event=event(amount), reason="r", approver_role="finance",
            filed_by="run loop",
        )  # fmt: skip
        assert (await Approvals(claimer, spec=SPEC).get(filed.id)) == filed
        with pytest.raises(ApprovalRefused) as caught:
            await Approvals(decider, spec=SPEC).approve(filed.id, role="ops")
        assert caught.value.code == "approval_wrong_role"
        await Approvals(decider, spec=SPEC).edit(filed.id, {"amount": 1}, role="finance")
        verdict = await Approvals(claimer, spec=SPEC).claim(
            filed.id, hook="tool.before", event=event(amount), consumer="run-1"
        )
        assert verdict.kind == "approved"
        assert verdict.event["call"]["arguments"] == {"amount": 1}
        with pytest.raises(ApprovalRefused) as caught:
            await book.claim(filed.id, hook="tool.before", event=event(amount), consumer="run-2")
        assert caught.value.code == "approval_replayed"
        assert filed.id in [r.id for r in await book.list(status="used")]
    finally:
        for store in (filer, decider, claimer):
            await store.close()


def test_file_decide_claim_across_connections(make_store: Callable[[], Store]) -> None:
    asyncio.run(_lifecycle(make_store, 101))


async def _races(make_store: Callable[[], Store], amount: int) -> tuple[set[str], list[str]]:
    stores = [make_store() for _ in range(12)]
    try:
        books = [Approvals(store, spec=SPEC) for store in stores]
        filed = await asyncio.gather(
            *(
                b.file(hook="tool.before", event=event(amount), reason="r", filed_by="f")
                for b in books
            )
        )
        ids = {record.id for record in filed}
        await books[0].approve(filed[0].id)

        async def claim(n: int) -> str:
            try:
                verdict = await books[n].claim(
                    filed[0].id, hook="tool.before", event=event(amount), consumer=f"c{n}"
                )
            except ApprovalRefused as exc:
                return exc.code
            return verdict.kind

        return ids, list(await asyncio.gather(*(claim(n) for n in range(len(books)))))
    finally:
        for store in stores:
            await store.close()


def test_concurrent_filing_and_claims_one_wins(make_store: Callable[[], Store]) -> None:
    ids, kinds = asyncio.run(_races(make_store, 202))
    assert len(ids) == 1
    assert sorted(kinds) == ["approval_replayed"] * 11 + ["approved"]


def test_a_server_that_cannot_be_reached_fails_closed() -> None:
    async def go() -> None:
        store = redis_store(f"redis://:{SECRET}@127.0.0.1:9/0")  # nothing listens on port 9
        try:
            with pytest.raises(StateUnavailable) as caught:
                await Approvals(store, spec=SPEC).file(
                    hook="tool.before", event=event(), reason="r", filed_by="f"
                )
            assert SECRET not in str(caught.value)
        finally:
            await store.close()

    asyncio.run(go())
