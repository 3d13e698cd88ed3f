"""The run loop files a durable approval when a chain suspends and settles it on resume: the
record's decision is the run's, used once; every refusal leaves the tool not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from crash_worker import EFFECTS, ROLE, Agent, effects, needs_approval, refund

import harnessweaver as hw
from harnessweaver.approvals import ApprovalRefused, Approvals, action_of
from harnessweaver.identity import content_identity
from harnessweaver.state import MemoryStore

pytestmark = pytest.mark.anyio
RUN = "run-loop-1"


class Clock:
    """Epoch seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(EFFECTS, str(tmp_path / "effects.txt"))
    return tmp_path / "run.jsonl"


def made(journal: Path) -> int:
    return effects(journal.parent / "effects.txt")


def harness(journal: Path, book: Approvals | None) -> hw.Harness:
    bus = hw.HookBus()
    bus.register(needs_approval)
    return hw.Harness.from_bus(
        bus, provider=Agent(), tools=[refund], journal=journal, approvals=book
    )


def book_on(store: MemoryStore, clock: Clock | None = None, spec: str = "code") -> Approvals:
    return Approvals(store, spec=spec, expires_after=3600, clock=clock or Clock())


async def suspended(h: hw.Harness) -> hw.RunResult:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id=RUN))
    result = await h.run("Refund order 42, 250 USD", ctx=ctx)
    assert result.exit_reason == "suspended"
    return result


async def test_a_suspension_files_a_record_and_says_where_to_decide_it(journal: Path) -> None:
    book = book_on(MemoryStore())
    result = await suspended(harness(journal, book))
    assert result.pending is not None
    ident = result.approval
    assert ident is not None and ident == result.pending.approval == result.exit.approval
    record = await book.get(ident)
    assert (record.subject, record.filed_by, record.status) == (f"run:{RUN}", "run loop", "pending")
    assert (record.hook, record.tool, record.approver_role) == ("tool.before", "refund", ROLE)
    assert record.identity == content_identity(action_of("tool.before", result.pending.event))
    # the id survives the state's JSON, and the journal's end line holds it
    back = hw.RunState.model_validate_json(result.state.model_dump_json())
    assert back.pending is not None and back.pending.approval == ident
    recovered = hw.recover(journal)
    assert recovered is not None and recovered.pending == result.pending
    assert made(journal) == 0


async def test_without_approvals_nothing_is_filed(journal: Path) -> None:
    result = await suspended(harness(journal, None))
    assert result.approval is None and result.pending is not None
    assert result.pending.approval is None
    assert '"approval"' not in journal.read_text(encoding="utf-8")


async def test_a_pending_record_keeps_the_run_suspended(journal: Path) -> None:
    h = harness(journal, book_on(MemoryStore()))
    result = await suspended(h)
    before = journal.read_bytes()
    with pytest.raises(hw.AgentError) as caught:
        await h.resume(result.state)
    assert caught.value.kind == "approval_pending"
    assert str(result.approval) in str(caught.value)
    assert "harnessweaver approvals approve" in str(caught.value)
    assert journal.read_bytes() == before  # nothing emitted, nothing journaled
    assert made(journal) == 0


async def test_approved_in_the_store_the_tool_runs_once(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    ident = str(result.approval)
    await book.approve(ident, role=ROLE, by="ana")
    done = await h.resume(result.state)
    assert (done.exit_reason, made(journal)) == ("completed", 1)
    record = await book.get(ident)
    assert record.status == "used" and record.used is not None
    assert record.used.by == f"{RUN}/1/tool.before"
    decisions = [line for line in hw.read_journal(journal) if line.kind == "decision"]
    assert len(decisions) == 1
    line = decisions[0]
    assert isinstance(line, hw.agent.journal.DecisionLine)
    assert line.approval == ident and line.decision.approved and line.decision.role == ROLE
    # the same stored state, again: refused, and the tool does not run twice
    with pytest.raises(ApprovalRefused) as caught:
        await h.resume(result.state)
    assert (caught.value.code, caught.value.approval) == ("approval_replayed", ident)
    assert made(journal) == 1


async def test_denied_in_the_store_the_model_reads_the_denial(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    await book.deny(str(result.approval), role=ROLE, reason="over the limit")
    done = await h.resume(result.state)
    assert done.exit_reason == "completed"
    assert "The approver denied this tool call: over the limit" in str(done.output)
    assert made(journal) == 0
    assert (await book.get(str(result.approval))).status == "closed"


async def test_an_edit_in_the_store_runs_the_edited_arguments(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    await book.edit(str(result.approval), {"order": 42, "amount_usd": 90}, role=ROLE)
    done = await h.resume(result.state)
    assert done.exit_reason == "completed"
    lines = (journal.parent / "effects.txt").read_text(encoding="utf-8").splitlines()
    assert lines == ['{"order": 42, "amount_usd": 90.0}']


async def test_an_expired_record_is_refused(journal: Path) -> None:
    clock = Clock()
    book = book_on(MemoryStore(), clock)
    h = harness(journal, book)
    result = await suspended(h)
    await book.approve(str(result.approval), role=ROLE)
    clock.now += 3600
    with pytest.raises(ApprovalRefused) as caught:
        await h.resume(result.state)
    assert caught.value.code == "approval_expired"
    assert made(journal) == 0


async def test_the_wrong_role_cannot_decide(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    with pytest.raises(ApprovalRefused) as caught:
        await book.approve(str(result.approval), role="support")
    assert caught.value.code == "approval_wrong_role"
    with pytest.raises(hw.AgentError) as given:  # an explicit decision is checked first
        await h.resume(result.state, hw.Decision.approve(role="support"))
    assert given.value.kind == "wrong_approver"
    assert (await book.get(str(result.approval))).status == "pending"
    assert made(journal) == 0


async def test_changed_arguments_are_not_the_approved_action(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    await book.approve(str(result.approval), role=ROLE)
    assert result.pending is not None
    event = dict(result.pending.event)
    event["call"] = {**event["call"], "arguments": {"order": 42, "amount_usd": 2500}}  # type: ignore[dict-item]
    tampered = result.state.model_copy(
        update={"pending": result.pending.model_copy(update={"event": event})}
    )
    with pytest.raises(ApprovalRefused) as caught:
        await h.resume(tampered)
    assert caught.value.code == "approval_mismatch"
    assert made(journal) == 0
    assert (await book.get(str(result.approval))).status == "approved"  # still there to claim


async def test_another_spec_version_is_refused(journal: Path) -> None:
    store = MemoryStore()
    result = await suspended(harness(journal, book_on(store, spec="sha256:" + "1" * 64)))
    await book_on(store, spec="sha256:" + "1" * 64).approve(str(result.approval), role=ROLE)
    edited = harness(journal, book_on(store, spec="sha256:" + "2" * 64))
    with pytest.raises(ApprovalRefused) as caught:
        await edited.resume(result.state)
    assert caught.value.code == "approval_spec_changed"
    assert made(journal) == 0


async def test_an_explicit_decision_is_recorded_and_claimed(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    ident = str(result.approval)
    done = await h.resume(result.state, hw.Decision.approve(role=ROLE, reason="fine"))
    assert (done.exit_reason, made(journal)) == ("completed", 1)
    record = await book.get(ident)
    assert record.status == "used" and record.decision is not None
    assert (record.decision.role, record.decision.reason) == (ROLE, "fine")
    for again in (None, hw.Decision.approve(role=ROLE)):  # replayed elsewhere: refused
        with pytest.raises(ApprovalRefused) as caught:
            await h.resume(result.state, again)
        assert caught.value.code == "approval_replayed"
    assert made(journal) == 1


async def test_an_explicit_decision_against_the_stored_one_is_refused(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    await book.deny(str(result.approval), role=ROLE)
    with pytest.raises(ApprovalRefused) as caught:
        await h.resume(result.state, hw.Decision.approve(role=ROLE))
    assert caught.value.code == "approval_decided"
    assert made(journal) == 0
    # the same decision as the stored one goes on
    done = await h.resume(result.state, hw.Decision.deny("no", role=ROLE))
    assert done.exit_reason == "completed" and made(journal) == 0


async def test_a_record_needs_the_approvals_to_resume(journal: Path) -> None:
    result = await suspended(harness(journal, book_on(MemoryStore())))
    bare = harness(journal, None)
    for decision in (None, hw.Decision.approve(role=ROLE)):
        with pytest.raises(hw.AgentError) as caught:
            await bare.resume(result.state, decision)
        assert caught.value.kind == "approvals_required"
    assert made(journal) == 0


async def test_a_record_unknown_to_the_store_is_refused(journal: Path) -> None:
    result = await suspended(harness(journal, book_on(MemoryStore())))
    elsewhere = harness(journal, book_on(MemoryStore()))  # another process's memory
    with pytest.raises(ApprovalRefused) as caught:
        await elsewhere.resume(result.state, hw.Decision.approve(role=ROLE))
    assert caught.value.code == "approval_unknown"
    assert made(journal) == 0


async def test_recovery_after_the_decision_line_claims_nothing_again(journal: Path) -> None:
    book = book_on(MemoryStore())
    h = harness(journal, book)
    result = await suspended(h)
    await book.approve(str(result.approval), role=ROLE)
    await h.resume(result.state)
    # a crash right after the decision line: the journal ends there
    text = journal.read_bytes()
    lines = text.splitlines(keepends=True)
    kinds = [line.kind for line in hw.read_journal(journal)]
    journal.write_bytes(b"".join(lines[: kinds.index("decision") + 1]))
    state = hw.recover(journal)
    assert state is not None and state.pending is None and state.phase == "run_tool"
    done = await h.resume(state)  # the decision is the journal's: no claim, no refusal
    assert done.exit_reason == "completed"
    assert (await book.get(str(result.approval))).status == "used"


async def test_a_store_that_fails_while_filing_runs_nothing(journal: Path) -> None:
    store = MemoryStore()
    h = harness(journal, book_on(store))
    await store.close()
    ctx = hw.RunContext(envelope=hw.Envelope(run_id=RUN))
    with pytest.raises(Exception) as caught:
        await h.run("Refund order 42, 250 USD", ctx=ctx)
    assert type(caught.value).__name__ == "StateUnavailable"
    state = hw.recover(journal)
    assert state is not None and state.pending is None and made(journal) == 0


async def test_two_resumes_at_once_run_the_tool_once(journal: Path, tmp_path: Path) -> None:
    import anyio

    book = book_on(MemoryStore())
    result = await suspended(harness(journal, book))
    await book.approve(str(result.approval), role=ROLE)
    outcomes: list[str] = []

    async def resume_in(name: str) -> None:  # each with its own journal, as two workers would
        other = tmp_path / name / "run.jsonl"
        other.parent.mkdir()
        try:
            done = await harness(other, book).resume(result.state)
            outcomes.append(done.exit_reason)
        except ApprovalRefused as refused:
            outcomes.append(refused.code)

    async with anyio.create_task_group() as group:
        group.start_soon(resume_in, "a")
        group.start_soon(resume_in, "b")
    assert sorted(outcomes) == ["approval_replayed", "completed"]
    assert made(journal) == 1


async def test_a_spec_that_declares_approvals_files_without_being_told(tmp_path: Path) -> None:
    # `approvals:` in the spec is the opt-in: hw.load's harness files its suspended calls in
    # harness.approvals (here on the spec's SQLite store) with no with_agent(approvals=...)
    spec = tmp_path / "harness.yaml"
    base = (
        'plugins: {local: ["crash_worker"]}\n'
        "middleware:\n  - {use: loopapp.needs_approval, id: needs_approval}\n"
        f"state: {{backend: sqlite, path: {tmp_path / 'state.sqlite3'}}}\n"
    )
    for declared, filed in (("", False), ("approvals: {}\n", True)):
        spec.write_text(base + declared, encoding="utf-8")
        loaded = hw.load(spec)
        try:
            h = loaded.with_agent(provider=Agent(), tools=[refund])
            assert h.agent.approvals is None
            result = await suspended(h)
            assert (result.approval is not None) is filed
            if filed:
                assert result.approval is not None
                record = await loaded.approvals.get(result.approval)
                assert record.status == "pending" and record.filed_by == "run loop"
        finally:
            await loaded.aclose()
