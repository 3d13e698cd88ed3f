"""Durable approvals in the OpenAI Agents SDK adapter (docs/approvals.md): a suspended call
filed in the spec's SQLite store, decided with the CLI, its serialized ``RunState`` resumed in
another process (a real subprocess), where the adapter approves or rejects the call itself.
The refund tool writes a line per run: every test counts them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import agents
from test_langchain_approvals import BEFORE, cli, record, refunds, worker, write_spec

import harnessweaver as hw
from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter
from harnessweaver.adapters.openai_agents.approval import BY
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say
from harnessweaver.approvals import how_to_decide


def waiting(out: dict[str, Any]) -> str:
    [item] = out["interruptions"]
    assert item["arguments"] == {"order": 42, "amount_usd": 250}
    approval = item["approval"]
    assert isinstance(approval, str)
    return approval


def test_a_cli_approval_lets_another_process_resume_the_state_and_run_the_call_once(
    tmp_path: Path,
) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = waiting(worker("openai", "start", tmp_path))
    filed = record(tmp_path, approval)
    assert (filed.status, filed.filed_by, filed.subject) == (
        "pending",
        "openai-agents",
        "run:order-42",
    )
    assert refunds(tmp_path) == 0

    # undecided: the other process's run is interrupted again for the same record
    assert waiting(worker("openai", "resume", tmp_path)) == approval
    assert refunds(tmp_path) == 0

    assert cli(tmp_path, "approve", approval, "--role", "finance").returncode == 0
    done = worker("openai", "resume", tmp_path)
    assert done["interruptions"] == []
    assert done["tools"] == ["refunded 250.0 USD for order 42"]
    assert done["last"] == "Done."
    assert refunds(tmp_path) == 1
    used = record(tmp_path, approval)
    assert used.status == "used"
    assert used.used is not None and used.used.by == "openai-agents order-42 call call_1"


def test_a_cli_denial_rejects_the_call_in_another_process(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = waiting(worker("openai", "start", tmp_path))
    assert cli(tmp_path, "deny", approval, "--role", "finance", "--reason", "no").returncode == 0
    done = worker("openai", "resume", tmp_path)
    assert done["tools"] == ["The approver denied this tool call: no"]
    assert refunds(tmp_path) == 0
    assert record(tmp_path, approval).status == "closed"


def test_a_cli_edit_runs_the_edited_call_once(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = waiting(worker("openai", "start", tmp_path))
    edited = cli(
        tmp_path,
        "edit",
        approval,
        "--arguments",
        '{"order": 42, "amount_usd": 80}',
        "--role",
        "finance",
    )
    assert edited.returncode == 0, edited.stderr
    done = worker("openai", "resume", tmp_path)
    assert done["tools"] == ["refunded 80.0 USD for order 42"]
    assert (tmp_path / "refunds.log").read_text() == "42 80.0\n"


def test_an_approval_for_another_spec_version_is_not_used(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    approval = waiting(worker("openai", "start", tmp_path))
    assert cli(tmp_path, "approve", approval, "--role", "finance").returncode == 0
    write_spec(tmp_path, BEFORE % 200)  # a new spec version before the resume
    again = waiting(worker("openai", "resume", tmp_path))
    assert again != approval  # a new pending ask under the new version
    assert refunds(tmp_path) == 0
    assert record(tmp_path, approval).status == "approved"


# --- in one process: the state's own decision is written to the record --------------------


def local_run(folder: Path) -> tuple[Any, Any, Any, list[float]]:
    ran: list[float] = []

    @agents.function_tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(amount_usd)
        return f"refunded {amount_usd} USD for order {order}"

    harness = hw.load(folder / "harness.yaml")
    adapter = OpenAIAgentsAdapter(harness)
    model = ScriptedModel(
        [[call("refund_payment", {"order": 42, "amount_usd": 250}, "call_1")], [say("Done.")]]
    )
    agent = adapter.guard(agents.Agent(name="shop", tools=[refund_payment], model=model))
    return harness, agent, adapter.new_run(run_id="local-1"), ran


@pytest.mark.parametrize("approve", [True, False])
def test_a_decision_on_the_state_decides_the_record(approve: bool, tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    harness, agent, run, ran = local_run(tmp_path)

    async def go() -> Any:
        result = await run.run(agent, "Refund order 42")
        [item] = result.interruptions
        filed = run.approval(item)
        assert filed is not None and filed.id in how_to_decide(filed)
        state = result.to_state()
        if approve:
            state.approve(item)
        else:
            state.reject(item, rejection_message="The manager said no.")
        await run.run(agent, state)
        return await harness.approvals.get(filed.id)

    kept = asyncio.run(go())
    assert ran == ([250.0] if approve else [])
    assert kept.status == ("used" if approve else "closed")
    assert kept.decision is not None
    assert (kept.decision.approved, kept.decision.by) == (approve, BY)


def test_a_store_that_is_down_rejects_the_call(tmp_path: Path) -> None:
    write_spec(tmp_path, BEFORE % 100)
    harness, agent, run, ran = local_run(tmp_path)

    async def go() -> Any:
        result = await run.run(agent, "Refund order 42")
        state = result.to_state()
        state.approve(result.interruptions[0])
        await harness.store.close()
        return await run.run(agent, state)

    result = asyncio.run(go())
    assert ran == []  # fail closed: never "go on"
    outputs = [str(i.output) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]
    assert len(outputs) == 1
    assert outputs[0].startswith("The harness refused this tool call: ")
    assert "could not answer" in outputs[0]
