"""Decisions on a suspended call inside real LangChain/LangGraph (issue 32).

- A decision naming no role never approves a ``Suspend`` that names an ``approver_role``:
  ``hw.Decision.approve()`` and ``{"decision": "approve"}`` ran the refund before issue 31's
  fix (915bc8c; checked against the adapter of 915bc8c^: both tests below failed there).
- LangChain's own human-in-the-loop answer (``HumanInTheLoopMiddleware``'s ``{"decisions":
  [{"type": "approve" | "edit" | "reject" | "respond", ...}]}``, or a bare decision) is read
  beside ours, with the approver's ``"role"`` beside ``"type"``; the interrupt carries its
  ``action_requests`` and ``review_configs``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware, ScriptedChatModel

HARNESS = """\
plugins:
  local: ["policies"]
middleware:
  - {use: harnessweaver.tool_allowlist, id: refunds_only, allow: [refund_payment]}
  - {use: shop.big_refunds_wait}
"""

POLICY = """\
import harnessweaver as hw


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def big_refunds_wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.call.arguments.get("amount_usd", 0) > 100:
        return hw.Suspend(reason="refunds over 100 USD need approval", approver_role="finance")
    return None


plugin = hw.Plugin(namespace="shop", version="1.0.0", middleware=[big_refunds_wait])
"""


class Refunds:
    def __init__(self, harness: hw.Harness) -> None:
        self.ran: list[tuple[int, float]] = []

        @tool
        def refund_payment(order: int, amount_usd: float) -> str:
            """Refund an order."""
            self.ran.append((order, amount_usd))
            return f"refunded {amount_usd} USD for order {order}"

        model = ScriptedChatModel(
            script=[
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "refund_payment",
                            "args": {"order": 42, "amount_usd": 250},
                            "id": "c1",
                        }
                    ],
                ),
                AIMessage(content="Done."),
            ]
        )
        self.middleware = HarnessMiddleware(harness)
        self.agent = create_agent(
            model, [refund_payment], middleware=[self.middleware], checkpointer=InMemorySaver()
        )
        self.config: Any = {"configurable": {"thread_id": "hitl-1"}}

    def start(self) -> dict[str, Any]:
        asked = {"messages": [{"role": "user", "content": "Refund order 42: 250 USD"}]}
        return self.agent.invoke(asked, self.config)  # type: ignore[no-any-return]

    def resume(self, value: Any) -> dict[str, Any]:
        return self.agent.invoke(Command(resume=value), self.config)  # type: ignore[no-any-return]


@pytest.fixture
def refunds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Refunds:
    (tmp_path / "policies.py").write_text(POLICY, encoding="utf-8")
    (tmp_path / "harness.yaml").write_text(HARNESS, encoding="utf-8")
    monkeypatch.delitem(sys.modules, "policies", raising=False)
    return Refunds(hw.load(tmp_path / "harness.yaml"))


def waiting(result: dict[str, Any]) -> dict[str, Any]:
    [pause] = result["__interrupt__"]
    return pause.value  # type: ignore[no-any-return]


def tool_texts(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize(
    "roleless",
    [hw.Decision.approve(), {"decision": "approve"}, {"decisions": [{"type": "approve"}]}],
    ids=["hw.Decision", "ours", "langchain"],
)
def test_a_decision_naming_no_role_does_not_run_the_refund(refunds: Refunds, roleless: Any) -> None:
    first = waiting(refunds.start())
    assert first["approver_role"] == "finance"
    after = refunds.resume(roleless)
    assert refunds.ran == []  # issue 31/32: the role-less approval ran the refund
    again = waiting(after)
    assert again["refused"] == (
        "the decision naming no role was refused: this call waits for 'finance'"
    )
    done = refunds.resume({"decisions": [{"type": "approve", "role": "finance"}]})
    assert refunds.ran == [(42, 250.0)]
    assert done["messages"][-1].content == "Done."


def test_the_interrupt_carries_langchains_hitl_request(refunds: Refunds) -> None:
    payload = waiting(refunds.start())
    assert payload["action_requests"] == [
        {
            "name": "refund_payment",
            "args": {"order": 42, "amount_usd": 250},
            "description": "refunds over 100 USD need approval",
        }
    ]
    assert payload["review_configs"] == [
        {"action_name": "refund_payment", "allowed_decisions": ["approve", "edit", "reject"]}
    ]


@pytest.mark.parametrize(
    "decision",
    [
        {"decisions": [{"type": "approve"}], "role": "finance"},  # the role beside decisions
        {"type": "approve", "role": "finance"},  # per_call mode's bare decision
    ],
)
def test_langchains_approve_runs_the_call_once(refunds: Refunds, decision: Any) -> None:
    refunds.start()
    done = refunds.resume(decision)
    assert refunds.ran == [(42, 250.0)]
    assert tool_texts(done) == ["refunded 250.0 USD for order 42"]


def test_langchains_reject_is_a_denial_the_model_reads(refunds: Refunds) -> None:
    refunds.start()
    done = refunds.resume(
        {"decisions": [{"type": "reject", "message": "too much", "role": "finance"}]}
    )
    assert refunds.ran == []
    assert tool_texts(done) == ["The approver denied this tool call: too much"]


def test_langchains_respond_is_a_denial_with_its_message(refunds: Refunds) -> None:
    refunds.start()
    done = refunds.resume({"type": "respond", "message": "refunded by hand", "role": "finance"})
    assert refunds.ran == []
    assert tool_texts(done) == ["The approver denied this tool call: refunded by hand"]


def test_langchains_edit_runs_the_edited_arguments_after_the_chain(refunds: Refunds) -> None:
    refunds.start()
    edit = {
        "type": "edit",
        "edited_action": {"name": "refund_payment", "args": {"order": 42, "amount_usd": 90}},
        "role": "finance",
    }
    done = refunds.resume({"decisions": [edit]})
    assert refunds.ran == [(42, 90.0)]
    assert tool_texts(done) == ["refunded 90.0 USD for order 42"]


def test_langchains_edit_that_renames_the_call_is_refused(refunds: Refunds) -> None:
    refunds.start()
    edit = {
        "type": "edit",
        "edited_action": {"name": "wire_money", "args": {"order": 42, "amount_usd": 90}},
        "role": "finance",
    }
    again = waiting(refunds.resume({"decisions": [edit]}))
    assert refunds.ran == []
    assert again["refused"].startswith("the edit was refused")
    assert "tool_unchanged" in again["refused"] or "name" in again["refused"]


@pytest.mark.parametrize(
    "value",
    [
        {"decisions": []},
        {"decisions": [{"type": "approve", "role": "finance"}] * 2},
        {"decisions": [{"type": "maybe", "role": "finance"}]},
        {"decisions": "approve"},
    ],
)
def test_an_unreadable_langchain_answer_is_the_adapters_denial(
    refunds: Refunds, value: Any
) -> None:
    refunds.start()
    done = refunds.resume(value)
    assert refunds.ran == []
    [text] = tool_texts(done)
    assert text.startswith("The approver denied this tool call: ")
