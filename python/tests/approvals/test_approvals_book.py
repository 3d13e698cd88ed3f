"""The approvals book (harnessweaver/approvals/book.py) on real stores: MemoryStore and
SqliteStore, under asyncio and trio. File, decide, claim, consult; expiry with a given clock;
the index bound; a store down fails closed."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from harnessweaver.approvals import (
    INDEX_KEY,
    MAX_OPEN,
    ApprovalRecord,
    ApprovalRefused,
    Approvals,
    record_key,
)
from harnessweaver.state import MemoryStore, SqliteStore, StateUnavailable, Store

pytestmark = pytest.mark.anyio

SPEC = "sha256:" + "c" * 64
T0 = 1_796_560_000.0


def event(amount: int = 5, call_id: str = "call-1") -> dict[str, Any]:
    return {
        "step": 1,
        "tool": {"name": "refund", "description": "", "parameters": {}},
        "call": {"id": call_id, "name": "refund", "arguments": {"amount": amount}},
    }


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    made: Store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "s.db")
    yield made
    await made.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def book(store: Store, clock: Clock) -> Approvals:
    return Approvals(store, spec=SPEC, expires_after=3600, clock=clock)


async def file(book: Approvals, **changes: Any) -> ApprovalRecord:
    given: dict[str, Any] = {
        "hook": "tool.before",
        "event": event(),
        "reason": "a large refund",
        "approver_role": "finance",
        "filed_by": "run loop",
    }
    return await book.file(**(given | changes))


async def consult(book: Approvals, **changes: Any) -> Any:
    given: dict[str, Any] = {
        "hook": "tool.before",
        "event": event(),
        "reason": "a large refund",
        "approver_role": "finance",
        "filed_by": "run loop",
        "consumer": "run-1/2/tool.before",
    }
    return await book.consult(**(given | changes))


async def test_filing_is_idempotent_per_binding(book: Approvals) -> None:
    first = await file(book)
    assert first.id.startswith("ap_") and first.id.endswith("_1")
    assert first.id[3:19] == first.binding.removeprefix("sha256:")[:16]
    assert (first.status, first.expires_at, first.spec) == ("pending", T0 + 3600, SPEC)
    again = await file(book, event=event(call_id="call-2"))  # the agent called again
    assert again == first
    other = await file(book, event=event(amount=6))
    subject = await file(book, subject="run:r2")
    assert len({first.id, other.id, subject.id}) == 3
    assert [r.id for r in await book.list()] == [first.id, other.id, subject.id]
    assert await book.get(first.id) == first


async def test_approve_then_claim_once(book: Approvals) -> None:
    filed = await file(book)
    approved = await book.approve(filed.id, role="finance", by="ana", reason="fine")
    assert approved.status == "approved"
    verdict = await book.claim(
        filed.id, hook="tool.before", event=event(call_id="x"), consumer="c1"
    )
    assert verdict.kind == "approved" and verdict.approved
    assert verdict.event == event(call_id="x")
    assert verdict.record.status == "used"
    with pytest.raises(ApprovalRefused) as caught:
        await book.claim(filed.id, hook="tool.before", event=event(), consumer="c1")
    assert caught.value.code == "approval_replayed"
    assert (await book.get(filed.id)).used is not None


async def test_an_edit_is_what_runs(book: Approvals) -> None:
    filed = await file(book)
    await book.edit(filed.id, {"amount": 2}, role="finance")
    verdict = await book.claim(filed.id, hook="tool.before", event=event(), consumer="c1")
    assert verdict.kind == "approved"
    assert verdict.event["call"] == {"id": "call-1", "name": "refund", "arguments": {"amount": 2}}


async def test_an_edit_at_another_hook_is_the_whole_event(book: Approvals) -> None:
    step = {"step": 2, "messages": [], "tools": []}
    filed = await book.file(hook="step.start", event=step, reason="r", filed_by="run loop")
    assert filed.action == {"hook": "step.start", "event": step}
    assert filed.tool is None
    await book.edit(filed.id, {"step": 2, "messages": [], "tools": [{"name": "x"}]})
    verdict = await book.claim(filed.id, hook="step.start", event=step, consumer="c")
    assert verdict.event == {"step": 2, "messages": [], "tools": [{"name": "x"}]}


async def test_deny_then_claim_closes(book: Approvals) -> None:
    filed = await file(book)
    await book.deny(filed.id, role="finance", reason="no")
    verdict = await book.claim(filed.id, hook="tool.before", event=event(), consumer="c1")
    assert verdict.kind == "denied"
    assert verdict.record.status == "closed"
    assert verdict.event == event()


async def test_claim_refuses_another_action_and_another_spec(book: Approvals, store: Store) -> None:
    filed = await file(book)
    await book.approve(filed.id, role="finance")
    with pytest.raises(ApprovalRefused) as caught:
        await book.claim(filed.id, hook="tool.before", event=event(amount=500), consumer="c")
    assert caught.value.code == "approval_mismatch"
    other = Approvals(store, spec="sha256:" + "d" * 64, clock=book.clock)
    with pytest.raises(ApprovalRefused) as caught:
        await other.claim(filed.id, hook="tool.before", event=event(), consumer="c")
    assert caught.value.code == "approval_spec_changed"
    with pytest.raises(ApprovalRefused) as caught:
        await book.approve(filed.id, role="finance", spec="sha256:" + "d" * 64)
    assert caught.value.code == "approval_decided"  # approved already: decided comes first
    # none of the refusals used it
    assert (await book.claim(filed.id, hook="tool.before", event=event(), consumer="c")).approved


async def test_a_decision_for_another_spec_version_is_refused(book: Approvals) -> None:
    filed = await file(book)
    with pytest.raises(ApprovalRefused) as caught:
        await book.approve(filed.id, role="finance", spec="sha256:" + "e" * 64)
    assert caught.value.code == "approval_spec_changed"
    assert (await book.get(filed.id)).status == "pending"


async def test_consult_asks_again(book: Approvals) -> None:
    first = await consult(book)
    assert first.kind == "pending"
    again = await consult(book, event=event(call_id="call-9"))
    assert (again.kind, again.record.id) == ("pending", first.record.id)
    await book.approve(first.record.id, role="finance")
    approved = await consult(book)
    assert (approved.kind, approved.record.status) == ("approved", "used")
    after = await consult(book)  # the approval was used: the same call again is a new filing
    assert after.kind == "pending"
    assert after.record.id.endswith("_2")
    await book.deny(after.record.id, role="finance")
    denied = await consult(book)
    assert (denied.kind, denied.record.status) == ("denied", "closed")
    assert (await consult(book)).record.id.endswith("_3")


async def test_expiry(book: Approvals, clock: Clock) -> None:
    filed = await file(book)
    clock.now = filed.expires_at
    assert [r.id for r in await book.list(status="expired")] == [filed.id]
    assert await book.list(status="pending") == []
    with pytest.raises(ApprovalRefused) as caught:
        await book.approve(filed.id, role="finance")
    assert caught.value.code == "approval_expired"
    refiled = await file(book)
    assert refiled.id.endswith("_2")
    assert refiled.expires_at == clock.now + 3600


async def test_an_expired_approval_is_not_claimed(book: Approvals, clock: Clock) -> None:
    filed = await file(book)
    await book.approve(filed.id, role="finance")
    clock.now = filed.expires_at + 1
    with pytest.raises(ApprovalRefused) as caught:
        await book.claim(filed.id, hook="tool.before", event=event(), consumer="c")
    assert caught.value.code == "approval_expired"
    assert (await consult(book)).kind == "pending"  # asked again: filed anew


async def test_unknown_ids(book: Approvals) -> None:
    for bad in ("ap_0000000000000000_1", "nope", "ap_0000000000000000_0"):
        with pytest.raises(ApprovalRefused) as caught:
            await book.get(bad)
        assert caught.value.code == "approval_unknown"
        with pytest.raises(ApprovalRefused) as caught:
            await book.approve(bad)
        assert caught.value.code == "approval_unknown"
        with pytest.raises(ApprovalRefused) as caught:
            await book.claim(bad, hook="tool.before", event=event(), consumer="c")
        assert caught.value.code == "approval_unknown"


async def test_the_index_is_bounded(book: Approvals, store: Store) -> None:
    full = [[f"ap_{i:016x}_1", T0 + 10] for i in range(MAX_OPEN)]
    assert await store.swap(INDEX_KEY, 0, {"ids": full})
    with pytest.raises(ApprovalRefused) as caught:
        await file(book)
    assert caught.value.code == "approvals_full"
    assert caught.value.approval is None
    book.clock = lambda: T0 + 11  # every entry's drop time has passed: pruned on the next write
    filed = await file(book)
    index = (await store.read(INDEX_KEY)).value
    assert isinstance(index, dict)
    assert index["ids"] == [[filed.id, filed.expires_at + 7 * 24 * 3600]]


async def test_records_live_until_a_week_after_expiry(book: Approvals, store: Store) -> None:
    filed = await file(book)
    assert (await store.read(record_key(filed.id))).value == filed.to_json()


async def test_many_tasks_filing_one_binding_share_one_record(book: Approvals) -> None:
    found: list[str] = []

    async def one() -> None:
        found.append((await file(book)).id)

    async with anyio.create_task_group() as tasks:
        for _ in range(20):
            tasks.start_soon(one)
    assert len(set(found)) == 1
    assert [r.id for r in await book.list()] == found[:1]


async def test_many_tasks_claiming_one_approval_one_wins(book: Approvals) -> None:
    filed = await file(book)
    await book.approve(filed.id, role="finance")
    kinds: list[str] = []

    async def one(n: int) -> None:
        try:
            verdict = await book.claim(
                filed.id, hook="tool.before", event=event(), consumer=f"c{n}"
            )
            kinds.append(verdict.kind)
        except ApprovalRefused as exc:
            kinds.append(exc.code)

    async with anyio.create_task_group() as tasks:
        for n in range(20):
            tasks.start_soon(one, n)
    assert sorted(kinds) == ["approval_replayed"] * 19 + ["approved"]


async def test_notified_once_per_new_record(store: Store, clock: Clock) -> None:
    seen: list[str] = []

    async def notify(record: ApprovalRecord) -> None:
        seen.append(record.id)

    book = Approvals(store, spec=SPEC, notify=notify, clock=clock)
    first = await file(book)
    await file(book)
    second = await file(book, event=event(amount=9))
    assert seen == [first.id, second.id]


async def test_a_failing_notifier_never_stops_the_filing(
    store: Store, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    def notify(record: ApprovalRecord) -> None:
        raise ConnectionRefusedError("https://user:token@example.invalid/hook secret-xyz")

    book = Approvals(store, spec=SPEC, notify=notify, clock=clock)
    with caplog.at_level(logging.WARNING, logger="harnessweaver.approvals"):
        filed = await file(book)
    assert (await book.get(filed.id)) == filed
    assert "ConnectionRefusedError" in caplog.text
    assert "token" not in caplog.text and "secret-xyz" not in caplog.text


async def test_a_store_down_fails_closed(tmp_path: Path, clock: Clock) -> None:
    store = SqliteStore(tmp_path / "s.db")
    book = Approvals(store, spec=SPEC, clock=clock)
    filed = await file(book)
    await store.close()
    for attempt in (
        lambda: file(book),
        lambda: book.approve(filed.id, role="finance"),
        lambda: book.claim(filed.id, hook="tool.before", event=event(), consumer="c"),
        lambda: consult(book),
        book.list,
    ):
        with pytest.raises(StateUnavailable):
            await attempt()


async def test_arguments_are_checked(store: Store) -> None:
    with pytest.raises(ValueError, match="expires_after"):
        Approvals(store, spec=SPEC, expires_after=0)
    with pytest.raises(ValueError, match="spec"):
        Approvals(store, spec="")
    book = Approvals(store, spec=SPEC)
    with pytest.raises(ValueError, match="filed_by"):
        await book.file(hook="tool.before", event=event(), reason="r", filed_by="")
    with pytest.raises(ValueError, match="status"):
        await book.list(status="maybe")
    outside: Callable[[], Any] = lambda: book.file(  # noqa: E731
        hook="step.end", event={"x": float("nan")}, reason="r", filed_by="f"
    )
    with pytest.raises(ValueError, match="I-JSON"):
        await outside()
