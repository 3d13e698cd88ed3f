"""``harnessweaver approvals list|show|approve|deny|edit``: the store it finds (the spec's
``state:``, ``--state-file``, the hook command's file), the spec version it decides for,
``show`` printing the whole action, exit statuses 0 / 1 (refused, with the code) / 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import harnessweaver as hw
from harnessweaver.approvals import ApprovalRecord
from harnessweaver.cli import main
from harnessweaver.state import SqliteStore

SPEC = """\
middleware:
  - use: harnessweaver.tool_allowlist
    allow: [refund]
tasks:
  refunds:
    guardrails:
      tool.before:
        - {use: harnessweaver.tool_allowlist, id: task_allow, allow: [refund]}
"""
LONG = "x" * 50_000 + "-the-end"


def event(note: str = "ok") -> dict[str, Any]:
    return {
        "step": 1,
        "tool": {"name": "refund", "description": "", "parameters": {}},
        "call": {"id": "c1", "name": "refund", "arguments": {"amount": 5, "note": note}},
    }


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "harness.yaml"
    path.write_text(SPEC)
    return path


def file(
    spec: Path,
    state: Path,
    *,
    task: str | None = None,
    note: str = "ok",
    role: str | None = "finance",
) -> ApprovalRecord:
    async def go() -> ApprovalRecord:
        harness = hw.load(spec, task=task, open_state=lambda config: SqliteStore(state))
        try:
            return await harness.approvals.file(
                hook="tool.before",
                event=event(note),
                reason="a large\nrefund",
                approver_role=role,
                filed_by="run loop",
            )
        finally:
            await harness.aclose()

    return anyio.run(go)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["approvals", *args])
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_list_show_approve(spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    filed = file(spec, state)
    where = ["--spec", str(spec), "--state-file", str(state)]
    code, out, _ = run(capsys, "list", *where)
    assert code == 0
    assert out.startswith(f"{filed.id}  pending  tool.before  refund  role=finance  expires=")
    assert out.endswith("a large refund\n")  # one line per approval
    code, out, _ = run(capsys, "list", *where, "--format", "json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [filed.id]
    code, out, _ = run(capsys, "show", filed.id, *where)
    assert code == 0
    assert f"id: {filed.id}\nstatus: pending\n" in out
    assert out.split("action:\n", 1)[1] == json.dumps(filed.action, indent=2, sort_keys=True) + "\n"
    code, out, err = run(capsys, "approve", filed.id, *where, "--role", "finance", "--by", "ana")
    assert (code, out, err) == (0, f"approval {filed.id} approved\n", "")
    code, out, _ = run(capsys, "list", *where, "--status", "pending")
    assert (code, out) == (0, "")
    code, out, _ = run(capsys, "show", filed.id, *where, "--format", "json")
    shown = json.loads(out)
    assert shown["status"] == "approved"
    assert shown["decision"]["by"] == "ana"


def test_show_never_truncates(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.db"
    filed = file(spec, state, note=LONG + "\x1b[2J\u202e")
    code, out, _ = run(capsys, "show", filed.id, "--spec", str(spec), "--state-file", str(state))
    assert code == 0
    assert LONG in out
    assert "\x1b" not in out and "\u202e" not in out  # the terminal is not driven by a filing
    assert "\\u001b[2J\\u202e" in out


def test_deny_and_edit(spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    where = ["--spec", str(spec), "--state-file", str(state)]
    first = file(spec, state)
    second = file(spec, state, note="other")
    code, out, _ = run(capsys, "deny", first.id, *where, "--role", "finance", "--reason", "no")
    assert (code, out) == (0, f"approval {first.id} denied\n")
    arguments = tmp_path / "args.json"
    arguments.write_text('{"amount": 2, "note": "smaller"}')
    code, out, _ = run(
        capsys, "edit", second.id, *where, "--role", "finance", "--arguments", f"@{arguments}"
    )
    assert (code, out) == (0, f"approval {second.id} approved with an edit\n")
    code, out, _ = run(capsys, "show", second.id, *where)
    assert out.split("edited:\n", 1)[1] == '{\n  "amount": 2,\n  "note": "smaller"\n}\n'


def test_refusals_exit_1_with_the_code(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.db"
    where = ["--spec", str(spec), "--state-file", str(state)]
    filed = file(spec, state)
    code, _, err = run(capsys, "approve", filed.id, *where)
    assert code == 1
    assert err.startswith("harnessweaver approvals approve: refused: approval_wrong_role: ")
    code, _, err = run(capsys, "edit", filed.id, *where, "--role", "finance", "--arguments", "[1]")
    assert code == 1 and "approval_invalid_edit" in err
    code, _, err = run(capsys, "approve", "ap_0000000000000000_1", *where)
    assert code == 1 and "approval_unknown" in err
    code, _, err = run(capsys, "deny", filed.id, *where, "--role", "finance")
    assert code == 0
    code, _, err = run(capsys, "approve", filed.id, *where, "--role", "finance")
    assert code == 1 and "approval_decided" in err


def test_another_spec_version_is_refused(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.db"
    filed = file(spec, state, task="refunds")
    where = ["--spec", str(spec), "--state-file", str(state)]
    code, _, err = run(capsys, "approve", filed.id, *where, "--role", "finance")  # no --task
    assert code == 1 and "approval_spec_changed" in err
    code, out, _ = run(
        capsys, "approve", filed.id, *where, "--task", "refunds", "--role", "finance"
    )
    assert code == 0 and "approved" in out


def test_usage_errors_exit_2(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--spec", str(spec), "--state-file", str(tmp_path / "s.db")]
    assert run(capsys, "approve", *where)[0] == 2  # no ID
    assert run(capsys, "list")[0] == 2  # no --spec
    assert run(capsys, "frobnicate", *where)[0] == 2
    code, _, err = run(capsys, "edit", "ap_0000000000000000_1", *where, "--arguments", "{nope")
    assert code == 2 and "not JSON" in err
    code, _, err = run(capsys, "edit", "ap_0000000000000000_1", *where, "--arguments", "@/no/such")
    assert code == 2 and "FileNotFoundError" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("approvals: {expires_after: 0}\n")
    code, _, err = run(capsys, "list", "--spec", str(bad))
    assert code == 2 and "approvals.expires_after" in err


def test_the_hook_commands_state_file_is_the_default(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    default = tmp_path / "hook" / "state.sqlite3"
    monkeypatch.setenv("HARNESSWEAVER_HOOK_STATE", str(default))
    default.parent.mkdir()
    filed = file(spec, default)
    code, out, _ = run(capsys, "list", "--spec", str(spec))
    assert code == 0 and out.startswith(filed.id)


def test_the_specs_state_is_the_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(SPEC + "state: {backend: sqlite, path: shared.db}\n")
    filed = file(spec, tmp_path / "shared.db")
    code, out, _ = run(capsys, "list", "--spec", str(spec), "--state-file", str(tmp_path / "x.db"))
    assert code == 0 and out.startswith(filed.id)  # the spec's state: wins over --state-file


def test_a_store_down_exits_2(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "not-a-file.db"
    folder.mkdir()  # SQLite cannot open a directory
    code, _, err = run(capsys, "list", "--spec", str(spec), "--state-file", str(folder))
    assert code == 2 and "state store sqlite" in err
