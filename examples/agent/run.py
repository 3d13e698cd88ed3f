"""The help desk's agent, offline: one run that is refused a tool call, has personal data
redacted, is suspended for approval and resumed, and leaves a journal and a trace behind.

    python examples/agent/run.py [--out DIR]

The model is a ScriptedProvider (no network, no key): its four answers are the SCRIPT below,
and everything else is real: the harness is loaded from harness.yaml, the tools run on an
in-memory SQLite shop, every call goes through the bus. The journal and the bus trace go to
DIR (default: examples/agent/runs); the summary at the end is read back from those files.
It works from any directory: it puts its own directory on sys.path (for the helpdesk package).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from helpdesk.shop import Shop  # noqa: E402

import harnessweaver as hw  # noqa: E402

S = hw.ScriptedProvider
PRICING = hw.Pricing(input_per_million=3.0, output_per_million=15.0)
APPROVER = "support_lead"

SYSTEM = "You are the shop's support agent. Use the tools; be brief."
TASK = (
    "Dana Whitfield writes: my espresso machine, order 1042, arrived with a cracked water "
    "tank. And I was charged twice: order 1043 is the same machine. Please refund the broken "
    "one and get rid of the duplicate."
)
PERSONAL_DATA = (
    "email dana.whitfield@example.com, phone +44 20 7946 0958 and card 4111 1111 1111 1111"
)
ANSWER = (
    "I refunded 240 USD for order 1042 (refund R-1). I could not remove the duplicate order "
    "1043: the shop's database is read-only for me, so a colleague will cancel it."
)
SCRIPT = [
    S.tool_call("lookup_order", {"order": 1042}, usage=PRICING.usage(610, 24)),
    S.tool_call(
        "query_db", {"sql": "DELETE FROM orders WHERE id = 1043"}, usage=PRICING.usage(742, 31)
    ),
    S.tool_call(
        "issue_refund",
        {"order": 1042, "amount_usd": 240, "reason": "arrived with a cracked water tank"},
        usage=PRICING.usage(815, 40),
    ),
    S.text(ANSWER, usage=PRICING.usage(902, 52)),
]
"""What the model answers, one response per model call."""


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def shown(path: Path) -> str:
    """A path as the reader would type it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def notable(records: Iterable[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Per step, the middleware records of the trace that did more than a plain Continue: a
    modification, a Block, a Suspend, ... or a failure. Records are in order, and a step
    starts with its step.start emit; a resumed run's trace goes on where it stopped."""
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    step = 0
    for record in records:
        if record["kind"] == "hook":
            step += record["hook"] == "step.start"
        elif record["kind"] == "failure" or record["outcome"] != "continue" or record["modified"]:
            found[step].append(record)
    return found


def describe(record: dict[str, Any]) -> str:
    if record["kind"] == "failure":
        what = f"failed ({record['failure']}, {record['error']})"
    else:
        what = record["outcome"] + (" (modified)" if record["modified"] else "")
    code = f"  code {record['code']}" if record.get("code") else ""
    return f"{record['hook']:<12} {record['middleware']:<24} {what}{code}"


class Story:
    """Journal lines told as a story: each step (what the model did, what the harness's
    middleware said about it, from the trace, and what the model read back), each decision,
    and a step left in flight by a suspension."""

    def __init__(self, journal: Path, trace_path: Path) -> None:
        self.journal = journal
        self.trace_path = trace_path
        self.told = 0  # journal lines told so far
        self.records_told: dict[int, int] = defaultdict(int)  # per step
        self.begun: set[int] = set()  # steps told in part: a suspension stopped them

    def tell(self) -> None:
        """Tell the journal lines written since the last time."""
        lines = hw.read_journal(self.journal)
        records = notable(hw.Trace.read_jsonl(self.trace_path))
        for line in lines[self.told :]:
            if line.kind == "step":
                self._step(line.step, line.action.response.message, line.observation, records)
            elif line.kind == "decision":
                verdict = "approved" if line.decision.approved else "denied"
                print(f"   decision  {line.hook}: {verdict} by {line.decision.role}")
            elif line.kind == "end" and line.state.step is not None:  # stopped inside a step
                step = line.state.step
                if step.response is not None:
                    self._step(step.number, step.response.message, step.observation, records)
        self.told = len(lines)

    def _step(
        self,
        number: int,
        message: hw.Message,
        observation: Sequence[hw.Message],
        records: dict[int, list[dict[str, Any]]],
    ) -> None:
        new = records.get(number, [])[self.records_told[number] :]
        if number in self.begun:
            print(f"   step {number}  the approved call runs")
        elif message.tool_calls:
            calls = ", ".join(f"{c.name}({compact(c.arguments)})" for c in message.tool_calls)
            print(f"   step {number}  the model calls {calls}")
        else:
            print(f"   step {number}  the model answers: {message.content}")
        self.begun.add(number)
        self.records_told[number] += len(new)
        for record in new:
            print(f"           {describe(record)}")
        for reply in observation:
            print(f"           the model reads: {reply.content}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "runs", help="where the files go")
    out: Path = parser.parse_args(argv).out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    journal = out / "support-1042.jsonl"

    shop = Shop()
    harness = hw.load(HERE / "harness.yaml", task="support").with_agent(
        provider=S(SCRIPT),
        tools=shop.tools(),
        system=SYSTEM,
        budgets=hw.Budgets(max_steps=10),
        journal=journal,
    )
    trace_path = harness.agent.trace_path
    assert trace_path is not None
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="support-1042"))

    story = Story(journal, trace_path)

    print(f"task: {TASK}")
    print(f"the shop's record of order 1042 has the customer's {PERSONAL_DATA}")
    first = harness.run_sync(TASK, ctx=ctx)
    print(f"\n1. harness.run(task): exit_reason {first.exit_reason!r}")
    story.tell()
    pending = first.pending
    assert pending is not None and pending.call is not None
    call = f"{pending.call.name}({compact(pending.call.arguments)})"
    print(f"   pending   {call} at {pending.hook}")
    print(f"   approver  {pending.approver_role}: {pending.reason} (code {pending.code})")
    saved = out / "support-1042.state.json"
    saved.write_text(first.state.model_dump_json(indent=2) + "\n", encoding="utf-8")
    print(f"   state     {shown(saved)} (hw.RunState as JSON: resume it anywhere)")

    state = hw.RunState.model_validate_json(saved.read_text(encoding="utf-8"))
    done = harness.resume_sync(state, hw.Decision.approve(role=APPROVER))
    print(
        f"\n2. harness.resume(state, hw.Decision.approve(role={APPROVER!r})): "
        f"exit_reason {done.exit_reason!r}"
    )
    story.tell()
    usage = done.usage
    tokens = usage.input_tokens + usage.output_tokens
    status = shop.rows("SELECT status FROM orders WHERE id = 1043")[0]["status"]
    print(f"   {done.steps} steps, {tokens:,} tokens, ${usage.cost_usd:.4f}")
    print(f"   order 1043 is still {status!r}: the DELETE never ran")

    records = list(hw.Trace.read_jsonl(trace_path))
    emits = max(record["emit"] for record in records)
    print("\n3. what the run wrote (everything above was read back from these files)")
    print(f"   journal  {shown(journal)}  ({story.told} lines)")
    print(f"   trace    {shown(trace_path)}  ({len(records)} records of {emits} emits)")


if __name__ == "__main__":
    main()
