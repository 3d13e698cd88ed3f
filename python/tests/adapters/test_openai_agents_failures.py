"""A failing tool inside the OpenAI Agents SDK: the SDK answers a function tool's exception
inside the tool (its failure function's text), so the adapter watches the call and
``tool.after`` carries ``result.is_error``; ``harnessweaver.tool_failure_guard``
(``profile://agent-guards``) counts the failures and takes the tool out of the run. A tool
with ``failure_error_function=None`` still ends the run with its exception, as the SDK does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402
from harnessweaver.adapters.openai_agents.failing import INNER, watched  # noqa: E402
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


def flaky_tool(ran: list[str], **options: Any) -> Any:
    @agents.function_tool(**options)
    def fetch_rate(currency: str) -> str:
        """Fetch an exchange rate."""
        ran.append(currency)
        raise ConnectionError("rate service down")

    return fetch_rate


def guarded_run(
    tmp_path: Path, tool: Any, turns: list[list[Any]], seen: list[hw.ToolResult]
) -> tuple[Any, Any, Any]:
    """A run under ``profile://agent-guards``; ``seen`` gets each ``tool.after``'s result."""
    spec = tmp_path / "harness.yaml"
    spec.write_text("profiles:\n  - profile://agent-guards\n", encoding="utf-8")
    harness = hw.load(spec)

    @hw.middleware(hooks=["tool.after"], fail_mode="closed", name="watch")
    async def watch(event: hw.ToolResultEvent, env: hw.Envelope) -> None:
        seen.append(event.result)

    harness.bus.register(watch)
    adapter = OpenAIAgentsAdapter(harness)
    model = ScriptedModel(turns)
    agent = adapter.guard(agents.Agent(name="fx", model=model, tools=[tool]))
    return adapter.new_run(), agent, model


def outputs_read(model: ScriptedModel, call_id: str) -> list[str]:
    """The results the model read for ``call_id`` (in its last call, which holds them all)."""
    return [
        str(item.get("output"))
        for item in model.inputs[-1]
        if isinstance(item, dict) and item.get("call_id") == call_id and "output" in item
    ]


def test_three_failures_in_a_row_take_the_tool_out_of_the_run(tmp_path: Path) -> None:
    ran: list[str] = []
    calls = [[call("fetch_rate", {"currency": "EUR"}, call_id=f"c{n}")] for n in range(1, 5)]
    seen: list[hw.ToolResult] = []
    turns = [*calls, [say("No rate today.")]]
    run, agent, model = guarded_run(tmp_path, flaky_tool(ran), turns, seen)
    result = asyncio.run(run.run(agent, "What is the EUR rate?"))
    assert result.final_output == "No rate today."
    assert ran == ["EUR", "EUR", "EUR"]  # the fourth call never ran
    # the model read the SDK's own failure text for each failure, as without the harness
    sdk_text = "An error occurred while running the tool. Please try again."
    for n in (1, 2, 3):
        assert outputs_read(model, f"c{n}") == [sdk_text]
    (refused,) = outputs_read(model, "c4")
    assert refused == (
        "The harness refused this tool call: tool 'fetch_rate' failed 3 times in a row; "
        "it is not called again in this run"
    )
    assert seen == [hw.ToolResult(output=sdk_text, is_error=True)] * 3
    records = run.trace.records()
    blocks = [
        r
        for r in records
        if r["kind"] == "outcome" and r["hook"] == "tool.before" and r["outcome"] == "block"
    ]
    assert [(r["middleware"], r["code"]) for r in blocks] == [
        ("agent_guards.tool_failure_guard", "tool_failing")
    ]


def test_a_success_is_not_an_error(tmp_path: Path) -> None:
    @agents.function_tool
    def fetch_rate(currency: str) -> str:
        """Fetch an exchange rate."""
        return "1.08"

    turns = [[call("fetch_rate", {"currency": "EUR"}, call_id="c1")], [say("1.08")]]
    seen: list[hw.ToolResult] = []
    run, agent, model = guarded_run(tmp_path, fetch_rate, turns, seen)
    assert asyncio.run(run.run(agent, "EUR?")).final_output == "1.08"
    assert outputs_read(model, "c1") == ["1.08"]
    assert seen == [hw.ToolResult(output="1.08")]


def test_the_tools_own_failure_function_is_what_the_model_reads(tmp_path: Path) -> None:
    ran: list[str] = []
    tool = flaky_tool(ran, failure_error_function=lambda ctx, exc: f"try later ({exc})")
    turns = [[call("fetch_rate", {"currency": "EUR"}, call_id="c1")], [say("Later.")]]
    seen: list[hw.ToolResult] = []
    run, agent, model = guarded_run(tmp_path, tool, turns, seen)
    assert asyncio.run(run.run(agent, "EUR?")).final_output == "Later."
    assert outputs_read(model, "c1") == ["try later (rate service down)"]
    assert seen == [hw.ToolResult(output="try later (rate service down)", is_error=True)]


def test_without_a_failure_function_the_exception_ends_the_run(tmp_path: Path) -> None:
    ran: list[str] = []
    tool = flaky_tool(ran, failure_error_function=None)
    turns = [[call("fetch_rate", {"currency": "EUR"}, call_id="c1")], [say("unreached")]]
    seen: list[hw.ToolResult] = []
    run, agent, _ = guarded_run(tmp_path, tool, turns, seen)
    with pytest.raises(agents.UserError, match="rate service down"):  # the SDK's own wrapping
        asyncio.run(run.run(agent, "EUR?"))
    assert ran == ["EUR"]


def test_the_sdk_invoker_the_adapter_watches() -> None:
    """Pins the SDK behaviour the watch relies on (agents 0.24): a ``function_tool``'s
    ``on_invoke_tool`` runs the function through ``_invoke_tool_impl`` and answers its
    exception itself. If a new SDK drops it, this test says why the ones above fail."""
    invoker = flaky_tool([]).on_invoke_tool
    inner = getattr(invoker, INNER)
    seen = watched(invoker)
    assert seen is not invoker and getattr(seen, INNER).__wrapped__ is inner
    assert getattr(invoker, INNER) is inner  # the tool itself is left as it was


def test_a_hand_made_tool_is_used_as_it_is(tmp_path: Path) -> None:
    """A ``FunctionTool`` whose ``on_invoke_tool`` is the user's own has no inner call to
    watch: it runs unchanged and its answer is a plain result (the fallback)."""

    async def invoke(ctx: Any, input: str) -> str:
        return "error: no rate"

    assert watched(invoke) is invoke
    tool = agents.FunctionTool(
        name="fetch_rate",
        description="Fetch an exchange rate.",
        params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
        on_invoke_tool=invoke,
    )
    seen: list[hw.ToolResult] = []
    turns = [[call("fetch_rate", {}, call_id="c1")], [say("No rate.")]]
    run, agent, model = guarded_run(tmp_path, tool, turns, seen)
    assert asyncio.run(run.run(agent, "EUR?")).final_output == "No rate."
    assert outputs_read(model, "c1") == ["error: no rate"]
    assert seen == [hw.ToolResult(output="error: no rate")]
