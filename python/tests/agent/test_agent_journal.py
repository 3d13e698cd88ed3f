"""The journal (one line per step, flushed as it goes, resumable after a crash) and the bus
trace written beside it. Neither holds an exception message (R9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_support import Counted, ManualClock, S, answering, harness, once

import harnessweaver as hw
from harnessweaver.agent.journal import JournalWriter

pytestmark = pytest.mark.anyio


def kinds(path: Path) -> list[str]:
    return [line.kind for line in hw.read_journal(path)]


async def test_one_line_per_step_between_start_and_end(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    lookup = Counted()
    h = harness(
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
        journal=journal,
        clock=ManualClock(),  # elapsed times are part of the states compared below
    )
    result = await h.run("go")
    lines = hw.read_journal(journal)
    assert [line.kind for line in lines] == ["start", "step", "step", "end"]
    first = lines[1]
    assert isinstance(first, hw.StepRecord)
    assert first.state.messages == (hw.Message(role="user", content="go"),)  # the state before
    assert first.action.response.message.tool_calls[0].name == "lookup"  # the action
    assert [m.content for m in first.observation] == ['{"order": 1, "status": "shipped"}']
    assert first.after() == lines[2].state  # each step starts where the last one ended
    end = lines[-1]
    assert end.kind == "end" and end.state == result.state and end.output == "done"


async def test_lines_are_written_while_the_run_goes_on(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    seen_during_run: list[list[str]] = []

    @hw.tool
    def peek(order: int) -> str:
        seen_during_run.append(kinds(journal))  # what a crash right now would leave
        return "ok"

    script = [S.tool_call("peek", {"order": 1}), S.tool_call("peek", {"order": 2}), "done"]
    await harness(script=script, tools=[peek], journal=journal).run("go")
    assert seen_during_run == [["start"], ["start", "step"]]


async def test_a_torn_last_line_is_ignored_and_the_run_recovers_from_the_line_before(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "run.jsonl"
    lookup = Counted()
    script = [S.tool_call("lookup", {"order": 1}), S.tool_call("lookup", {"order": 2}), "done"]
    h = harness(script=script, tools=[lookup.tool], journal=journal)
    await h.run("go")
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    # a crash while step 2 was being written: start, step 1, and half of step 2
    journal.write_text(lines[0] + lines[1] + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    assert kinds(journal) == ["start", "step"]
    state = hw.recover(journal)
    assert state is not None
    assert (state.phase, state.steps) == ("step_start", 1)
    # resume from there: step 2 is done again, the journal is appended to after the cut
    again = hw.ScriptedProvider([S.tool_call("lookup", {"order": 2}), "done"])
    resumed = await h.with_agent(provider=again).resume(state)
    assert (resumed.exit_reason, resumed.steps, resumed.output) == ("completed", 3, "done")
    assert kinds(journal) == ["start", "step", "step", "step", "end"]


async def test_a_suspended_run_is_recovered_with_its_pending_approval(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    lookup = Counted()
    h = harness(
        answering("tool.before", once(hw.Suspend("approve", approver_role="ops"))),
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
        journal=journal,
    )
    await h.run("go")
    state = hw.recover(journal)  # a new process, with only the journal
    assert state is not None and state.pending is not None
    resumed = await h.resume(state, hw.Decision.approve(role="ops"))
    assert resumed.exit_reason == "completed"
    assert kinds(journal) == ["start", "end", "decision", "step", "step", "end"]
    decision = hw.read_journal(journal)[2]
    assert decision.kind == "decision" and decision.decision == hw.Decision.approve(role="ops")


def test_an_unreadable_line_before_the_last_is_an_error(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    journal.write_text('{"kind": "start"}\n{"kind": "end"}\n', encoding="utf-8")
    with pytest.raises(hw.JournalError, match=r"line 1 is not a journal line") as caught:
        hw.read_journal(journal)
    assert caught.value.kind == "invalid_journal"


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,  # issue 28's line
        '{"v": 2, "kind": "start", "x": ' + '{"a": ' * 5_000 + "1" + "}" * 5_000 + "}",
    ],
    ids=["arrays", "objects-in-a-field"],
)
async def test_a_complete_line_nested_too_deeply_is_invalid_journal(
    tmp_path: Path, line: str
) -> None:
    """Not the parser's RecursionError (docs/agent.md, "Crashes"): after a run's lines, or
    alone, for every reader of the journal, the writer appending to it included."""
    journal = tmp_path / "run.jsonl"
    await harness(script=["done"], journal=journal).run("go")
    lines = len(hw.read_journal(journal))
    for text in (journal.read_text(encoding="utf-8"), ""):
        journal.write_text(text + line + "\n", encoding="utf-8")
        number = lines + 1 if text else 1
        for read in (hw.read_journal, hw.recover, lambda p: JournalWriter(p, append=True)):
            with pytest.raises(hw.JournalError) as caught:
                read(journal)
            assert caught.value.kind == "invalid_journal"
            assert f"line {number} is not a journal line (arrays and objects nest" in str(
                caught.value
            )
    journal.write_text(line, encoding="utf-8")  # without its newline: a torn line, ignored
    assert hw.recover(journal) is None


def test_a_journal_with_no_complete_line_recovers_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    journal.write_text('{"kind": "sta', encoding="utf-8")
    assert hw.recover(journal) is None


async def test_the_trace_is_written_beside_the_journal_and_continues_after_resume(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "run.jsonl"
    lookup = Counted()
    h = harness(
        answering("tool.before", once(hw.Suspend("approve", approver_role="ops"))),
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
        journal=journal,
    )
    result = await h.run("go")
    trace_file = tmp_path / "run.trace.jsonl"
    assert h.agent.trace_path == trace_file
    assert hw.Trace.read_jsonl(trace_file).records() == result.trace.records()
    await h.resume(hw.recover(journal), hw.Decision.approve(role="ops"))  # type: ignore[arg-type]
    records = hw.Trace.read_jsonl(trace_file).records()
    emits = [r["emit"] for r in records if r["kind"] == "hook"]
    assert emits == list(range(1, len(emits) + 1))  # ordinals go on across the segments
    assert [r["hook"] for r in records if r["kind"] == "hook"][-2:] == ["step.end", "task.end"]


async def test_no_exception_message_reaches_the_journal_or_the_trace(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    secret = "hunter2-secret-message"

    @hw.tool
    def leaky(order: int) -> str:
        raise PermissionError(secret)

    @hw.middleware(hooks=["tool.after"], fail_mode="open")
    async def crashes(event: hw.ToolResultEvent, env: hw.Envelope) -> None:
        raise RuntimeError(secret)

    class Failing:
        async def complete(self, request: hw.ModelRequest) -> hw.ModelResponse:
            raise ConnectionError(secret)

    h = harness(crashes, script=[S.tool_call("leaky", {"order": 1})], tools=[leaky])
    h = h.with_agent(journal=journal)
    first = await h.run("go")  # the tool raises, the middleware raises, the script runs out
    assert first.exit_reason == "provider_error"
    await h.with_agent(provider=Failing()).resume(first.state)
    written = journal.read_text(encoding="utf-8") + (tmp_path / "run.trace.jsonl").read_text(
        encoding="utf-8"
    )
    assert secret not in written
    assert "tool 'leaky' failed: PermissionError" in written
    assert '"error":"RuntimeError"' in written  # the trace's failure record: the type only
    assert '"error":"ConnectionError"' in written


async def test_a_new_run_starts_a_new_journal(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    h = harness(script=["a"], journal=journal)
    await h.run("one")
    await h.with_agent(provider=hw.ScriptedProvider(["b"])).run("two")
    lines = [json.loads(text) for text in journal.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["start", "step", "end"]
    assert lines[-1]["output"] == "b"


async def test_the_warnings_of_each_emit_are_journaled_in_the_trace_beside_it(
    tmp_path: Path,
) -> None:
    """I24: the trace file the journal counts holds each taken answer's warnings, on that
    middleware's outcome record of that emit; emits without any write no warnings key."""
    journal = tmp_path / "run.jsonl"

    @hw.middleware(hooks=["tool.before", "model.after"], fail_mode="closed")
    async def advisor(event: object, env: hw.Envelope) -> hw.Continue | None:
        if isinstance(event, hw.ToolCallEvent):
            return hw.Continue(warnings=[f"order {event.call.arguments['order']} is old"])
        return None

    lookup = Counted()
    script = [S.tool_call("lookup", {"order": 1}), "done"]
    await harness(advisor, script=script, tools=[lookup.tool], journal=journal).run("go")
    trace = tmp_path / "run.trace.jsonl"
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    warned = [(r["hook"], r["middleware"], r["warnings"]) for r in records if "warnings" in r]
    assert warned == [("tool.before", "advisor", ["order 1 is old"])]
    assert all(r["kind"] == "outcome" for r in records if "warnings" in r)
    assert kinds(journal) == ["start", "step", "step", "end"]
