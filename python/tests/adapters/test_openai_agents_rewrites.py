"""A Continue(modified) at task.start, step.start or model.before is applied inside the real
OpenAI Agents SDK (``RunConfig.call_model_input_filter``, the task's input), not turned into
the end of the run (issue 32). Before the fix each run here raised ``HarnessStopped``
(outcome ``modified``) at the first rewrite: an email in the prompt under
``profile://agent-guards`` ended the run at ``task.start``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import (  # noqa: E402
    GuardedRun,
    HarnessStopped,
    OpenAIAgentsAdapter,
)
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402
from harnessweaver.builtins._notes import with_note  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


def lookup_tool(seen: list[str]) -> Any:
    @agents.function_tool
    def lookup(order: str) -> str:
        """Look an order up."""
        seen.append(order)
        return f"order {order}: customer jane@example.com, key sk-live-abcdefghijkl"

    return lookup


def under(source: Any, turns: list[list[Any]]) -> tuple[GuardedRun, Any, ScriptedModel, list[str]]:
    seen: list[str] = []
    model = ScriptedModel(turns)
    adapter = OpenAIAgentsAdapter(source)
    agent = adapter.guard(
        agents.Agent(name="support", instructions="Help.", model=model, tools=[lookup_tool(seen)])
    )
    return adapter.new_run(run_id="rw-1"), agent, model, seen


def bus_of(*middleware: Any) -> hw.HookBus:
    bus = hw.HookBus()
    for item in middleware:
        bus.register(item)
    return bus


def at(hook: str, answer: Any) -> Any:
    @hw.middleware(hooks=[hook], fail_mode="closed", name=f"rewrite_{hook.replace('.', '_')}")
    async def mw(event: Any, env: hw.Envelope) -> hw.Outcome | None:
        return answer(event)  # type: ignore[no-any-return]

    return mw


def texts(items: list[Any]) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            out.append(item["content"])
        elif isinstance(item, dict) and "output" in item:
            out.append(str(item["output"]))
    return out


def agent_guards(tmp_path: Path) -> hw.Harness:
    spec = tmp_path / "harness.yaml"
    spec.write_text("profiles:\n  - profile://agent-guards\n", encoding="utf-8")
    return hw.load(spec)


def test_agent_guards_redact_an_email_in_the_prompt_and_the_run_goes_on(tmp_path: Path) -> None:
    run, agent, model, seen = under(
        agent_guards(tmp_path), [[call("lookup", {"order": "7"})], [say("done")]]
    )
    result = asyncio.run(run.run(agent, "Order 7, reply to jane@example.com"))
    assert result.final_output == "done"
    assert seen == ["7"]
    first = texts(model.inputs[0])
    assert first == ["Order 7, reply to [redacted:email]"]
    # the tool's own result is redacted too (tool.after), so the model never reads the email
    assert all("jane@example.com" not in text for text in texts(model.inputs[1]))
    pii = [r for r in run.trace.records() if r.get("middleware") == "agent_guards.redact_pii"]
    assert any(r["hook"] == "task.start" and r["modified"] for r in pii)


def test_redact_secrets_at_model_before_rewrites_what_the_model_reads() -> None:
    bus = bus_of()
    bus.register(hw.builtins.RedactSecrets, settings={})
    run, agent, model, _seen = under(bus, [[call("lookup", {"order": "7"})], [say("done")]])
    result = asyncio.run(run.run(agent, "use key sk-test-1234567890 for order 7"))
    assert result.final_output == "done"
    assert texts(model.inputs[0]) == ["use key [redacted] for order 7"]
    second = " ".join(texts(model.inputs[1]))
    assert "sk-" not in second and "[redacted]" in second  # the tool output, rewritten
    outcomes = [(r["hook"], r["modified"]) for r in run.trace.records() if r["kind"] == "hook"]
    assert ("model.before", True) in outcomes


def test_a_note_appended_at_model_before_is_one_more_user_message() -> None:
    note = at("model.before", lambda e: hw.Continue(modified=with_note(e, "stop looping")))
    run, agent, model, _seen = under(
        bus_of(note), [[call("lookup", {"order": "7"})], [say("done")]]
    )
    assert asyncio.run(run.run(agent, "order 7")).final_output == "done"
    assert texts(model.inputs[0]) == ["order 7\n\n[harness notice] stop looping"]
    # after a tool call the last message is the tool's: the note is a new user message
    last = model.inputs[1][-1]
    assert last == {"role": "user", "content": "[harness notice] stop looping"}


def test_the_system_message_rewritten_is_the_models_instructions() -> None:
    def louder(event: hw.ModelRequestEvent) -> hw.Outcome:
        messages = list(event.request.messages)
        messages[0] = messages[0].model_copy(update={"content": "Help. Be brief."})
        request = event.request.model_copy(update={"messages": tuple(messages)})
        return hw.Continue(modified=event.model_copy(update={"request": request}))

    run, agent, model, _seen = under(bus_of(at("model.before", louder)), [[say("done")]])
    assert asyncio.run(run.run(agent, "hello")).final_output == "done"
    assert model.instructions == ["Help. Be brief."]


def test_step_start_rewrites_the_messages_and_model_before_sees_them() -> None:
    seen_by_model_before: list[str] = []

    def shout(event: hw.StepStartEvent) -> hw.Outcome:
        messages = tuple(
            m.model_copy(update={"content": m.content.upper()})
            if m.role == "user" and m.content
            else m
            for m in event.messages
        )
        return hw.Continue(modified=event.model_copy(update={"messages": messages}))

    def look(event: hw.ModelRequestEvent) -> None:
        seen_by_model_before.extend(m.content or "" for m in event.request.messages)

    run, agent, model, _seen = under(
        bus_of(at("step.start", shout), at("model.before", look)), [[say("done")]]
    )
    assert asyncio.run(run.run(agent, "hello")).final_output == "done"
    assert texts(model.inputs[0]) == ["HELLO"]
    assert seen_by_model_before == ["Help.", "HELLO"]


def test_a_change_the_items_cannot_carry_still_ends_the_run() -> None:
    def drop_all(event: hw.ModelRequestEvent) -> hw.Outcome:
        request = event.request.model_copy(update={"messages": event.request.messages[:1]})
        return hw.Continue(modified=event.model_copy(update={"request": request}))

    run, agent, model, _seen = under(bus_of(at("model.before", drop_all)), [[say("done")]])
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "hello"))
    assert (raised.value.hook, raised.value.outcome) == ("model.before", "modified")
    assert raised.value.code == "not_expressible"
    assert model.inputs == []


def test_a_callers_own_filter_runs_first_and_the_bus_judges_its_result() -> None:
    def theirs(data: Any) -> Any:
        items = [dict(i, content="mail bob@example.org") for i in data.model_data.input]
        return agents.run_config.ModelInputData(input=items, instructions="Theirs.")

    bus = bus_of()
    bus.register(hw.builtins.RedactPii, settings={})
    run, agent, model, _seen = under(bus, [[say("done")]])
    config = agents.RunConfig(call_model_input_filter=theirs)
    result = asyncio.run(run.run(agent, "hello", run_config=config))
    assert result.final_output == "done"
    assert texts(model.inputs[0]) == ["mail [redacted:email]"]
    assert model.instructions == ["Theirs."]


def test_task_start_rewrites_a_list_of_input_items(tmp_path: Path) -> None:
    run, agent, model, _seen = under(agent_guards(tmp_path), [[say("done")]])
    items = [{"role": "user", "content": "write to jane@example.com"}]
    assert asyncio.run(run.run(agent, items)).final_output == "done"
    assert texts(model.inputs[0]) == ["write to [redacted:email]"]
    assert items == [{"role": "user", "content": "write to jane@example.com"}]  # not mutated


def test_a_streamed_run_applies_the_rewrites_too(tmp_path: Path) -> None:
    run, agent, model, _seen = under(
        agent_guards(tmp_path), [[call("lookup", {"order": "7"})], [say("done")]]
    )

    async def go() -> Any:
        stream = await run.run_streamed(agent, "Order 7, reply to jane@example.com")
        async for _event in stream.stream_events():
            pass
        return stream.result

    assert asyncio.run(go()).final_output == "done"
    assert texts(model.inputs[0]) == ["Order 7, reply to [redacted:email]"]


def test_the_loop_guards_warning_reaches_the_model_and_the_run_goes_on() -> None:
    bus = bus_of()
    bus.register(hw.builtins.LoopGuard, settings={"warn_after": 2, "block_after": 4})
    same = [call("lookup", {"order": "7"}, call_id=f"c{n}") for n in range(3)]
    run, agent, model, seen = under(bus, [[same[0]], [same[1]], [same[2]], [say("done")]])
    result = asyncio.run(run.run(agent, "order 7"))
    assert result.final_output == "done"
    assert seen == ["7", "7", "7"]
    notes = [t for t in texts(model.inputs[2]) if t.startswith("[harness notice]")]
    assert len(notes) == 1 and "lookup" in notes[0]


def test_a_rewritten_text_keeps_the_messages_other_parts(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(
        "middleware:\n  - {use: harnessweaver.redact_pii, id: pii, hooks: [model.before]}\n",
        encoding="utf-8",
    )
    run, agent, model, _seen = under(hw.load(spec), [[say("done")]])
    image = {"type": "input_image", "image_url": "https://example.invalid/a.png", "detail": "auto"}
    items = [
        {
            "role": "user",
            "content": [{"type": "input_text", "text": "who is jane@example.com?"}, image],
        }
    ]
    assert asyncio.run(run.run(agent, items)).final_output == "done"
    [sent] = model.inputs[0]
    assert sent["content"] == [{"type": "input_text", "text": "who is [redacted:email]?"}, image]
