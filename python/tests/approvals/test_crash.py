"""kill -9 at 120 points between the ask and the answer: after the approval the tool runs
exactly once, never twice, never without it.

A run suspends at a refund over 100 USD and files its approval in an SQLite state store,
journaling as it goes. ``crash_worker.py sweep`` (two of them, side by side) first measures an
uncrashed run: the calls of harnessweaver's Python functions from the run's first emit to its
end. Then, for each of 120 points spread evenly over that span, a process runs the same run
and SIGKILLs itself at that call; then, each in a process of its own: recovery from the
journal (``hw.recover``, resumed until the run is suspended again, or run anew when the
journal holds no line: filing is idempotent per binding), the real ``harnessweaver approvals
approve`` CLI, the resume that claims the approval, and a replay of the suspended state.
Processes are forked from a warmed worker, so each starts in milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import crash_worker
import pytest

import harnessweaver as hw

POINTS = 120
SHARDS = 2
WORKER = Path(crash_worker.__file__)
SPEC = """\
plugins: {local: ["crash_worker"]}
middleware:
  - {use: loopapp.needs_approval, id: needs_approval}
state: {backend: sqlite, path: STATE_PATH}
approvals: {expires_after: 3600}
"""


def environment() -> dict[str, str]:
    paths = [str(WORKER.parent), str(Path(hw.__file__).parent.parent)]
    given = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([given] if given else [])])}


def sweep(tmp_path: Path) -> list[dict[str, Any]]:
    """Every shard's answer; the shards run side by side."""
    running = []
    for shard in range(SHARDS):
        where = tmp_path / f"shard-{shard}"
        where.mkdir()
        (where / "harness.yaml").write_text(SPEC, encoding="utf-8")
        command = [sys.executable, str(WORKER), "sweep", str(where), str(POINTS)]
        running.append(
            subprocess.Popen(
                [*command, str(shard), str(SHARDS)],
                stdout=subprocess.PIPE,
                env=environment(),
                text=True,
            )
        )
    answers = []
    for process in running:
        out, _ = process.communicate(timeout=900)
        assert process.returncode == 0, out
        answers.append(json.loads(out.strip().splitlines()[-1]))
    return answers


def check(point: dict[str, Any]) -> None:
    at = point["at"]
    assert point["killed"], f"point {at}: the run was not killed"
    assert point["effects_after_crash"] == 0, f"point {at}: the tool ran before approval"
    recovered = point["recover"]
    assert recovered.get("exit") == "suspended", (at, recovered)
    ident = recovered["approval"]
    assert ident is not None, (at, recovered)
    assert recovered["pending"] == [ident], f"point {at}: filed twice {recovered['pending']}"
    assert point["effects_before_approval"] == 0, f"point {at}: the tool ran before approval"
    assert point["approve"] == {"status": 0}, (at, point["approve"])
    assert point["resume"]["exit"] == "completed", (at, point["resume"])
    assert point["resume"]["output"] == "Done: refunded 250.0 USD for order 42"
    assert point["replay"] == {"refused": "approval_replayed", "approval": ident}, at
    assert point["effects"] == 1, f"point {at}: the tool ran {point['effects']} times"


def situation(point: dict[str, Any]) -> str:
    """What the kill left: the journal's lines and whether the record was filed."""
    left = point["recover"]["left"]
    return f"journal {'+'.join(left['journal']) or '(none)'}, records {left['records']}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the sweep forks its processes (POSIX)")
def test_a_kill_anywhere_between_the_ask_and_the_answer(tmp_path: Path) -> None:
    answers = sweep(tmp_path)
    spans = {answer["calls"] for answer in answers}
    assert len(spans) == 1, f"the shards measured different spans {spans}"
    points = [point for answer in answers for point in answer["points"]]
    assert len(points) == POINTS == len({point["at"] for point in points})
    (span,) = spans
    assert {point["at"] for point in points} >= {1, span}  # the whole span, ends included
    for point in points:
        check(point)
    seen: dict[str, int] = {}
    for point in points:
        seen[situation(point)] = seen.get(situation(point), 0) + 1
    print(f"\n{len(points)} kill points over a span of {span} calls: {seen}")
    # every window was hit: before any line, after the start line before and after the
    # filing, and after the end line
    assert {
        "journal (none), records 0",
        "journal start, records 0",
        "journal start, records 1",
        "journal start+end, records 1",
    } <= set(seen), seen
