"""examples/agent runs offline with one command, prints what its README shows, and leaves a
journal and a trace that hold the blocked call, the suspension and its approval, and the
redaction: and no exception message, and none of the customer's personal data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from checkout import require_checkout

import harnessweaver as hw

ROOT = require_checkout()
EXAMPLE = ROOT / "examples" / "agent"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
PERSONAL_DATA = ("dana.whitfield@example.com", "+44 20 7946 0958", "4111 1111 1111 1111")


class Ran:
    def __init__(self, out: Path, stdout: str) -> None:
        self.out = out
        self.stdout = stdout
        self.journal = hw.read_journal(out / "support-1042.jsonl")
        self.records: list[dict[str, Any]] = list(
            hw.Trace.read_jsonl(out / "support-1042.trace.jsonl")
        )

    def by(self, middleware: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("middleware") == middleware]

    def steps(self) -> dict[int, Any]:
        return {line.step: line for line in self.journal if line.kind == "step"}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    out = (tmp_path_factory.mktemp("agent") / "runs").resolve()
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return Ran(out, done.stdout)


def test_run_py_prints_what_the_readme_shows(ran: Ran) -> None:
    found = re.search(r"It prints.*?```text\n(.*?)```", README, re.DOTALL)
    assert found is not None, "no ```text block after 'It prints' in examples/agent/README.md"
    assert ran.stdout.replace(str(ran.out), "examples/agent/runs") == found.group(1)


def test_the_journal_holds_both_segments(ran: Ran) -> None:
    kinds = [line.kind for line in ran.journal]
    assert kinds == ["start", "step", "step", "end", "decision", "step", "step", "end"]
    assert len(ran.records) > 0 and (ran.out / "support-1042.state.json").is_file()


def test_the_dangerous_call_is_blocked_and_the_model_reads_why(ran: Ran) -> None:
    step = ran.steps()[2]
    (call,) = step.action.response.message.tool_calls
    assert (call.name, call.arguments) == (
        "query_db",
        {"sql": "DELETE FROM orders WHERE id = 1043"},
    )
    (reply,) = step.observation
    assert reply.content == (
        "The harness refused this tool call: query_db is read-only: a DELETE statement would "
        "change the shop's data; ask a person to make that change"
    )
    (block,) = [r for r in ran.by("read_only_sql") if r["outcome"] == "block"]
    assert (block["hook"], block["code"]) == ("tool.before", "write_sql")
    # the tool did not run: no tool.after for that call, and the order is still there
    (suspend,) = [r for r in ran.by("refund_approval") if r["outcome"] == "suspend"]
    tool_afters = sorted({r["emit"] for r in ran.records if r["hook"] == "tool.after"})
    assert len(tool_afters) == 2  # lookup_order's and, once approved, issue_refund's
    assert tool_afters[0] < block["emit"] < suspend["emit"] < tool_afters[1]
    assert "order 1043 is still 'paid': the DELETE never ran" in ran.stdout


def test_the_refund_is_suspended_then_approved_and_the_run_completes(ran: Ran) -> None:
    suspended, completed = (line for line in ran.journal if line.kind == "end")
    assert suspended.exit.model_dump(exclude_none=True) == {
        "exit_reason": "suspended",
        "hook": "tool.before",
        "reason": "refunds over 100 USD need approval",
        "code": "refund_approval",
        "approver_role": "support_lead",
    }
    pending = suspended.state.pending
    assert pending is not None and pending.call is not None
    assert (pending.approver_role, pending.call.name) == ("support_lead", "issue_refund")
    assert pending.call.arguments["amount_usd"] == 240
    (decision,) = (line for line in ran.journal if line.kind == "decision")
    assert decision.decision == hw.Decision.approve(role="support_lead")
    (reply,) = ran.steps()[3].observation
    assert json.loads(reply.content) == {"refund": "R-1", "order": 1042, "amount_usd": 240.0}
    assert completed.exit.exit_reason == "completed" and completed.steps == 4
    assert str(completed.output).startswith("I refunded 240 USD for order 1042")
    # approved, the refund's chain is not asked again: refund_approval answered lookup_order's
    # call and the refund's once (query_db's chain stopped at read_only_sql's Block before it)
    assert [r["outcome"] for r in ran.by("refund_approval")] == ["continue", "suspend"]
    # one task.start for the task, one task.end per segment; emit numbers go on
    hooks = [r["hook"] for r in ran.records if r["kind"] == "hook"]
    assert (hooks.count("task.start"), hooks.count("task.end")) == (1, 2)
    assert sorted({r["emit"] for r in ran.records}) == list(range(1, len(hooks) + 1))


def test_personal_data_is_redacted_by_a_modified_continue(ran: Ran) -> None:
    (reply,) = ran.steps()[1].observation
    looked_up = json.loads(reply.content)
    assert looked_up["customer"] == "Dana Whitfield"
    assert (looked_up["email"], looked_up["phone"], looked_up["card_on_file"]) == (
        "[redacted:email]",
        "[redacted:phone]",
        "[redacted:credit_card]",
    )
    modified = [r for r in ran.by("agent_guards.redact_pii") if r["modified"]]
    assert [(r["hook"], r["outcome"]) for r in modified] == [("tool.after", "continue")]
    for name in ("support-1042.jsonl", "support-1042.trace.jsonl", "support-1042.state.json"):
        text = (ran.out / name).read_text(encoding="utf-8")
        assert not [data for data in PERSONAL_DATA if data in text], name


def test_the_files_hold_no_failure_and_no_exception_message(ran: Ran) -> None:
    assert {r["kind"] for r in ran.records} == {"outcome", "hook"}
    assert not [r for r in ran.records if "error" in r or "failure" in r]
    for line in ran.journal:
        if line.kind == "end":
            assert line.exit.error is None
    journal = (ran.out / "support-1042.jsonl").read_text(encoding="utf-8")
    assert "Traceback" not in journal and "Error" not in journal
