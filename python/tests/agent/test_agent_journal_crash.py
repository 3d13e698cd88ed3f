"""A crash at any byte of a journal: recovery resumes from the last complete line, the trace
is cut back to that line, and the resumed run ends in the state an uninterrupted run ends in.

The run has non-ASCII text everywhere (task, tool output, answer), so many offsets cut a
line inside a UTF-8 character."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from agent_support import ManualClock, S, harness

import harnessweaver as hw

TASK = "Zoë Ångström écrit: 注文 1 と 2 を確認してください 🙂"
SCRIPT = [
    S.tool_call("lookup", {"order": 1}),
    S.tool_call("lookup", {"order": 2}),
    "Both orders shipped ✓ — 配送済み 🚚",
]
APPROVER = "ops"


@hw.tool
def lookup(order: int) -> str:
    """Look an order up."""
    return f"order {order}: café ☕ shipped to Ærøskøbing 📦"


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def first_order_waits(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.call.arguments.get("order") == 1:
        return hw.Suspend(reason="order 1 needs a look", approver_role=APPROVER)
    return None


def crashable(journal: Path, script: list[Any] = SCRIPT) -> hw.Harness:
    """The harness of every run here: a clock that never moves, so states compare exactly."""
    return harness(
        first_order_waits, script=script, tools=[lookup], journal=journal, clock=ManualClock()
    )


def drive(h: hw.Harness, state: hw.RunState | None = None) -> hw.RunResult:
    """Run (or resume) until the run ends, approving every suspension."""
    if state is None:
        ctx = hw.RunContext(envelope=hw.Envelope(run_id="crash-1"))
        result = h.run_sync(TASK, ctx=ctx)
    else:
        decision = hw.Decision.approve(role=APPROVER) if state.pending else None
        result = h.resume_sync(state, decision)
    while result.resumable:
        result = h.resume_sync(result.state, hw.Decision.approve(role=APPROVER))
    return result


def model_calls(state: hw.RunState) -> int:
    """How many scripted responses a run in ``state`` has used."""
    in_flight = state.step is not None and state.step.response is not None
    return state.steps + in_flight


def left(line: Any) -> hw.RunState:
    return line.after() if isinstance(line, hw.StepRecord) else line.state


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes, hw.RunState]:
    """The journal and the trace of the run, and the state it ends in."""
    out = tmp_path_factory.mktemp("whole")
    journal = out / "run.jsonl"
    final = drive(crashable(journal)).state
    assert final.exit_reason == "completed" and final.steps == 3
    return journal.read_bytes(), (out / "run.trace.jsonl").read_bytes(), final


def test_recovery_succeeds_from_a_crash_at_every_byte_offset(
    uninterrupted: tuple[bytes, bytes, hw.RunState], tmp_path: Path
) -> None:
    data, _, _ = uninterrupted
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(data)
    states = [left(line) for line in hw.read_journal(whole)]
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    assert len(states) == len(ends) == 7  # start, end, decision, 3 steps, end
    inside_a_character = 0
    cut = tmp_path / "cut.jsonl"
    complete = 0  # lines wholly inside data[:offset]
    for offset in range(len(data) + 1):
        while complete < len(ends) and ends[complete] <= offset:
            complete += 1
        cut.write_bytes(data[:offset])
        expected = states[complete - 1] if complete else None
        assert hw.recover(cut) == expected, offset
        try:
            data[:offset].decode("utf-8")
        except UnicodeDecodeError:
            inside_a_character += 1
    assert inside_a_character > 100  # the crashes this test is about were among them


@pytest.mark.parametrize("lines", range(1, 7))
def test_a_run_recovered_after_any_line_ends_as_the_uninterrupted_run(
    uninterrupted: tuple[bytes, bytes, hw.RunState], tmp_path: Path, lines: int
) -> None:
    data, trace, final = uninterrupted
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    # the crash cut the next line (inside a character, if it has one), and left the whole
    # trace behind it
    middle = (ends[lines - 1] + ends[lines]) // 2
    torn = next(
        (
            offset
            for offset in range(ends[lines - 1] + 1, ends[lines])
            if data[offset] & 0xC0 == 0x80  # a continuation byte: inside a character
        ),
        middle,
    )
    journal = tmp_path / "run.jsonl"
    journal.write_bytes(data[:torn])
    (tmp_path / "run.trace.jsonl").write_bytes(trace)
    state = hw.recover(journal)
    assert state is not None
    h = crashable(journal, SCRIPT[model_calls(state) :])
    resumed = drive(h, state)
    assert resumed.state == final  # the same state, exactly
    assert hw.recover(journal) == final  # and the journal says so too
    written = hw.Trace.read_jsonl(tmp_path / "run.trace.jsonl").records()
    emits = sorted({record["emit"] for record in written})
    assert emits == list(range(1, len(emits) + 1))  # no record twice, none missing
    assert [r["hook"] for r in written if r["kind"] == "hook"].count("task.start") == 1


@pytest.mark.anyio
async def test_a_crash_between_the_trace_and_the_journal_line_is_cut_back_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = tmp_path / "run.jsonl"
    trace_file = tmp_path / "run.trace.jsonl"
    await crashable(journal).run(TASK)  # suspended at the first call
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(lines[0])  # the end line was lost; its trace records were written
    start_count = len(trace_file.read_bytes().splitlines()) - 1  # task.end's hook record...
    state = hw.recover(journal)
    assert state is not None and state.phase == "step_start"
    with caplog.at_level(logging.INFO, logger="harnessweaver"):
        resumed = await crashable(journal).resume(state)
    assert resumed.exit_reason == "suspended"  # the step is done again, and suspends again
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1 and "records written after the journal's last line" in dropped[0]
    assert start_count > 0
    records = hw.Trace.read_jsonl(trace_file).records()
    hooks = [r["hook"] for r in records if r["kind"] == "hook"]
    # task.start once, then the step as the resumed run did it: no record of the lost attempt
    assert hooks == [
        "task.start",
        "step.start",
        "model.before",
        "model.after",
        "tool.before",
        "task.end",
    ]
    last = journal.read_bytes().splitlines()[-1]
    assert f'"trace":{len(records)}'.encode() in last  # the two files end together
    assert any("resumed at phase step_start" in r.getMessage() for r in caplog.records)


def test_recover_logs_the_torn_line_it_ignored_and_never_the_run_s_content(
    uninterrupted: tuple[bytes, bytes, hw.RunState],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    data, _, _ = uninterrupted
    journal = tmp_path / "run.jsonl"
    journal.write_bytes(data[:-5])  # the last line, four bytes and its newline short
    with caplog.at_level(logging.DEBUG, logger="harnessweaver"):
        state = hw.recover(journal)
    assert state is not None and state.steps == 3
    logged = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    torn = len(data.splitlines()[-1]) - 4
    assert logged == [
        (
            "harnessweaver.agent.journal",
            "WARNING",
            f"journal {journal}: ignored a torn last line ({torn} bytes after the last newline)",
        ),
        (
            "harnessweaver.agent.journal",
            "INFO",
            f"journal {journal}: run crash-1 recovered after line 6 (step), phase finish, 3 steps",
        ),
    ]


@pytest.mark.anyio
async def test_a_stop_is_logged_with_the_exception_s_type_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "hunter2-secret-message"

    class Failing:
        async def complete(self, request: hw.ModelRequest) -> hw.ModelResponse:
            raise ConnectionError(secret)

    h = crashable(tmp_path / "run.jsonl").with_agent(provider=Failing())
    with caplog.at_level(logging.DEBUG, logger="harnessweaver"):
        result = await h.run(TASK)
        await h.resume(result.state)
    messages = [r.getMessage() for r in caplog.records]
    assert f"run {result.state.run_id} stopped: provider_error after 0 steps (ConnectionError)" in (
        messages
    )
    assert any("resumed at phase call_model after 0 steps (no decision)" in m for m in messages)
    assert not [m for m in messages if secret in m or "Zoë" in m]
