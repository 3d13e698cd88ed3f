"""A run suspended in one process, decided with the real CLI in another, resumed in a third:
the approval lives in the spec's SQLite state store, and the tool runs exactly once.

Each step is its own ``python`` process (``crash_worker.py`` for the run, ``python -m
harnessweaver.cli approvals`` for the decision); the refund tool appends a line to a
side-effect file per refund really made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from crash_worker import EFFECTS, RUN_ID, effects

import harnessweaver as hw

WORKER = Path(__file__).with_name("crash_worker.py")
PYTHON_DIR = Path(hw.__file__).parent.parent
SPEC = """\
plugins: {{local: ["crash_worker"]}}
middleware:
  - {{use: loopapp.needs_approval, id: needs_approval}}
{extra}state: {{backend: sqlite, path: {state}}}
approvals: {{expires_after: {expires}}}
"""


class App:
    """One spec, one state file, one journal, one side-effect file, in ``tmp_path``."""

    def __init__(self, tmp_path: Path, *, expires: float = 3600) -> None:
        self.dir = tmp_path
        self.spec = tmp_path / "harness.yaml"
        self.journal = tmp_path / "run.jsonl"
        self.state_file = tmp_path / "run.jsonl.state.json"
        self.write_spec(expires=expires)
        given = os.environ.get("PYTHONPATH")
        paths = [str(WORKER.parent), str(PYTHON_DIR), *([given] if given else [])]
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(paths),
            EFFECTS: str(tmp_path / "effects.txt"),
        }

    def write_spec(self, *, expires: float = 3600, extra: str = "") -> None:
        state = self.dir / "state.sqlite3"
        self.spec.write_text(
            SPEC.format(state=state, expires=expires, extra=extra), encoding="utf-8"
        )

    @property
    def made(self) -> int:
        return effects(self.dir / "effects.txt")

    def worker(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(WORKER), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return answer

    def suspend(self) -> str:
        answer = self.worker("suspend", str(self.spec), str(self.journal), RUN_ID)
        assert answer["exit"] == "suspended" and answer["approval"], answer
        return str(answer["approval"])

    def resume(self, state: str = "-") -> dict[str, Any]:
        return self.worker("resume", str(self.spec), str(self.journal), state)

    def cli(self, verb: str, ident: str, *options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "harnessweaver.cli", "approvals", verb, ident]
        return subprocess.run(
            [*command, "--spec", str(self.spec), *options],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )


def test_suspended_approved_resumed_in_three_processes(tmp_path: Path) -> None:
    app = App(tmp_path)
    ident = app.suspend()
    assert app.resume() == {"agent_error": "approval_pending"}  # not decided yet: still paused
    approved = app.cli("approve", ident, "--role", "finance", "--by", "ana")
    assert approved.returncode == 0, approved.stderr
    done = app.resume()
    assert done["exit"] == "completed", done
    assert done["output"] == "Done: refunded 250.0 USD for order 42"
    assert app.made == 1
    # the same stored state, resumed again: the approval is used
    replay = app.resume(str(app.state_file))
    assert replay == {"refused": "approval_replayed", "approval": ident}
    assert app.made == 1
    decisions = [line for line in hw.read_journal(app.journal) if line.kind == "decision"]
    assert [getattr(line, "approval", None) for line in decisions] == [ident]


def test_denied_with_the_cli(tmp_path: Path) -> None:
    app = App(tmp_path)
    ident = app.suspend()
    denied = app.cli("deny", ident, "--role", "finance", "--reason", "too much")
    assert denied.returncode == 0, denied.stderr
    done = app.resume()
    assert done["exit"] == "completed"
    assert "The approver denied this tool call: too much" in done["output"]
    assert app.made == 0


def test_expired(tmp_path: Path) -> None:
    app = App(tmp_path, expires=0.001)
    ident = app.suspend()  # expired as soon as it is filed, in any process after this one
    late = app.cli("approve", ident, "--role", "finance")
    assert late.returncode == 1 and "approval_expired" in late.stderr + late.stdout
    assert app.resume() == {"refused": "approval_expired", "approval": ident}
    assert app.made == 0


def test_the_wrong_role(tmp_path: Path) -> None:
    app = App(tmp_path)
    ident = app.suspend()
    wrong = app.cli("approve", ident, "--role", "support")
    assert wrong.returncode == 1 and "approval_wrong_role" in wrong.stderr + wrong.stdout
    assert app.resume() == {"agent_error": "approval_pending"}
    assert app.made == 0


def test_changed_arguments(tmp_path: Path) -> None:
    app = App(tmp_path)
    ident = app.suspend()
    assert app.cli("approve", ident, "--role", "finance").returncode == 0
    state = json.loads(app.state_file.read_text(encoding="utf-8"))
    state["pending"]["event"]["call"]["arguments"]["amount_usd"] = 2500
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(state), encoding="utf-8")
    assert app.resume(str(tampered)) == {"refused": "approval_mismatch", "approval": ident}
    assert app.made == 0
    done = app.resume(str(app.state_file))  # the untouched state still has its approval
    assert done["exit"] == "completed" and app.made == 1


@pytest.mark.parametrize("when", ["before the decision", "after the decision"])
def test_another_spec_version(tmp_path: Path, when: str) -> None:
    app = App(tmp_path)
    ident = app.suspend()
    another = "  - {use: harnessweaver.tool_allowlist, id: tools, allow: [refund]}\n"
    if when == "after the decision":
        assert app.cli("approve", ident, "--role", "finance").returncode == 0
        app.write_spec(extra=another)
    else:
        app.write_spec(extra=another)
        late = app.cli("approve", ident, "--role", "finance")
        assert late.returncode == 1 and "approval_spec_changed" in late.stderr + late.stdout
    assert app.resume() == {"refused": "approval_spec_changed", "approval": ident}
    assert app.made == 0
