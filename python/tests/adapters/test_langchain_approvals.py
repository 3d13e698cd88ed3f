"""Durable approvals in the LangChain adapter (docs/approvals.md): a pause filed in the spec's
SQLite store, decided with the CLI, resumed in another process (a real subprocess over a
checkpointer that survives it). The refund tool writes a line per run: every test counts them.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_langchain import REFUND, ScriptedChat, Shop

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware
from harnessweaver.adapters.langchain.approval import BY
from harnessweaver.approvals import ApprovalRecord

HERE = Path(__file__).resolve().parent
PYTHON = HERE.parents[1]
WORKER = HERE / "approvals_worker.py"
BEFORE = "{use: shop.big_refunds, id: big_refunds, max_auto_usd: %s}"
AFTER = "{use: shop.look_at_result, id: look}"


def write_spec(folder: Path, rule: str) -> Path:
    shutil.copy(HERE / "hw_approvals_plugin.py", folder / "hw_approvals_plugin.py")
    spec = folder / "harness.yaml"
    spec.write_text(
        'plugins:\n  local: ["hw_approvals_plugin"]\n'
        "state: {backend: sqlite, path: state.db}\n"
        f"middleware:\n  - {rule}\n"
    )
    return spec


def env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(PYTHON)}


def worker(framework: str, phase: str, folder: Path, resume: Any = None) -> dict[str, Any]:
    argv = [sys.executable, str(WORKER), framework, phase, str(folder)]
    if resume is not None:
        argv.append(json.dumps(resume))
    done = subprocess.run(argv, capture_output=True, text=True, env=env(), timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def cli(folder: Path, verb: str, approval: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "harnessweaver.cli", "approvals", verb, approval]
    argv += ["--spec", str(folder / "harness.yaml"), *extra]
    return subprocess.run(argv, capture_output=True, text=True, env=env(), timeout=60)


def refunds(folder: Path) -> int:
    log = folder / "refunds.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def record(folder: Path, approval: str) -> ApprovalRecord:
    async def read() -> ApprovalRecord:
        harness = hw.load(folder / "harness.yaml")
        try:
            return await harness.approvals.get(approval)
        finally:
            await harness.aclose()

    return asyncio.run(read())


def paused(out: dict[str, Any]) -> dict[str, Any]:
    [value] = out["interrupts"]
    assert isinstance(value, dict)
    return value


def test_a_pause_is_filed_and_the_cli_approval_runs_the_call_once_in_another_process(
    tmp_path: Path,
) -> None:
    write_spec(tmp_path, BEFORE % 100)
    first = paused(worker("langchain", "start", tmp_path))
    approval = first["approval"]
    assert approval in first["how_to_decide"]
    assert "role finance" in first["how_to_decide"]
    filed = record(tmp_path, approval)
    assert (filed.status, filed.filed_by) == ("pending", "langchain")
    assert filed.subject == "thread:order-42"
    assert filed.action == {
        "hook": "tool.before",
        "tool": "refund_payment",
        "arguments": {"order": 42, "amount_usd": 250},
    }
    assert refunds(tmp_path) == 0

    # no decision yet: the other process stays paused on the same record
    again = paused(worker("langchain", "resume", tmp_path))
    assert again["approval"] == approval
    assert refunds(tmp_path) == 0

    decided = cli(tmp_path, "approve", approval, "--role", "finance", "--by", "ana")
    assert decided.returncode == 0, decided.stderr
    done = worker("langchain", "resume", tmp_path)
    assert done["interrupts"] == []
    assert done["tools"] == ["refunded 250.0 USD for order 42"]
    assert done["last"] == "Done."
    assert refunds(tmp_path) == 1
    used = record(tmp_path, approval)
    assert used.status == "used"
    assert used.used is not None and used.used.by.startswith("langchain order-42")

    # the record is single use: deciding it again is refused
    replay = cli(tmp_path, "approve", approval, "--role", "finance")
    assert replay.returncode == 1
    assert "approval_replayed" in replay.stdout + replay.stderr


def test_a_cli_denial_refuses_the_call_in_another_process(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = paused(worker("langchain", "start", tmp_path))["approval"]
    decided = cli(tmp_path, "deny", approval, "--role", "finance", "--reason", "too much")
    assert decided.returncode == 0, decided.stderr
    done = worker("langchain", "resume", tmp_path)
    assert done["tools"] == ["The approver denied this tool call: too much"]
    assert refunds(tmp_path) == 0
    assert record(tmp_path, approval).status == "closed"


def test_the_first_decision_stands_over_a_later_resume_value(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = paused(worker("langchain", "start", tmp_path))["approval"]
    assert cli(tmp_path, "deny", approval, "--role", "finance", "--reason", "no").returncode == 0
    done = worker("langchain", "resume", tmp_path, {"decision": "approve", "role": "finance"})
    assert done["tools"] == ["The approver denied this tool call: no"]
    assert refunds(tmp_path) == 0


def test_a_pause_after_the_tool_reuses_its_result_and_never_runs_it_twice(
    tmp_path: Path,
) -> None:
    write_spec(tmp_path, AFTER)
    first = paused(worker("langchain", "start", tmp_path))
    assert first["hook"] == "tool.after"
    assert refunds(tmp_path) == 1  # the tool ran before the pause
    filed = record(tmp_path, first["approval"])
    assert filed.action["result"]["output"] == "refunded 250.0 USD for order 42"
    assert cli(tmp_path, "approve", first["approval"]).returncode == 0
    done = worker("langchain", "resume", tmp_path)
    assert done["tools"] == ["refunded 250.0 USD for order 42"]
    assert done["last"] == "Done."
    assert refunds(tmp_path) == 1  # not again in the other process
    assert record(tmp_path, first["approval"]).status == "used"


def test_an_approval_for_another_spec_version_is_not_used(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = paused(worker("langchain", "start", tmp_path))["approval"]
    assert cli(tmp_path, "approve", approval, "--role", "finance").returncode == 0
    write_spec(tmp_path, BEFORE % 200)  # a new spec version before the resume
    again = paused(worker("langchain", "resume", tmp_path))
    assert again["approval"] != approval  # a new pending ask, bound to the new version
    assert record(tmp_path, again["approval"]).status == "pending"
    assert refunds(tmp_path) == 0
    assert record(tmp_path, approval).status == "approved"  # unused: not this version's


# --- in one process: Command(resume=...) decides the record ---------------------------------


class Local:
    def __init__(self, mode: str, folder: Path) -> None:
        self.mode = mode
        self.harness = hw.load(folder / "harness.yaml")
        self.shop = Shop()
        self.middleware = HarnessMiddleware(self.harness)
        self.agent = create_agent(
            ScriptedChat(messages=iter([REFUND, "Done."])),
            [self.shop.refund_payment],
            middleware=[self.middleware],
            checkpointer=InMemorySaver(),
        )
        self.config: Any = {"configurable": {"thread_id": "thread-7"}}

    def go(self, value: Any) -> dict[str, Any]:
        if self.mode == "sync":
            return self.agent.invoke(value, self.config)  # type: ignore[no-any-return]
        return asyncio.run(self.agent.ainvoke(value, self.config))  # type: ignore[no-any-return]

    def book(self, approval: str) -> ApprovalRecord:
        return asyncio.run(self.harness.approvals.get(approval))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_resume_value_in_the_same_process_decides_the_record(mode: str, tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    local = Local(mode, tmp_path)
    waiting = local.go({"messages": [{"role": "user", "content": "Refund order 42"}]})
    approval = waiting["__interrupt__"][0].value["approval"]
    wrong = local.go(Command(resume={"decision": "approve", "role": "sales"}))
    assert "refused" in wrong["__interrupt__"][0].value
    assert local.book(approval).status == "pending"  # a refused answer decides nothing
    done = local.go(Command(resume={"decision": "approve", "role": "finance"}))
    assert local.shop.refunds == [(42, 250.0)]
    assert [m.text for m in done["messages"] if isinstance(m, ToolMessage)] == [
        "refunded 250.0 USD for order 42"
    ]
    kept = local.book(approval)
    assert kept.status == "used"
    assert kept.decision is not None
    assert (kept.decision.by, kept.decision.role) == (BY, "finance")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_edit_in_the_same_process_is_the_record_s_decision(mode: str, tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    local = Local(mode, tmp_path)
    waiting = local.go({"messages": [{"role": "user", "content": "Refund order 42"}]})
    approval = waiting["__interrupt__"][0].value["approval"]
    edit = {"decision": "edit", "arguments": {"order": 42, "amount_usd": 90}, "role": "finance"}
    local.go(Command(resume=edit))
    assert local.shop.refunds == [(42, 90.0)]  # under the rule's bound: the chain admits it
    kept = local.book(approval)
    assert kept.status == "used"
    assert kept.decision is not None and kept.decision.edited == {"order": 42, "amount_usd": 90}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_store_that_is_down_refuses_the_call(mode: str, tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    local = Local(mode, tmp_path)
    local.go({"messages": [{"role": "user", "content": "Refund order 42"}]})
    asyncio.run(local.harness.store.close())
    done = local.go(Command(resume={"decision": "approve", "role": "finance"}))
    assert local.shop.refunds == []  # fail closed: never "go on"
    [message] = [m for m in done["messages"] if isinstance(m, ToolMessage)]
    assert message.text.startswith("The harness refused this tool call: ")
    assert "could not answer" in message.text
