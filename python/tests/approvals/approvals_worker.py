"""A separate process of the approvals tests: load the spec on an SQLite state file, then
``file`` an approval or ``claim`` it, and print the outcome as one JSON line.

    python approvals_worker.py SPEC STATE_FILE file
    python approvals_worker.py SPEC STATE_FILE claim ID CONSUMER [GO_FILE]

With GO_FILE, ``claim`` waits until that file exists (every worker starts, then all claim at
once)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import harnessweaver as hw
from harnessweaver.approvals import ApprovalRefused
from harnessweaver.state import SqliteStore

EVENT = {
    "step": 1,
    "tool": {"name": "refund", "description": "", "parameters": {}},
    "call": {"id": "call-1", "name": "refund", "arguments": {"amount": 5}},
}


async def main(spec: str, state: str, action: str, rest: list[str]) -> dict[str, object]:
    harness = hw.load(spec, open_state=lambda config: SqliteStore(state))
    try:
        book = harness.approvals
        if action == "file":
            record = await book.file(
                hook="tool.before",
                event=EVENT,
                reason="a large refund",
                approver_role="finance",
                filed_by="run loop",
            )
            return {"id": record.id, "status": record.status}
        approval_id, consumer = rest[0], rest[1]
        if len(rest) > 2:
            while not Path(rest[2]).exists():
                time.sleep(0.005)
        try:
            verdict = await book.claim(
                approval_id, hook="tool.before", event=EVENT, consumer=consumer
            )
        except ApprovalRefused as exc:
            return {"refused": exc.code}
        return {"kind": verdict.kind, "arguments": verdict.event["call"]["arguments"]}
    finally:
        await harness.aclose()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))))
