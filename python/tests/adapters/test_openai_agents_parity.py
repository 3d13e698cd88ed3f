"""Record-by-record parity: the same script through harnessweaver's own run loop
(``hw.Harness.run`` / ``resume``) and through the SDK's ``Runner`` under the adapter, with the
same harness and the same run id, leaves the same trace records (every field but the two
clock readings, ``t_ns`` and ``duration_ns``) and shows the middlewares the same events.

Where the SDK makes a difference that the adapter cannot remove, the test names it and asserts
it exactly (``docs/integrations/openai-agents.md``, "Differences from the run loop")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import (  # noqa: E402
    HarnessStopped,
    OpenAIAgentsAdapter,
    denial,
)
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402

S = hw.ScriptedProvider
CLOCK = ("t_ns", "duration_ns")
"""The clock readings of a record: when it was made, never the same twice."""
HOOKS = [
    "task.start",
    "step.start",
    "model.before",
    "model.after",
    "tool.before",
    "tool.after",
    "step.end",
    "task.end",
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


def _saw(hook: str, event: Any) -> tuple[Any, ...]:
    """What a middleware reads of an event that both sides can hold the same."""
    if hook == "task.start":
        return (hook, event.task, event.input)
    if hook == "task.end":
        return (hook, event.exit_reason, event.output, event.steps)
    if hook in ("tool.before", "tool.after"):
        call_ = (event.call.id, event.call.name, dict(event.call.arguments))
        output = event.result.output if hook == "tool.after" else None
        return (hook, event.step, event.tool.name, call_, output)
    if hook == "model.after":
        calls = [(c.id, c.name, dict(c.arguments)) for c in event.response.message.tool_calls]
        return (hook, event.step, event.response.message.content, calls)
    return (hook, event.step)


@dataclass
class Harness:
    """One bus for both sides: a refund policy and a watcher on every hook point."""

    seen: list[tuple[Any, ...]] = field(default_factory=list)
    bus: hw.HookBus = field(default_factory=hw.HookBus)

    def __post_init__(self) -> None:
        for hook in HOOKS:
            self.bus.register(self._watcher(hook))

        @hw.middleware(hooks=["tool.before"], fail_mode="closed", name="refund_policy")
        async def refund_policy(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
            amount = int(event.call.arguments.get("amount", 0))
            if amount > 100:
                return hw.Block(f"${amount} is over the limit", code="refund_limit")
            if amount > 50:
                return hw.Suspend(f"${amount} needs a manager", code="ask")
            if amount % 10:
                update = {"call.arguments.amount": amount - amount % 10}
                return hw.Continue(modified=event.updated(update))
            return None

        self.bus.register(refund_policy)

    def _watcher(self, hook: str) -> Any:
        @hw.middleware(
            hooks=[hook], name="watch." + hook.replace(".", "_"), band="platform", fail_mode="open"
        )
        async def watch(event: Any, env: hw.Envelope) -> hw.Outcome | None:
            self.seen.append((env.run_id, *_saw(hook, event)))
            return None

        return watch

    def add(self, middleware: Any) -> Harness:
        self.bus.register(middleware)
        return self


def sdk_tool(ran: list[int]) -> Any:
    @agents.function_tool
    def refund(amount: int) -> str:
        """Refund an amount in dollars."""
        ran.append(amount)
        return f"refunded {amount}"

    return refund


def loop_tool(ran: list[int]) -> Any:
    @hw.tool
    def refund(amount: int) -> str:
        """Refund an amount in dollars."""
        ran.append(amount)
        return f"refunded {amount}"

    return refund


Turn = list[tuple[str, int]]
"""A model turn: its refund calls as (call id, amount); an empty turn answers "done"."""


def sdk_turns(script: list[Turn]) -> list[list[Any]]:
    return [
        [call("refund", {"amount": a}, call_id=c) for c, a in turn] if turn else [say("done")]
        for turn in script
    ]


def loop_turns(script: list[Turn]) -> list[Any]:
    def response(turn: Turn) -> Any:
        if not turn:
            return "done"
        calls = [hw.ToolCall(id=c, name="refund", arguments={"amount": a}) for c, a in turn]
        return S.tool_calls(*calls)

    return [response(turn) for turn in script]


@dataclass
class Side:
    records: list[dict[str, Any]]
    seen: list[tuple[Any, ...]]
    ran: list[int]
    outcome: Any
    """The final output, or the HarnessStopped / exit the run stopped with."""
    read: list[str]
    """The tool outputs the model read on its last call, in order."""


def strip(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in CLOCK} for r in records]


Decision = bool | int
"""An approver's decision: approve (``True``), deny (``False``), or approve the call with
its amount edited to this (an ``int``, I23)."""


def edit_of(event: Any, amount: int) -> hw.Decision:
    """``hw.Decision.edit`` of a pending ``tool.before`` event with a new amount."""
    assert isinstance(event, hw.ToolCallEvent)
    call = event.call.model_copy(update={"arguments": {"amount": amount}})
    return hw.Decision.edit(event.model_copy(update={"call": call}))


def through_the_loop(
    harness: Harness, script: list[Turn], decisions: list[Decision], run_id: str
) -> Side:
    ran: list[int] = []
    provider = S(loop_turns(script))
    built = hw.Harness.from_bus(
        harness.bus,
        task="support",
        system="Help.",
        provider=provider,
        tools=[loop_tool(ran)],
    )
    ctx = hw.RunContext(envelope=hw.Envelope(run_id=run_id))
    pending = list(decisions)

    async def go() -> Any:
        result = await built.run("refund", ctx=ctx)
        while result.exit_reason == "suspended" and pending:  # else it stays suspended
            given = pending.pop(0)
            if isinstance(given, bool):
                decision = hw.Decision.approve() if given else hw.Decision.deny("no")
            else:
                assert result.pending is not None
                decision = edit_of(result.pending.event_model(), given)
            result = await built.resume(result.state, decision, ctx=ctx)
        return result

    start = len(harness.seen)
    result = asyncio.run(go())
    assert pending == []
    outcome = result.output if result.exit_reason == "completed" else result.exit.exit_reason
    asked = provider.requests[-1].messages if provider.requests else ()
    read = [str(m.content) for m in asked if m.role == "tool"]
    return Side(strip(ctx.trace.records()), harness.seen[start:], ran, outcome, read)


def through_the_sdk(
    harness: Harness,
    script: list[Turn],
    decisions: list[Decision],
    run_id: str,
    *,
    streamed: bool = False,
) -> Side:
    ran: list[int] = []
    adapter = OpenAIAgentsAdapter(harness.bus)
    model = ScriptedModel(sdk_turns(script))
    agent = adapter.guard(
        agents.Agent(name="support", instructions="Help.", model=model, tools=[sdk_tool(ran)])
    )
    run = adapter.new_run(run_id=run_id)
    pending = list(decisions)

    async def segment(given: Any) -> Any:
        if not streamed:
            return await run.run(agent, given)
        stream = await run.run_streamed(agent, given)
        async for _event in stream.stream_events():
            pass
        return stream.result

    async def go() -> Any:
        result = await segment("refund")
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                given = pending.pop(0)
                if given is True:
                    state.approve(item)
                elif given is False:
                    state.reject(item, rejection_message=denial("no"))
                else:
                    waiting = await run.pending(state, item)
                    assert waiting is not None
                    edit = edit_of(waiting.event_model(), given)
                    assert await run.decide(state, item, edit) is None
            result = await segment(state)
        return result.final_output

    start = len(harness.seen)
    try:
        outcome = asyncio.run(go())
    except HarnessStopped as stop:
        outcome = stop
    assert pending == []
    asked = model.inputs[-1] if model.inputs else []
    read = [str(i["output"]) for i in asked if isinstance(i, dict) and "output" in i]
    return Side(strip(run.trace.records()), harness.seen[start:], ran, outcome, read)


def both(
    script: list[Turn],
    decisions: list[Decision] | None = None,
    harness: Callable[[], Harness] = Harness,
    streamed: bool = False,
) -> tuple[Side, Side]:
    loop = through_the_loop(harness(), script, decisions or [], "parity-1")
    sdk = through_the_sdk(harness(), script, decisions or [], "parity-1", streamed=streamed)
    return loop, sdk


ONE_CALL_A_TURN: list[Turn] = [[("c1", 500)], [("c2", 13)], [("c3", 70)], [("c4", 20)], []]
"""Blocked, rewritten, suspended, admitted, then the answer."""


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
def test_one_call_a_turn_leaves_the_run_loops_records(approved: bool) -> None:
    loop, sdk = both(ONE_CALL_A_TURN, [approved])
    assert sdk.records == loop.records
    assert sdk.seen == loop.seen
    assert sdk.ran == loop.ran == ([10, 70, 20] if approved else [10, 20])
    assert sdk.outcome == loop.outcome == "done"
    assert sdk.read == loop.read  # what the model read of each call, refusals included
    assert loop.read[0] == "The harness refused this tool call: $500 is over the limit"
    assert loop.read[2] == ("refunded 70" if approved else denial("no"))
    hooks = {r["hook"] for r in sdk.records}
    assert hooks == set(HOOKS)  # every hook point is in the comparison
    assert {r["run"] for r in sdk.records} == {"parity-1"}


@pytest.mark.parametrize(("amount", "ran"), [(40, 40), (45, 40)], ids=["as-edited", "rewritten"])
def test_an_approver_s_edit_leaves_the_run_loops_records(amount: int, ran: int) -> None:
    """I23: the edit (70 -> ``amount``) is asked of the chain again, which admits it (45: the
    policy rounds it down, as for any call), and what the chain left runs."""
    loop, sdk = both(ONE_CALL_A_TURN, [amount])
    assert sdk.records == loop.records
    assert sdk.seen == loop.seen
    assert sdk.ran == loop.ran == [10, ran, 20]
    assert sdk.outcome == loop.outcome == "done"
    assert sdk.read == loop.read and loop.read[2] == f"refunded {ran}"


def test_streaming_leaves_the_same_records_as_runner_run() -> None:
    """``run.run_streamed`` (``Runner.run_streamed``) under the bus: the same records, the
    same events, the same calls as ``run.run`` and as the run loop."""
    loop, sdk = both(ONE_CALL_A_TURN, [True], streamed=True)
    _, plain = both(ONE_CALL_A_TURN, [True])
    assert sdk.records == plain.records == loop.records
    assert sdk.seen == plain.seen == loop.seen
    assert sdk.ran == loop.ran == [10, 70, 20]
    assert sdk.read == plain.read == loop.read
    assert sdk.outcome == "done"


def with_stop(hook: str, outcome: Callable[[Any], hw.Outcome]) -> Callable[[], Harness]:
    def build() -> Harness:
        @hw.middleware(hooks=[hook], fail_mode="closed", name="stop")
        async def stop(event: Any, env: hw.Envelope) -> hw.Outcome | None:
            return outcome(event)

        return Harness().add(stop)

    return build


@pytest.mark.parametrize(
    ("hook", "outcome", "exit_reason"),
    [
        ("model.before", lambda e: hw.Block("model calls are off", code="freeze"), "blocked"),
        ("model.after", lambda e: hw.Block("not that answer"), "blocked"),
        ("step.start", lambda e: hw.Escalate("look", to="ops"), "escalated"),
        ("tool.before", lambda e: hw.Escalate("fraud", to="security"), "escalated"),
        ("tool.after", lambda e: hw.Escalate("leak", to="security"), "escalated"),
        ("task.start", lambda e: hw.Block("closed today"), "blocked"),
    ],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
def test_a_run_the_bus_ends_leaves_the_run_loops_records(
    hook: str, outcome: Callable[[Any], hw.Outcome], exit_reason: str, streamed: bool
) -> None:
    """A step cut short has no ``step.end``; ``task.end`` says how the run stopped. A
    streamed run raises ``HarnessStopped`` from ``stream_events()``, with the same records."""
    loop, sdk = both([[("c4", 20)], []], harness=with_stop(hook, outcome), streamed=streamed)
    assert loop.outcome == exit_reason
    assert isinstance(sdk.outcome, HarnessStopped) and sdk.outcome.hook == hook
    assert sdk.records == loop.records
    assert sdk.seen == loop.seen
    assert sdk.ran == loop.ran


def raising(fail_mode: str) -> Callable[[], Harness]:
    def build() -> Harness:
        @hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, name="flaky")
        async def flaky(event: Any, env: hw.Envelope) -> hw.Outcome | None:
            raise RuntimeError("secret detail")

        return Harness().add(flaky)

    return build


@pytest.mark.parametrize("fail_mode", ["closed", "open"])
def test_a_raising_middleware_leaves_the_run_loops_records(fail_mode: str) -> None:
    loop, sdk = both([[("c4", 20)], []], harness=raising(fail_mode))
    assert sdk.records == loop.records
    assert sdk.seen == loop.seen
    assert sdk.ran == loop.ran == ([] if fail_mode == "closed" else [20])
    assert sdk.read == loop.read
    assert "secret detail" not in str(sdk.records)


# --- what the SDK does differently: named, and asserted exactly ---------------------------------


def test_several_calls_in_one_turn_differ_only_in_the_sdks_order() -> None:
    """Difference 1 (the SDK's): with several calls in one model turn the SDK asks for every
    call's approval before it runs any, so the adapter emits ``tool.before`` for each call
    first and then ``tool.after`` for each call that ran; the run loop handles one call after
    the other. The records are the same records, only in that order; what the middlewares
    saw and what ran are the same."""
    script: list[Turn] = [[("c1", 500), ("c2", 13), ("c4", 20)], []]
    loop, sdk = both(script)
    assert sdk.ran == loop.ran == [10, 20]
    assert sdk.outcome == loop.outcome == "done"
    assert sdk.read == loop.read  # the answers are paired with the calls in the calls' order
    expected = before_calls_first(loop.records)
    assert sdk.records == expected
    assert sorted(map(repr, sdk.seen)) == sorted(map(repr, loop.seen))
    assert sdk.seen == before_calls_first_seen(loop.seen)


def test_two_calls_suspended_in_one_turn_are_asked_together() -> None:
    """Difference 2 (the SDK's): the SDK interrupts once for every call of the turn that needs
    approval, after running the calls it admitted; the run loop stops at the first suspended
    call, and asks the chain about the next one only after that decision. So the SDK's run
    has one ``suspended`` segment where the run loop has two, the calls behind a suspended
    one run before the decision, and the model reads the answers in the order they came.
    Every call is asked once on both sides, and the decisions do the same: approved runs,
    rejected does not."""
    script: list[Turn] = [[("c1", 70), ("c2", 80), ("c4", 20)], []]
    loop, sdk = both(script, [True, False])
    assert sorted(loop.ran) == sorted(sdk.ran) == [20, 70]
    assert (loop.ran, sdk.ran) == ([70, 20], [20, 70])
    assert sdk.outcome == loop.outcome == "done"
    assert loop.read == ["refunded 70", denial("no"), "refunded 20"]
    assert sdk.read == ["refunded 20", "refunded 70", denial("no")]  # in the order they ran
    ends = [r for r in sdk.records if r["hook"] == "task.end" and r["kind"] == "hook"]
    loop_ends = [r for r in loop.records if r["hook"] == "task.end" and r["kind"] == "hook"]
    assert len(ends) == 2 and len(loop_ends) == 3
    hook_records = [
        (r["emit"], r["hook"], r.get("step"), r.get("tool"), r["outcome"], r.get("code"))
        for r in sdk.records
        if r["kind"] == "hook"
    ]
    assert hook_records == [
        (1, "task.start", None, None, "continue", None),
        (2, "step.start", 1, None, "continue", None),
        (3, "model.before", 1, None, "continue", None),
        (4, "model.after", 1, None, "continue", None),
        (5, "tool.before", 1, "refund", "suspend", "ask"),  # c1
        (6, "tool.before", 1, "refund", "suspend", "ask"),  # c2
        (7, "tool.before", 1, "refund", "continue", None),  # c4
        (8, "tool.after", 1, "refund", "continue", None),  # c4
        (9, "task.end", None, None, "continue", None),  # suspended for c1 and c2
        (10, "tool.after", 1, "refund", "continue", None),  # c1 approved; c2 rejected
        (11, "step.end", 1, None, "continue", None),
        (12, "step.start", 2, None, "continue", None),
        (13, "model.before", 2, None, "continue", None),
        (14, "model.after", 2, None, "continue", None),
        (15, "step.end", 2, None, "continue", None),
        (16, "task.end", None, None, "continue", None),
    ]
    loop_hooks = [(r["hook"], r.get("step")) for r in loop.records if r["kind"] == "hook"]
    assert sorted(loop_hooks, key=repr) == sorted(
        [(h, step) for _, h, step, *_ in hook_records] + [("task.end", None)], key=repr
    )  # the same emits, and one more task.end: the run loop's second suspension
    calls = [s[4][0] for s in sdk.seen if s[1] == "tool.before"]
    loop_calls = [s[4][0] for s in loop.seen if s[1] == "tool.before"]
    assert calls == loop_calls == ["c1", "c2", "c4"]  # each call asked once, in order
    assert [h for _run, h, *_ in sdk.seen] == [
        "task.start",
        "step.start",
        "model.before",
        "model.after",
        "tool.before",
        "tool.before",
        "tool.before",
        "tool.after",  # c4, admitted, runs before the decision
        "task.end",  # suspended: c1 and c2 wait together
        "tool.after",  # c1, approved; c2 rejected never runs
        "step.end",
        "step.start",
        "model.before",
        "model.after",
        "step.end",
        "task.end",
    ]


def before_calls_first(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run loop's records in the SDK's order (difference 1): within a step, the records
    of every ``tool.before`` emit, then those of every ``tool.after`` emit; emit ordinals
    renumbered in the new order."""
    order: list[list[dict[str, Any]]] = []
    by_emit: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if record["emit"] not in by_emit:
            by_emit[record["emit"]] = []
            order.append(by_emit[record["emit"]])
        by_emit[record["emit"]].append(record)
    emits = _tools_grouped(order, lambda group: str(group[0]["hook"]))
    renumbered: list[dict[str, Any]] = []
    for n, group in enumerate(emits, start=1):
        renumbered.extend({**record, "emit": n} for record in group)
    return renumbered


def before_calls_first_seen(seen: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return _tools_grouped(seen, lambda item: str(item[1]))


def _tools_grouped(items: list[Any], hook_of: Callable[[Any], str]) -> list[Any]:
    """Each run of consecutive tool.before / tool.after items reordered: befores, then afters."""
    out: list[Any] = []
    run: list[Any] = []
    for item in [*items, None]:
        if item is not None and hook_of(item) in ("tool.before", "tool.after"):
            run.append(item)
            continue
        out.extend(i for i in run if hook_of(i) == "tool.before")
        out.extend(i for i in run if hook_of(i) == "tool.after")
        run = []
        if item is not None:
            out.append(item)
    return out


def test_a_suspend_outside_a_tool_call_ends_the_sdk_run_as_blocked() -> None:
    """Difference 3 (the SDK's): the SDK pauses a run only for a tool approval. A Suspend at
    ``model.before`` leaves the same records on both sides, but the run loop's ``task.end``
    says ``suspended`` (resumable) and the adapter's says ``blocked``: the SDK run is over
    (``HarnessStopped``, outcome ``suspend``)."""
    loop, sdk = both([[("c4", 20)], []], harness=with_stop("model.before", wait))
    assert sdk.records == loop.records
    assert loop.outcome == "suspended"
    assert isinstance(sdk.outcome, HarnessStopped) and sdk.outcome.outcome == "suspend"
    assert sdk.seen[:-1] == loop.seen[:-1]
    assert (loop.seen[-1], sdk.seen[-1]) == (
        ("parity-1", "task.end", "suspended", None, 0),
        ("parity-1", "task.end", "blocked", None, 0),
    )


def wait(event: Any) -> hw.Outcome:
    return hw.Suspend("wait")


def again(event: Any) -> hw.Outcome:
    return hw.Retry("rate limited")


def test_a_retry_exhausted_at_tool_before_refuses_the_call_where_the_run_loop_ends() -> None:
    """Difference 4 (the adapter's mapping, docs: "Retry"): both ask the chain again up to
    the retry bound (2), with the same records; then the run loop ends the run
    ``retry_exhausted`` and the adapter refuses the call and the run goes on (the model may
    ask again)."""
    loop, sdk = both([[("c4", 20)], []], harness=with_stop("tool.before", again))
    assert loop.outcome == "retry_exhausted" and sdk.outcome == "done"
    assert sdk.ran == loop.ran == []
    asked = [r for r in loop.records if r["hook"] != "task.end"]
    assert sdk.records[: len(asked)] == asked  # the same up to the last retry
    loop_hooks = [(r["emit"], r["hook"], r["outcome"]) for r in loop.records if r["kind"] == "hook"]
    sdk_hooks = [(r["emit"], r["hook"], r["outcome"]) for r in sdk.records if r["kind"] == "hook"]
    assert loop_hooks[4:] == [
        (5, "tool.before", "retry"),
        (6, "tool.before", "retry"),
        (7, "tool.before", "retry"),
        (8, "task.end", "continue"),
    ]
    assert sdk_hooks[4:] == [
        (5, "tool.before", "retry"),
        (6, "tool.before", "retry"),
        (7, "tool.before", "retry"),
        (8, "step.end", "continue"),
        (9, "step.start", "continue"),
        (10, "model.before", "continue"),
        (11, "model.after", "continue"),
        (12, "step.end", "continue"),
        (13, "task.end", "continue"),
    ]
    assert sdk.read == ["The harness refused this tool call: rate limited"]


def retry_first(hook: str, times: int, max_attempts: int | None = None) -> Callable[[], Harness]:
    """A middleware at ``hook`` that answers Retry the first ``times`` times, then nothing."""

    def build() -> Harness:
        asked: list[int] = []

        @hw.middleware(hooks=[hook], fail_mode="closed", name="flaky")
        async def flaky(event: Any, env: hw.Envelope) -> hw.Outcome | None:
            asked.append(1)
            if len(asked) <= times:
                return hw.Retry("busy", code="busy", max_attempts=max_attempts)
            return None

        return Harness().add(flaky)

    return build


@pytest.mark.parametrize(
    "hook", ["task.start", "step.start", "model.before", "tool.before", "step.end"]
)
@pytest.mark.parametrize(
    ("times", "max_attempts"), [(1, None), (2, None), (3, None), (2, 2)], ids=str
)
def test_a_retry_asks_the_chain_again_as_the_run_loop_does(
    hook: str, times: int, max_attempts: int | None
) -> None:
    """Where the run loop answers a Retry by asking the chain again (``task.start``,
    ``step.start``, ``model.before``, ``tool.before``, ``step.end``), so does the adapter,
    up to the same bound (``max_retries`` 2, lowered by ``max_attempts``); past it the run
    ends ``retry_exhausted`` on both sides (at ``tool.before``: difference 4)."""
    loop, sdk = both([[("c4", 20)], []], harness=retry_first(hook, times, max_attempts))
    exhausted = times > (2 if max_attempts is None else max_attempts - 1)
    if exhausted and hook == "tool.before":
        assert loop.outcome == "retry_exhausted" and sdk.outcome == "done"
        return  # difference 4, asserted exactly above
    assert sdk.records == loop.records
    assert sdk.seen == loop.seen
    assert sdk.ran == loop.ran
    if exhausted:
        assert loop.outcome == "retry_exhausted"
        assert isinstance(sdk.outcome, HarnessStopped) and sdk.outcome.outcome == "retry"
    else:
        assert sdk.outcome == loop.outcome == "done"
        assert sdk.ran == [20]
