"""The help desk's own middleware: a guard that refuses writes to the database, and a rule
that refunds above an amount wait for a support lead."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import harnessweaver as hw

_READING = re.compile(r"\s*(SELECT|WITH)\b", re.IGNORECASE)
_FIRST_WORD = re.compile(r"\s*(\w+)")


@hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="1s")
async def read_only_sql(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """``query_db`` may read the shop's data, never change it: anything but one SELECT is
    refused. The tool does not run; the model reads the refusal and its reason."""
    if event.tool.name != "query_db":
        return None
    sql = str(event.call.arguments.get("sql", ""))
    if _READING.match(sql) and ";" not in sql.rstrip().rstrip(";"):
        return None
    verb = _FIRST_WORD.match(sql)
    what = verb.group(1).upper() if verb else "this"
    return hw.Block(
        reason=f"query_db is read-only: a {what} statement would change the shop's data; "
        "ask a person to make that change",
        code="write_sql",
    )


class RefundApprovalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_auto_usd: float = Field(gt=0)
    approver_role: str = "support_lead"


@hw.middleware(
    hooks=["tool.before"],
    fail_mode="closed",
    config=RefundApprovalSettings,
    sample={"max_auto_usd": 100},
)
class RefundApproval:
    """Refunds over ``max_auto_usd`` wait for a person in ``approver_role``: ``Suspend``."""

    def __init__(self, config: RefundApprovalSettings) -> None:
        self.max_auto_usd = config.max_auto_usd
        self.approver_role = config.approver_role

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.tool.name != "issue_refund":
            return None
        asked: Any = event.call.arguments.get("amount_usd", 0)
        try:  # read the amount as the tool will: its arguments are validated in lax mode,
            amount = float(asked)  # so "240" is 240 USD too
        except (TypeError, ValueError):
            return None  # not a number: the tool refuses such arguments itself
        if amount <= self.max_auto_usd:
            return None
        return hw.Suspend(
            reason=f"refunds over {self.max_auto_usd:g} USD need approval",
            approver_role=self.approver_role,
            code="refund_approval",
        )
