"""The built-in guards inside ``harness.run``: what the model is told, what it reads back and
how the run ends, from a harness spec through the run loop (the other tests emit by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import harnessweaver as hw
from harnessweaver.builtins._notes import NOTE_PREFIX

pytestmark = pytest.mark.anyio

S = hw.ScriptedProvider
CALLS: list[str] = []


@hw.tool
def search(query: str) -> str:
    """Search the documents."""
    CALLS.append(query)
    return f"nothing new about {query}"


@hw.tool
def flaky(n: int) -> str:
    """A tool whose backend is down."""
    raise ConnectionError("backend down: host db-7.internal")


@hw.tool
def contact(name: str) -> dict[str, str]:
    """A customer's contact details."""
    return {"name": name, "email": f"{name.lower()}@example.com"}


def harness(tmp_path: Path, middleware: str, script: list[Any], **options: Any) -> hw.Harness:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"middleware:\n{middleware}", encoding="utf-8")
    return hw.load(spec).with_agent(
        provider=S(script),
        tools=[search, flaky, contact],
        budgets=hw.Budgets(max_steps=12),
        **options,
    )


def read(requests: list[hw.ModelRequest], index: int) -> str:
    """The last message of the ``index``-th request the model received."""
    return requests[index].messages[-1].content


async def test_loop_guard_warns_the_model_then_refuses_the_call(tmp_path: Path) -> None:
    item = "  - {use: harnessweaver.loop_guard, id: loops, warn_after: 2, block_after: 3}\n"
    script = [S.tool_call("search", {"query": "refund policy"}) for _ in range(3)] + ["Done."]
    h = harness(tmp_path, item, script)
    CALLS.clear()
    done = await h.run("Find the refund policy")
    assert (done.exit_reason, done.output) == ("completed", "Done.")
    assert CALLS == ["refund policy"] * 2  # the third identical call did not run
    requests = h.agent.provider.requests  # type: ignore[union-attr]
    assert NOTE_PREFIX not in read(requests, 1)
    assert read(requests, 2).endswith(
        f"{NOTE_PREFIX} you have called search with the same arguments 2 times in your last "
        "20 tool calls; from 3 such calls on it will be refused, so try something else."
    )
    assert read(requests, 3) == (
        "The harness refused this tool call: search was called with the same arguments 3 "
        "times within the last 20 tool calls; try something else"
    )


async def test_budget_guard_warns_at_70_percent_and_ends_the_run_at_100(tmp_path: Path) -> None:
    item = "  - {use: harnessweaver.budget_guard, id: budget, max_tokens: 1000}\n"
    used = hw.Usage(input_tokens=350, output_tokens=50)
    script = [S.tool_call("search", {"query": str(n)}, usage=used) for n in range(3)]
    h = harness(tmp_path, item, script)
    done = await h.run("Search a lot")
    requests = h.agent.provider.requests  # type: ignore[union-attr]
    assert len(requests) == 3  # the fourth request was refused: 1,200 of 1,000 tokens
    assert NOTE_PREFIX not in read(requests, 1)  # 400 tokens: 40%
    assert read(requests, 2).endswith(
        f"{NOTE_PREFIX} this run has spent 800 tokens of its 1,000 tokens budget (80%); "
        "model requests stop at 100%, so finish the task soon."
    )
    assert done.exit.model_dump(exclude_none=True) == {
        "exit_reason": "blocked",
        "hook": "model.before",
        "reason": "the run has spent 1,200 tokens of its 1,000 tokens budget",
        "code": "budget_exceeded",
    }


async def test_tool_failure_guard_takes_a_failing_tool_out_of_the_run(tmp_path: Path) -> None:
    item = "  - {use: harnessweaver.tool_failure_guard, id: failures, max_consecutive: 2}\n"
    script = [S.tool_call("flaky", {"n": n}) for n in range(3)] + ["The backend is down."]
    h = harness(tmp_path, item, script, journal=tmp_path / "run.jsonl")
    done = await h.run("Use flaky")
    assert done.exit_reason == "completed"
    requests = h.agent.provider.requests  # type: ignore[union-attr]
    assert [read(requests, i) for i in (1, 2, 3)] == [
        "tool 'flaky' failed: ConnectionError",
        "tool 'flaky' failed: ConnectionError",
        "The harness refused this tool call: tool 'flaky' failed 2 times in a row; it is not "
        "called again in this run",
    ]
    for name in ("run.jsonl", "run.trace.jsonl"):  # the exception's type only (R9)
        assert "db-7.internal" not in (tmp_path / name).read_text(encoding="utf-8")


async def test_redact_pii_keeps_personal_data_from_the_model(tmp_path: Path) -> None:
    item = "  - {use: harnessweaver.redact_pii, id: pii, hooks: [model.before, tool.after]}\n"
    script = [S.tool_call("contact", {"name": "Ada"}), "Found her."]
    h = harness(tmp_path, item, script, journal=tmp_path / "run.jsonl")
    done = await h.run("Call Ada back on +44 20 7946 0958")
    assert done.exit_reason == "completed"
    requests = h.agent.provider.requests  # type: ignore[union-attr]
    assert read(requests, 0) == "Call Ada back on [redacted:phone]"
    assert read(requests, 1) == '{"name": "Ada", "email": "[redacted:email]"}'
    steps = [line for line in hw.read_journal(tmp_path / "run.jsonl") if line.kind == "step"]
    assert steps[0].observation[0].content == '{"name": "Ada", "email": "[redacted:email]"}'
    assert "ada@example.com" not in (tmp_path / "run.jsonl").read_text(encoding="utf-8")
    # the guard does not attach to task.start: the state, and so the journal, keeps the task's
    # input as given (docs/builtins.md); only what is sent to the model is redacted
    assert steps[0].state.input == "Call Ada back on +44 20 7946 0958"
    assert steps[0].action.request.messages[-1].content == "Call Ada back on [redacted:phone]"


PERSONAL = ("ada@example.com", "+44 20 7946 0958", "4111 1111 1111 1111")
TASK_WITH_PII = {"note": "Call Ada back on +44 20 7946 0958", "card": ["4111 1111 1111 1111"]}


def files_of(tmp_path: Path) -> str:
    return "".join(
        (tmp_path / name).read_text(encoding="utf-8") for name in ("run.jsonl", "run.trace.jsonl")
    )


async def test_redact_pii_keeps_personal_data_out_of_the_journal_and_the_trace(
    tmp_path: Path,
) -> None:
    item = "  - {use: harnessweaver.redact_pii, id: pii}\n"  # every hook point, task.start too
    script = [S.tool_call("contact", {"name": "Ada"}), "Found her."]
    h = harness(tmp_path, item, script, journal=tmp_path / "run.jsonl")
    done = await h.run(TASK_WITH_PII)
    assert done.exit_reason == "completed"
    admitted = {"note": "Call Ada back on [redacted:phone]", "card": ["[redacted:credit_card]"]}
    assert done.state.input == admitted  # the run admits the input as the guard left it
    requests = h.agent.provider.requests  # type: ignore[union-attr]
    assert '"note": "Call Ada back on [redacted:phone]"' in read(requests, 0)
    written = files_of(tmp_path)
    assert [data for data in PERSONAL if data in written] == []
    assert "[redacted:email]" in written  # the tool's result, redacted at tool.after


@pytest.mark.parametrize("outcome", [hw.Suspend("look", approver_role="ops"), hw.Block("no")])
async def test_a_task_stopped_at_task_start_journals_no_unredacted_input(
    tmp_path: Path, outcome: hw.Outcome
) -> None:
    @hw.middleware(hooks=["task.start"], fail_mode="closed", band="task")
    async def stops(event: hw.TaskStartEvent, env: hw.Envelope) -> hw.Outcome:
        return outcome

    item = "  - {use: harnessweaver.redact_pii, id: pii}\n"
    h = harness(tmp_path, item, ["Found her."], journal=tmp_path / "run.jsonl")
    h.bus.register(stops)
    stopped = await h.run(TASK_WITH_PII)
    assert stopped.exit.hook == "task.start"
    written = files_of(tmp_path)
    assert [data for data in PERSONAL if data in written] == []
    if stopped.exit_reason == "suspended":  # the input as the chain left it, redacted
        assert stopped.state.input == stopped.pending.event["input"]  # type: ignore[union-attr]
        recovered = hw.recover(tmp_path / "run.jsonl")
        assert recovered is not None and recovered.input == stopped.state.input
        done = await h.resume(recovered, hw.Decision.approve(role="ops"))
        assert done.exit_reason == "completed"
        assert [data for data in PERSONAL if data in files_of(tmp_path)] == []
    else:  # a Block may come before the redaction: a blocked task keeps no input
        assert stopped.state.input is None
