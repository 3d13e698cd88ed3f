"""A Retry at model.after inside the real OpenAI Agents SDK calls the model again (model.before
asked again first), within the run's retry bound, as harnessweaver's run loop does; past it
the run ends ``retry_exhausted`` (issue 32: ``profile://rag``'s ``require_citations`` ended
every run whose first answer cited nothing; these tests failed before the model was
wrapped). A Continue(modified) of the answer's text or of a call's arguments is applied
there too."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import HarnessStopped, OpenAIAgentsAdapter  # noqa: E402
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


def citing_bus() -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(hw.builtins.RequireCitations, settings={"required": True})
    return bus


def hooks(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["hook"], r["outcome"]) for r in records if r["kind"] == "hook"]


def sdk_run(answers: list[str], max_retries: int = 2) -> tuple[Any, Any, ScriptedModel]:
    model = ScriptedModel([[say(text)] for text in answers])
    adapter = OpenAIAgentsAdapter(citing_bus())
    agent = adapter.guard(agents.Agent(name="rag", instructions="Cite.", model=model))
    return adapter.new_run(run_id="r-1", max_retries=max_retries), agent, model


def loop_records(answers: list[str]) -> list[dict[str, Any]]:
    provider = hw.ScriptedProvider([hw.ScriptedProvider.text(text) for text in answers])
    harness = hw.Harness.from_bus(citing_bus(), task="rag", provider=provider, tools=[])
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="r-1"))
    result = harness.run_sync("How long do refunds take?", ctx=ctx)
    assert result.exit_reason == "completed"
    return ctx.trace.records()


def test_an_uncited_answer_is_asked_again_and_the_cited_one_is_the_output() -> None:
    answers = ["Five days.", "Five days [1]."]
    run, agent, model = sdk_run(answers)
    result = asyncio.run(run.run(agent, "How long do refunds take?"))
    assert result.final_output == "Five days [1]."
    assert len(model.inputs) == 2
    # the same hook points and outcomes as the run loop for the same script
    assert hooks(run.trace.records()) == hooks(loop_records(answers))
    assert ("model.after", "retry") in hooks(run.trace.records())


def test_past_the_retry_bound_the_run_ends_retry_exhausted() -> None:
    run, agent, model = sdk_run(["no", "still no"], max_retries=1)
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "How long do refunds take?"))
    assert (raised.value.hook, raised.value.outcome) == ("model.after", "retry")
    assert len(model.inputs) == 2  # one call, one retry
    ends = [r for r in run.trace.records() if r["hook"] == "task.end" and r["kind"] == "hook"]
    assert len(ends) == 1


def on_model_after(change: Any) -> hw.HookBus:
    @hw.middleware(hooks=["model.after"], fail_mode="closed")
    async def rewrite(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome:
        message = change(event.response.message)
        response = event.response.model_copy(update={"message": message})
        return hw.Continue(modified=event.model_copy(update={"response": response}))

    bus = hw.HookBus()
    bus.register(rewrite)
    return bus


def test_a_rewritten_answer_is_what_the_run_gives() -> None:
    bus = on_model_after(lambda m: m.model_copy(update={"content": m.content.upper()}))
    model = ScriptedModel([[say("quiet")]])
    adapter = OpenAIAgentsAdapter(bus)
    agent = adapter.guard(agents.Agent(name="a", model=model))
    assert asyncio.run(adapter.new_run().run(agent, "hi")).final_output == "QUIET"


def test_a_tool_calls_rewritten_arguments_are_what_runs() -> None:
    ran: list[int] = []

    @agents.function_tool
    def refund(amount: int) -> str:
        """Refund an amount."""
        ran.append(amount)
        return "ok"

    def capped(message: hw.Message) -> hw.Message:
        calls = tuple(
            c.model_copy(update={"arguments": {"amount": min(c.arguments["amount"], 100)}})
            for c in message.tool_calls
        )
        return message.model_copy(update={"tool_calls": calls})

    model = ScriptedModel([[call("refund", {"amount": 900})], [say("done")]])
    adapter = OpenAIAgentsAdapter(on_model_after(capped))
    agent = adapter.guard(agents.Agent(name="a", model=model, tools=[refund]))
    assert asyncio.run(adapter.new_run().run(agent, "refund")).final_output == "done"
    assert ran == [100]


def test_a_response_change_the_items_cannot_carry_still_ends_the_run() -> None:
    def more_calls(message: hw.Message) -> hw.Message:
        extra = hw.ToolCall(id="x", name="refund", arguments={"amount": 1})
        return message.model_copy(update={"tool_calls": (*message.tool_calls, extra)})

    model = ScriptedModel([[say("quiet")]])
    adapter = OpenAIAgentsAdapter(on_model_after(more_calls))
    agent = adapter.guard(agents.Agent(name="a", model=model))
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(adapter.new_run().run(agent, "hi"))
    assert (raised.value.hook, raised.value.outcome) == ("model.after", "modified")


def test_a_model_given_by_name_is_wrapped_through_the_runs_provider() -> None:
    model = ScriptedModel([[say("Five days.")], [say("Five days [1].")]])

    class Provider(agents.models.interface.ModelProvider):
        def get_model(self, model_name: str | None) -> Any:
            assert model_name == "scripted-by-name"
            return model

    adapter = OpenAIAgentsAdapter(citing_bus())
    agent = adapter.guard(agents.Agent(name="rag", model="scripted-by-name"))
    config = agents.RunConfig(model_provider=Provider())
    result = asyncio.run(adapter.new_run().run(agent, "refunds?", run_config=config))
    assert result.final_output == "Five days [1]."
    assert len(model.inputs) == 2
