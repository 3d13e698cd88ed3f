"""Helpers of the run-loop tests: a harness around a bus, middleware that answer what a test
says at one hook point, a clock that moves only when told, and tools that count their calls."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import harnessweaver as hw

S = hw.ScriptedProvider
_names = itertools.count(1)

Answer = Callable[[Any], "hw.Outcome | None"]


class ManualClock:
    """A monotonic clock that moves only when a test advances it: wall-time budgets are
    tested without sleeping."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def answering(hook: str, answer: Answer, *, name: str | None = None) -> Any:
    """A closed middleware at ``hook`` that returns ``answer(event)``; it keeps the events it
    saw in ``.seen``."""
    seen: list[Any] = []

    async def answer_at_hook(event: Any, env: hw.Envelope) -> hw.Outcome | None:
        seen.append(event)
        return answer(event)

    declared = hw.middleware(hooks=[hook], fail_mode="closed", name=name or f"mw_{next(_names)}")(
        answer_at_hook
    )
    declared.seen = seen  # type: ignore[attr-defined]
    return declared


def once(outcome: hw.Outcome) -> Answer:
    """Answer ``outcome`` the first time, then ``None``."""
    given = [outcome]
    return lambda event: given.pop() if given else None


class Counted:
    """A tool that records the arguments of every call: ``lookup(order) -> dict``."""

    def __init__(self) -> None:
        self.calls: list[int] = []

        @hw.tool
        def lookup(order: int) -> dict[str, object]:
            """Look an order up."""
            self.calls.append(order)
            return {"order": order, "status": "shipped"}

        self.tool = lookup


def harness(
    *middleware: Any,
    script: Sequence[hw.ModelResponse | str] = ("done",),
    tools: Sequence[hw.Tool[Any, Any]] = (),
    **options: Any,
) -> hw.Harness:
    """A harness built in code: a bus with ``middleware``, a scripted provider, ``tools``."""
    bus = hw.HookBus()
    for item in middleware:
        bus.register(item)
    provider = hw.ScriptedProvider(script)
    return hw.Harness.from_bus(bus, task="test", provider=provider, tools=tools, **options)


def hooks_fired(trace: hw.Trace) -> list[str]:
    """The hook points emitted, in order (one hook record per emit)."""
    return [record["hook"] for record in trace if record["kind"] == "hook"]


def provider_of(h: hw.Harness) -> hw.ScriptedProvider:
    provider = h.agent.provider
    assert isinstance(provider, hw.ScriptedProvider)
    return provider


def last_tool_message(result: hw.RunResult) -> hw.Message:
    return [m for m in result.state.messages if m.role == "tool"][-1]
