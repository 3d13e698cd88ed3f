"""Warnings in the run loop (I24): every warning a hook result carries reaches the run's
result and the journal, on the first line written after it, in the order given; an audited
middleware's warnings stay on its trace record; a run without warnings journals no key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_support import Counted, S, answering, harness

import harnessweaver as hw

pytestmark = pytest.mark.anyio


def warned(*texts: str) -> Any:
    return lambda event: hw.Continue(warnings=list(texts))


def raw_lines(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


async def test_warnings_reach_the_result_and_the_line_after_them(tmp_path: Path) -> None:
    journal, lookup = tmp_path / "run.jsonl", Counted()
    h = harness(
        answering("tool.before", warned("refunds are audited", "over 100"), name="refunds"),
        answering("task.end", warned("bye"), name="closing"),
        answering("step.start", lambda event: None, name="quiet"),
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
        journal=journal,
    )
    result = await h.run("refund order 1")
    assert result.exit_reason == "completed"
    refunds = [
        hw.RunWarning(hook="tool.before", middleware="refunds", text="refunds are audited"),
        hw.RunWarning(hook="tool.before", middleware="refunds", text="over 100"),
    ]
    bye = hw.RunWarning(hook="task.end", middleware="closing", text="bye")
    assert result.warnings == (*refunds, bye)
    lines = hw.read_journal(journal)
    assert [(line.kind, line.warnings) for line in lines] == [
        ("start", ()),
        ("step", tuple(refunds)),  # given in the first step, journaled with it
        ("step", ()),
        ("end", (bye,)),
    ]
    raw = raw_lines(journal)
    assert ["warnings" in line for line in raw] == [False, True, False, True]
    over = {"hook": "tool.before", "middleware": "refunds", "text": "over 100"}
    assert raw[1]["warnings"][1] == over


async def test_a_run_without_warnings_journals_no_warnings_key(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    result = await harness(answering("tool.before", lambda event: None), journal=journal).run("hi")
    assert result.warnings == ()
    assert all("warnings" not in line for line in raw_lines(journal))


async def test_without_a_journal_the_result_still_has_them() -> None:
    h = harness(answering("task.start", warned("first run of this task"), name="intro"))
    result = await h.run("hi")
    assert result.warnings == (
        hw.RunWarning(hook="task.start", middleware="intro", text="first run of this task"),
    )


async def test_a_suspension_journals_its_warnings_and_a_resume_keeps_its_own(
    tmp_path: Path,
) -> None:
    journal, lookup = tmp_path / "run.jsonl", Counted()
    suspend = hw.Suspend("a refund", approver_role="finance", warnings=["big refund"])
    gate = answering("tool.before", lambda e: suspend if not lookup.calls else None, name="gate")
    after = answering("tool.after", warned("refund made"), name="ledger")
    h = harness(
        gate,
        after,
        script=[S.tool_call("lookup", {"order": 7}), "done"],
        tools=[lookup.tool],
        journal=journal,
    )
    first = await h.run("refund order 7")
    big = hw.RunWarning(hook="tool.before", middleware="gate", text="big refund")
    assert (first.exit_reason, first.warnings) == ("suspended", (big,))
    resumed = await h.resume(first.state, hw.Decision.approve(role="finance"))
    made = hw.RunWarning(hook="tool.after", middleware="ledger", text="refund made")
    assert (resumed.exit_reason, resumed.warnings) == ("completed", (made,))
    lines = hw.read_journal(journal)
    kinds = [(line.kind, line.warnings) for line in lines]
    assert kinds == [
        ("start", ()),
        ("end", (big,)),  # the suspension's end line
        ("decision", ()),
        ("step", (made,)),
        ("step", ()),
        ("end", ()),
    ]


async def test_an_audited_middlewares_warnings_stay_on_its_record(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"

    async def trial(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Block("would block", warnings=["trial policy"])

    audited = hw.middleware(hooks=["task.start"], fail_mode="closed", mode="audit")(trial)
    result = await harness(audited, journal=journal).run("hi")
    assert (result.exit_reason, result.warnings) == ("completed", ())
    assert all("warnings" not in line for line in raw_lines(journal))
    record = next(r for r in result.trace if r.get("middleware") == "trial")
    assert (record["audit"], record["warnings"]) == (True, ["trial policy"])


def test_a_line_with_warnings_reads_back_as_written(tmp_path: Path) -> None:
    """The format 2 codec: the key round-trips, and a line without it reads as none."""
    from harnessweaver.agent.delta import Base, decode_line, encode_line

    state = hw.RunState(run_id="r", task="t", input="hi")
    note = hw.RunWarning(hook="task.start", middleware="m", text="Zoë ☕ \U0001f600")
    line = hw.agent.lines.StartLine(run_id="r", state=state, warnings=(note,))
    raw = json.loads(json.dumps(encode_line(line, Base()), ensure_ascii=False))
    assert decode_line(raw, Base()) == line
    del raw["warnings"]
    assert decode_line(raw, Base()).warnings == ()
    with pytest.raises(ValueError, match="text"):
        decode_line({**raw, "warnings": [{"hook": "task.start", "middleware": "m"}]}, Base())
