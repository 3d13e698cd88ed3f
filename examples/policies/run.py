"""Tool policies in Cedar: one call after another through examples/policies/harness.yaml.

    python examples/policies/run.py

Each line is a call (who, which tool, its arguments) and what the policy set decided. The
user comes from the run's envelope attributes (``user``), as a harness would pass it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

import harnessweaver as hw

HERE = Path(__file__).resolve().parent

CALLS: list[tuple[str | None, str, dict[str, Any]]] = [
    ("alice", "process_refund", {"order_id": "o-1042", "amount_cents": 12000}),
    ("alice", "process_refund", {"order_id": "o-1043", "amount_cents": 90000}),
    ("bob", "process_refund", {"order_id": "o-1043", "amount_cents": 90000}),
    ("mallory", "get_order", {"order_id": "o-1042"}),
    ("alice", "process_refund", {"order_id": "o-1044", "amount_cents": 120.5}),
    (None, "get_order", {"order_id": "o-1042"}),
    ("dana", "search_code", {"query": "refund"}),
    ("dana", "push_branch", {"repo": "shop", "branch": "fix-refunds"}),
    ("dana", "push_branch", {"repo": "shop", "branch": "main", "force": True}),
    ("alice", "push_branch", {"repo": "shop", "branch": "fix-refunds"}),
    ("dana", "delete_repository", {"repo": "shop"}),
]
"""(user, tool, arguments): ``None`` is a run without a user (the principal is then
``Agent::"anonymous"``)."""


def shown(outcome: hw.Outcome) -> str:
    kind = type(outcome).__name__.lower()
    code = getattr(outcome, "code", None)
    role = getattr(outcome, "approver_role", None)
    return kind + (f" {code}" if code else "") + (f" (approver: {role})" if role else "")


async def main() -> None:
    harness = hw.load(HERE / "harness.yaml")
    for user, tool, arguments in CALLS:
        attributes = {"user": user} if user else {}
        ctx = hw.RunContext(hw.Envelope(run_id="policies", attributes=attributes))
        event = hw.ToolCallEvent(
            step=1,
            tool=hw.ToolSpec(name=tool),
            call=hw.ToolCall(id="c1", name=tool, arguments=arguments),
        )
        result = await harness.bus.emit("tool.before", event, ctx)
        print(f"{user or '(no user)':9} {tool:17} {shown(result.outcome)}")


if __name__ == "__main__":
    anyio.run(main)
