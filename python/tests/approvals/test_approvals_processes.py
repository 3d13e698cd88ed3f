"""Approvals across processes on one SQLite state file: filed in one process, approved with
the real CLI in another, claimed in a third, exactly once; and many processes claiming one
approval at once: exactly one wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("approvals_worker.py")
PYTHON_DIR = Path(__file__).resolve().parents[2]
SPEC = """\
middleware:
  - use: harnessweaver.tool_allowlist
    allow: [refund]
approvals:
  expires_after: 3600
"""


def env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    joined = str(PYTHON_DIR) if not path else f"{PYTHON_DIR}{os.pathsep}{path}"
    return {**os.environ, "PYTHONPATH": joined}


def worker(spec: Path, state: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(spec), str(state), *args],
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnessweaver.cli", "approvals", *args],
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
    )


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "harness.yaml"
    path.write_text(SPEC)
    return path


def test_filed_approved_and_claimed_in_three_processes(spec: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    filed = worker(spec, state, "file")
    approval_id = str(filed["id"])
    assert filed["status"] == "pending"
    assert worker(spec, state, "file") == filed  # another process files the same: one record
    listed = cli("list", "--spec", str(spec), "--state-file", str(state), "--status", "pending")
    assert listed.returncode == 0, listed.stderr
    assert approval_id in listed.stdout
    assert worker(spec, state, "claim", approval_id, "run-a") == {
        "kind": "pending",
        "arguments": {"amount": 5},
    }
    approved = cli(
        "approve", approval_id, "--spec", str(spec), "--state-file", str(state),
        "--role", "finance", "--by", "ana",
    )  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    assert f"approval {approval_id} approved" in approved.stdout
    assert worker(spec, state, "claim", approval_id, "run-a") == {
        "kind": "approved",
        "arguments": {"amount": 5},
    }
    assert worker(spec, state, "claim", approval_id, "run-b") == {"refused": "approval_replayed"}
    again = cli(
        "approve", approval_id, "--spec", str(spec), "--state-file", str(state), "--role", "finance"
    )
    assert again.returncode == 1
    assert "approval_replayed" in again.stderr


def test_concurrent_claims_from_many_processes_one_wins(spec: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    approval_id = str(worker(spec, state, "file")["id"])
    edited = cli(
        "edit", approval_id, "--spec", str(spec), "--state-file", str(state),
        "--role", "finance", "--arguments", '{"amount": 4}',
    )  # fmt: skip
    assert edited.returncode == 0, edited.stderr
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                str(spec),
                str(state),
                "claim",
                approval_id,
                f"c{n}",
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        for n in range(8)
    ]
    go.touch()
    answers = []
    for process in workers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        answers.append(json.loads(out))
    wins = [a for a in answers if a.get("kind") == "approved"]
    assert wins == [{"kind": "approved", "arguments": {"amount": 4}}]
    assert [a for a in answers if a not in wins] == [{"refused": "approval_replayed"}] * 7
