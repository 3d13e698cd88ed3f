"""``--events FILE``: an events file (JSON Lines of ``{"hook", "event"}``), each kind of bad
line refused as ``FILE:LINE: what``, a journal written by a real run read as the events its
hook points saw, and ``--dump-events`` writing them as an events file that reads back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from bench_support import bench, bench_json, write_spec

import harnessweaver as hw
from harnessweaver.benchcmd.events import read_events
from harnessweaver.benchcmd.samples import SAMPLES, sample_events

EVERYWHERE = "  - {use: benchy.light, id: first}\n  - {use: benchy.light, id: second}\n"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return write_spec(tmp_path, EVERYWHERE)


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": {"name": tool}, "call": {"id": "c1", "name": tool, "arguments": arguments}}


def lines(path: Path, *items: Any) -> Path:
    path.write_text("".join(f"{json.dumps(i)}\n" if i != "" else "\n" for i in items), "utf-8")
    return path


def test_every_sample_is_a_valid_event_of_its_hook_point() -> None:
    samples = sample_events()
    assert list(samples) == list(hw.EVENT_TYPES) == list(SAMPLES)
    for hook, (event,) in samples.items():
        assert type(event) is hw.EVENT_TYPES[hook]


def test_an_events_file_is_timed_event_by_event(
    capsys: pytest.CaptureFixture[str], spec: Path, tmp_path: Path
) -> None:
    events = lines(
        tmp_path / "events.jsonl",
        {"hook": "tool.before", "event": call("refund_payment", amount_usd=20)},
        "",  # blank lines are ignored
        {"hook": "tool.before", "event": call("lookup_order", order_id="1")},
        {"hook": "tool.after", "event": {**call("lookup_order"), "result": {"output": "ok"}}},
        {"hook": "task.start", "event": {"task": "t"}},  # no middleware there: not timed
    )
    doc = bench_json(capsys, spec, "--events", events)
    assert doc["events"] == str(events)
    assert [(e["hook"], e["events"]) for e in doc["hooks"]] == [
        ("tool.before", 2),
        ("tool.after", 1),
    ]
    # in run order: tool.after is outbound, innermost first
    assert [e["middleware"] for e in doc["hooks"]] == [["first", "second"], ["second", "first"]]


BAD = [
    ("{not json", "not JSON"),
    ('["hook", "event"]', 'a line is {"hook": HOOK, "event": {...}}'),
    ('{"hook": "tool.before"}', 'a line is {"hook": HOOK, "event": {...}}'),
    ('{"hook": "tool.middle", "event": {}}', "unknown hook 'tool.middle'"),
    ('{"hook": "tool.before", "event": {"call": {}}}', "not a valid tool.before event: tool"),
    ('{"hook": "step.end", "event": {"step": "first"}}', "not a valid step.end event: step"),
    # Hostile nesting: deeper than the reader follows, and than what reads an event follows.
    ("[" * 5000 + "]" * 5000, "not JSON this reader can follow (nested too deep)"),
    (
        '{"hook": "task.start", "event": {"task": "t", "input": '
        + '{"a": ' * 200
        + "1"
        + "}" * 200
        + "}}",
        "nests arrays and objects more than 128 deep",
    ),
]


@pytest.mark.parametrize(("line", "what"), BAD)
def test_a_bad_line_is_refused_with_its_file_and_line(
    capsys: pytest.CaptureFixture[str], spec: Path, tmp_path: Path, line: str, what: str
) -> None:
    good = json.dumps({"hook": "tool.before", "event": call("refund_payment")})
    events = tmp_path / "events.jsonl"
    events.write_text(f"{good}\n\n{line}\n{good}\n", encoding="utf-8")
    status, out, err = bench(capsys, spec, "--events", events)
    assert (status, out) == (2, "")
    assert f"{events}:3: {what}" in err


def test_a_missing_events_file_is_refused(capsys: pytest.CaptureFixture[str], spec: Path) -> None:
    status, _, err = bench(capsys, spec, "--events", spec.parent / "absent.jsonl")
    assert status == 2 and "absent.jsonl: cannot read it" in err


@hw.tool
def refund_payment(order_id: str, amount_usd: float) -> dict[str, object]:
    """Refund a card payment."""
    return {"status": "refunded", "amount_usd": amount_usd}


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    """The journal of a real run: one step calling a tool, then an answer."""
    path = tmp_path / "run.jsonl"
    script = [
        hw.ScriptedProvider.tool_call("refund_payment", {"order_id": "1234", "amount_usd": 20}),
        "Refunded 20 USD",
    ]
    harness = hw.Harness.from_bus(
        hw.HookBus(),
        task="refund",
        provider=hw.ScriptedProvider(script),
        tools=[refund_payment],
        journal=path,
    )
    asyncio.run(harness.run("Refund order 1234"))
    return path


def test_a_journal_gives_the_events_its_run_emitted(journal: Path) -> None:
    events = read_events(journal)
    assert [hook for hook, _ in events] == [
        "task.start",
        *("step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end"),
        *("step.start", "model.before", "model.after", "step.end"),
        "task.end",
    ]
    by_hook = dict(events)  # the last of each
    assert by_hook["task.start"] == hw.TaskStartEvent(task="refund", input="Refund order 1234")
    call = by_hook["tool.before"]
    assert isinstance(call, hw.ToolCallEvent) and call.call.arguments["amount_usd"] == 20
    result = by_hook["tool.after"]
    assert isinstance(result, hw.ToolResultEvent)
    assert result.result.output == {"status": "refunded", "amount_usd": 20}
    end = by_hook["task.end"]
    assert isinstance(end, hw.TaskEndEvent) and (end.output, end.steps) == ("Refunded 20 USD", 2)


def test_a_journal_is_benched_and_dumped_as_an_events_file(
    capsys: pytest.CaptureFixture[str], spec: Path, journal: Path, tmp_path: Path
) -> None:
    doc = bench_json(capsys, spec, "--events", journal)
    assert [(e["hook"], e["events"]) for e in doc["hooks"]] == [
        ("tool.before", 1),
        ("tool.after", 1),
    ]
    out = tmp_path / "events.jsonl"
    status, stdout, err = bench(capsys, spec, "--events", journal, "--dump-events", out)
    assert (status, stdout) == (0, "") and str(out) in err
    assert [json.loads(line)["hook"] for line in out.read_text("utf-8").splitlines()] == [
        "tool.before",
        "tool.after",
    ]
    timed = [(h, e) for h, e in read_events(journal) if h in ("tool.before", "tool.after")]
    assert read_events(out) == timed
    again = bench_json(capsys, spec, "--events", out)
    assert [(e["hook"], e["events"]) for e in again["hooks"]] == [
        ("tool.before", 1),
        ("tool.after", 1),
    ]


def test_a_broken_journal_line_is_refused(
    capsys: pytest.CaptureFixture[str], spec: Path, journal: Path
) -> None:
    text = journal.read_text("utf-8").splitlines(keepends=True)
    journal.write_text(text[0] + '{"kind": "step", "v": 2}\n' + "".join(text[1:]), "utf-8")
    status, _, err = bench(capsys, spec, "--events", journal)
    assert status == 2 and f"{journal}: line 2 is not a journal line" in err
