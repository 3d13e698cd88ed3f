"""What the command tells about one's own middleware: the one that does far more work
(hashing 100 KB per call) is the dominant one, a sample event a middleware blocks is said
with who blocked it and what to do, and the table without rich is aligned plain text."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from bench_support import bench, bench_json, write_spec

from harnessweaver.benchcmd.report import fmt_us

HEAVY = """\
  - {use: benchy.light, id: first}
  - {use: benchy.heavy, id: hasher}
  - {use: benchy.light, id: last}
"""
BLOCKED = """\
  - {use: benchy.light, id: first}
  - {use: benchy.blocker, id: stopper}
  - {use: benchy.light, id: last}
"""


def test_the_middleware_doing_the_most_work_dominates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = bench_json(capsys, write_spec(tmp_path, HEAVY), "--hook", "tool.before")
    (entry,) = doc["hooks"]
    assert entry["middleware"] == ["first", "hasher", "last"]
    assert entry["dominant"]["name"] == "hasher" and entry["dominant"]["use"] == "benchy.heavy"
    assert entry["dominant"]["share"] > 0.5
    status, out, _ = bench(capsys, write_spec(tmp_path, HEAVY), "--hook", "tool.before")
    assert status == 0
    assert "tool.before: `hasher` (benchy.heavy) is " in out
    assert "% of the chain's own time" in out


def test_a_blocked_sample_event_is_said_with_who_blocked_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, BLOCKED)
    doc = bench_json(capsys, spec, "--hook", "tool.before")
    assert doc["hooks"][0]["outcomes"] == {"block": 10}
    status, out, _ = bench(capsys, spec)
    assert status == 0
    assert (
        "tool.before: the sample event was blocked by `stopper` (code refunds_off): later "
        "middleware did not run in the emit; time your own events with --events FILE"
    ) in out
    assert "tool.after: the sample event" not in out  # only the hook point that blocked
    events = tmp_path / "events.jsonl"
    assert bench(capsys, spec, "--hook", "tool.before", "--dump-events", events)[0] == 0
    events.write_text(events.read_text("utf-8") * 2, "utf-8")  # the sample event, twice
    status, out, _ = bench(capsys, spec, "--events", events)
    assert status == 0
    assert (
        f"tool.before: 2 of 2 events of {events} were blocked by `stopper` (code refunds_off): "
        "later middleware did not run in their emits; that is what those events cost"
    ) in out


def test_a_guard_that_changes_its_answer_over_the_rounds_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, "  - {use: benchy.quota, id: quota}\n")
    status, out, _ = bench(capsys, spec, "--hook", "tool.before")
    assert status == 0
    assert "tool.before: 10 of 10 timed emits were not let through (block 10) though every " in out
    assert "the sample event was blocked" not in out  # its first emit came through


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
def test_a_progress_bar_goes_to_a_terminal_stderr_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rich: bool
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    if not rich:
        monkeypatch.setitem(sys.modules, "rich", None)
    doc = bench_json(capsys, write_spec(tmp_path, HEAVY))
    assert [entry["hook"] for entry in doc["hooks"]] == ["tool.before", "tool.after"]
    assert err.getvalue()  # drawn there; stdout holds the JSON document alone
    if not rich:
        assert "round 6/6" in err.getvalue()  # 2 hook points, 3 rounds each


def test_without_rich_the_table_is_aligned_plain_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # import rich raises ImportError
    status, out, _ = bench(capsys, write_spec(tmp_path, HEAVY))
    assert status == 0
    table = out.splitlines()[1:5]
    header, rule, *rows = table
    assert header.split("  ")[0] == "hook" and set(rule) == {"-", " "}
    assert [row.split()[0] for row in rows] == ["tool.before", "tool.after"]
    starts = [i for i, c in enumerate(rule) if c == "-" and (i == 0 or rule[i - 1] == " ")]
    columns = ["hook", "middleware", "emit p50", "emit p99", "floor p50", "ratio"]
    assert [header.index(name) for name in columns] == starts[: len(columns)]
    assert "floor = the same middleware" in out


@pytest.mark.parametrize(
    ("ns", "shown"),
    [(912.0, "0.912"), (1234.0, "1.23"), (12000.0, "12.0"), (120000.0, "120"), (1234567.0, "1230")],
)
def test_times_are_shown_in_microseconds_with_3_significant_digits(ns: float, shown: str) -> None:
    assert fmt_us(ns) == shown


def test_a_middleware_that_never_answers_is_refused_not_waited_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The bus cuts ``stuck`` off at its timeout; the floor awaits it bare and would hang:
    the command says so (exit 2) after the one untimed emit, never a hang."""
    spec = write_spec(tmp_path, "  - {use: benchy.light}\n  - {use: benchy.stuck}\n")
    status, out, err = bench(capsys, spec)
    assert (status, out) == (2, "")
    assert "tool.before: `benchy.stuck` did not answer in time on an emit of the event" in err
    assert "(timeout)" in err and "--hook" in err
    status, out, _ = bench(capsys, spec, "--hook", "tool.after")
    assert status == 0 and "benchy.light" in out
