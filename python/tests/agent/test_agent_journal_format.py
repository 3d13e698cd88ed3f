"""Journal format 2: a line holds what changed since the line before, so a journal grows with
the steps (not their square); the lines read back are the states the run had, exactly;
format 1 journals (every line the whole state) are still read and resumed."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from agent_support import ManualClock, S, answering, harness, once
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.agent.journal import DecisionLine


@hw.tool
def lookup(order: int) -> dict[str, object]:
    """Look an order up."""
    return {"order": order, "status": "shipped", "note": "Zoë's café order — ☕ " * 4}


def run_steps(journal: Path, steps: int) -> hw.RunResult:
    """A run of ``steps`` steps, one tool call each but the last (the clock does not move,
    so lines of the same kind differ only in their numbers)."""
    script: list[Any] = [S.tool_call("lookup", {"order": n}) for n in range(1, steps)]
    h = harness(
        script=[*script, "done"],
        tools=[lookup],
        journal=journal,
        system="You are the shop's support agent.",
        budgets=hw.Budgets(max_steps=steps),
        clock=ManualClock(),
    )
    result = h.run_sync("Look up my orders, please — Zoë")
    assert (result.exit_reason, result.steps) == ("completed", steps)
    return result


def line_sizes(journal: Path) -> list[int]:
    return [len(line) for line in journal.read_bytes().splitlines(keepends=True)]


def test_a_journal_grows_linearly_with_the_steps(tmp_path: Path) -> None:
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    run_steps(short, 10)
    run_steps(long, 40)
    sizes = line_sizes(long)
    steps = sizes[1:-2]  # the step lines with a tool call
    # the 39th step line is as long as the 2nd, but for its longer numbers (format 1: the
    # whole conversation so far, 38 steps longer)
    assert steps[-1] - steps[1] <= 20
    # four times the steps, four times the bytes (format 1: about fourteen times)
    assert long.stat().st_size < 4.2 * short.stat().st_size


def test_what_is_read_back_is_what_the_run_had(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    seen: list[hw.RunState] = []
    h = harness(
        answering("tool.before", once(hw.Suspend("look", approver_role="ops"))),
        script=[S.tool_call("lookup", {"order": 1}), S.tool_call("lookup", {"order": 2}), "ok"],
        tools=[lookup],
        journal=journal,
    )
    first = h.run_sync("go — Zoë")
    seen.append(first.state)
    done = h.resume_sync(first.state, hw.Decision.approve(role="ops"))
    seen.append(done.state)
    lines = hw.read_journal(journal)
    assert [line.kind for line in lines] == [
        "start",
        "end",
        "decision",
        "step",
        "step",
        "step",
        "end",
    ]
    ends = [line.state for line in lines if line.kind == "end"]
    assert ends == seen  # every field, the step in flight and the pending approval included
    steps = [line for line in lines if isinstance(line, hw.StepRecord)]
    for step, following in itertools.pairwise(steps):
        assert step.after().messages == following.state.messages
    assert json.loads(journal.read_bytes().splitlines()[0])["v"] == 2


def test_a_format_1_journal_is_read_and_resumed(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    h = harness(
        answering("tool.before", once(hw.Suspend("look", approver_role="ops"))),
        script=[S.tool_call("lookup", {"order": 1}), "ok"],
        tools=[lookup],
        journal=journal,
    )
    first = h.run_sync("go")
    written = hw.read_journal(journal)
    # what harnessweaver wrote before format 2: every line the model's own JSON
    journal.write_text("".join(line.model_dump_json() + "\n" for line in written), "utf-8")
    assert hw.read_journal(journal) == written
    state = hw.recover(journal)
    assert state == first.state
    done = h.resume_sync(state, hw.Decision.approve(role="ops"))
    assert done.exit_reason == "completed"
    lines = hw.read_journal(journal)  # format 2 lines, appended to format 1 ones
    assert [line.kind for line in lines] == ["start", "end", "decision", "step", "step", "end"]
    assert lines[-1].state == done.state


def test_a_line_of_an_unknown_format_is_an_error(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    journal.write_text('{"v": 3, "kind": "start"}\n', encoding="utf-8")
    with pytest.raises(hw.JournalError, match=r"line 1 .*format 3") as caught:
        hw.read_journal(journal)
    assert caught.value.kind == "invalid_journal"


def test_a_complete_line_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    run_steps(journal, 2)
    data = journal.read_bytes()
    journal.write_bytes(data[:10] + b"\xff" + data[11:])
    with pytest.raises(hw.JournalError, match=r"line 1 is not a journal line \(invalid UTF-8"):
        hw.recover(journal)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_input=JSON, output=JSON, answer=st.text(), cut=st.floats(0, 1))
def test_any_input_survives_the_journal_and_a_crash_anywhere(
    task_input: Any, output: Any, answer: str, cut: float
) -> None:
    @hw.tool
    def echo(n: int, extra: Any = None) -> Any:
        """Answer with the output."""
        return output

    with tempfile.TemporaryDirectory() as folder:
        journal = Path(folder) / "run.jsonl"
        script = [S.tool_call("echo", {"n": 1, "extra": output}), S.text(answer)]
        h = harness(script=script, tools=[echo], journal=journal)
        done = h.run_sync(task_input)
        lines = hw.read_journal(journal)
        assert lines[-1].state == done.state
        assert lines[0].state.input == task_input
        data = journal.read_bytes()
        offset = int(cut * len(data))
        journal.write_bytes(data[:offset])
        complete = data[:offset].count(b"\n")
        state = hw.recover(journal)
        if complete == 0:
            assert state is None
        else:
            line = lines[complete - 1]
            assert state == (line.after() if isinstance(line, hw.StepRecord) else line.state)


def suspends_every(hook: str) -> Any:
    @hw.middleware(hooks=[hook], fail_mode="closed", name=f"every_{hook.replace('.', '_')}")
    async def wait(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Suspend("look", approver_role="ops", code="look")

    return wait


def suspending(journal: Path, hook: str, steps: int) -> hw.Harness:
    """A harness whose run of ``steps`` steps suspends at every ``hook``."""
    script: list[Any] = [S.tool_call("lookup", {"order": n}) for n in range(1, steps)]
    return harness(
        suspends_every(hook),
        script=[*script, "done — Zoë ✓"],
        tools=[lookup],
        journal=journal,
        budgets=hw.Budgets(max_steps=steps),
        clock=ManualClock(),
    )


def run_suspending(journal: Path, hook: str, steps: int) -> hw.RunResult:
    """A run of ``steps`` steps that suspends at every ``hook``, approved every time."""
    h = suspending(journal, hook, steps)
    result = h.run_sync("Look up my orders, please — Zoë")
    while result.exit_reason == "suspended":
        state = hw.recover(journal)  # what the journal says is exactly the state returned
        assert state is not None
        assert state.model_dump_json() == result.state.model_dump_json()
        result = h.resume_sync(state, hw.Decision.approve(role="ops"))
    assert (result.exit_reason, result.steps) == ("completed", steps)
    assert hw.recover(journal) == result.state
    return result


@pytest.mark.parametrize(
    "hook", ["task.start", "step.start", "model.before", "model.after", "tool.before", "step.end"]
)
def test_a_run_suspended_anywhere_is_recovered_exactly(tmp_path: Path, hook: str) -> None:
    run_suspending(tmp_path / "run.jsonl", hook, 3)


@pytest.mark.parametrize("hook", ["step.start", "model.before"])
def test_suspensions_holding_the_conversation_grow_linearly_too(tmp_path: Path, hook: str) -> None:
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    run_suspending(short, hook, 6)
    run_suspending(long, hook, 24)  # every pending event holds the conversation so far
    assert long.stat().st_size < 4.2 * short.stat().st_size


def test_a_rewrite_to_an_equal_value_of_another_type_is_kept(tmp_path: Path) -> None:
    """``1``, ``1.0`` and ``true`` are equal in Python but not in JSON: a middleware that
    turns one into another in an old message changes what the journal must hold."""

    def floats(event: hw.ModelRequestEvent) -> hw.Outcome | None:
        def changed(message: hw.Message) -> hw.Message:
            calls = tuple(
                call.model_copy(update={"arguments": {"order": 1.0, "seen": True}})
                for call in message.tool_calls
            )
            return message.model_copy(update={"tool_calls": calls})

        messages = tuple(changed(message) for message in event.request.messages)
        request = event.request.model_copy(update={"messages": messages})
        return hw.Continue(modified=event.model_copy(update={"request": request}))

    journal = tmp_path / "run.jsonl"
    script = [S.tool_call("lookup", {"order": 1, "seen": 1}), "done"]
    h = harness(answering("model.before", floats), script=script, tools=[lookup], journal=journal)
    done = h.run_sync("go")
    recovered = hw.recover(journal)
    assert recovered is not None
    assert recovered.model_dump_json() == done.state.model_dump_json()
    assert '"order":1.0,"seen":true' in done.state.model_dump_json()


def test_a_trace_past_its_limit_still_writes_every_record_to_the_trace_file(
    tmp_path: Path,
) -> None:
    """The context's trace keeps only its newest records (I20); the run writes the records made
    since the last journal line, counted from all the trace was given, not by index into what
    it still holds (which moves once the oldest are dropped)."""
    journal = tmp_path / "run.jsonl"
    h = harness(
        script=[*(S.tool_call("lookup", {"order": n}) for n in range(1, 12)), "done"],
        tools=[lookup],
        journal=journal,
        budgets=hw.Budgets(max_steps=12),
        clock=ManualClock(),
    )
    ctx = hw.RunContext(trace=hw.Trace(limit=20))
    result = h.run_sync("Look up my orders, please", ctx=ctx)
    assert result.exit_reason == "completed"
    assert ctx.trace.dropped > 0 and len(ctx.trace) == 20
    written = list(hw.Trace.read_jsonl(journal.with_suffix(".trace.jsonl")))
    assert len(written) == ctx.trace.dropped + 20
    assert [r["emit"] for r in written] == sorted(r["emit"] for r in written)
    assert {r["emit"] for r in written} == set(range(1, ctx.trace.emits + 1))
    assert written[-20:] == ctx.trace.records()


def run_editing(journal: Path, hook: str, steps: int) -> hw.RunResult:
    """A run of ``steps`` steps that suspends at every ``hook``; the approver edits each
    pending event (I23), the chain suspends again about the edit, and the approver approves."""
    h = suspending(journal, hook, steps)
    result = h.run_sync("Look up my orders, please — Zoë")
    edits = 0
    decisions: list[hw.Decision] = []
    while result.pending is not None:
        state = hw.recover(journal)  # what the journal says is exactly the state returned
        assert state is not None and state.model_dump_json() == result.state.model_dump_json()
        if edits == result.steps:  # this step's event not edited yet: edit it as shown
            decision = hw.Decision.edit(result.pending.event_model(), role="ops")
            edits += 1
        else:  # the chain suspended again about the edit: approve it
            decision = hw.Decision.approve(role="ops")
        decisions.append(decision)
        result = h.resume_sync(state, decision)
    assert (result.exit_reason, result.steps, edits) == ("completed", steps, steps)
    # the edits read back are the edits made, conversation and all
    lines = hw.read_journal(journal)
    assert [line.decision for line in lines if isinstance(line, DecisionLine)] == decisions
    assert hw.recover(journal) == result.state
    return result


@pytest.mark.parametrize("hook", ["step.start", "model.before"])
def test_edits_of_events_holding_the_conversation_grow_linearly_too(
    tmp_path: Path, hook: str
) -> None:
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    run_editing(short, hook, 6)
    run_editing(long, hook, 24)  # every edited event holds the conversation so far
    assert long.stat().st_size < 4.2 * short.stat().st_size
