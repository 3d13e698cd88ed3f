"""Every Python integration on one Redis budget and rate limit (issue 30, "Every
integration"): the run loop, the OpenAI Agents adapter and the LangChain adapter, each inside
its real framework (offline: the frameworks' own scripted models), run at once in one
process on a harness loaded from one spec whose ``state:`` is a real Redis on loopback. The
org rate limit is the binding limit; every model call it let through is charged to the org
budget exactly once, and none past the limit went out. (The Node worker and the hook command
on the same store: test_fleet.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")
pytest.importorskip("langchain")
pytest.importorskip("redis")

from fleet import Fleet

import harnessweaver as hw

RUNS = 6
"""Runs of each integration, one model call each."""
TOKENS = 15
"""What each model call uses (the frameworks' scripted models report 10 + 5)."""


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    from servers import redis_server

    with redis_server() as server:
        yield server.url


async def _run_loop(harness: Any, n: int) -> int:
    usage = hw.Usage(input_tokens=10, output_tokens=5)
    provider = hw.ScriptedProvider([hw.ScriptedProvider.text("done", usage=usage)])
    ctx = hw.RunContext(hw.Envelope(run_id=f"loop-{n}"))
    await harness.with_agent(provider=provider).run("go", ctx=ctx)
    return len(provider.requests)


async def _openai_agents(harness: Any, n: int) -> int:
    import agents

    from harnessweaver.adapters.openai_agents import HarnessStopped, OpenAIAgentsAdapter
    from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, say

    model = ScriptedModel([[say("done")]])
    adapter = OpenAIAgentsAdapter(harness.bus)
    agent = adapter.guard(agents.Agent(name="support", instructions="Help.", model=model))
    with contextlib.suppress(HarnessStopped):
        await adapter.new_run(run_id=f"oa-{n}").run(agent, f"question {n}")
    return len(model.inputs)


async def _langchain(harness: Any, n: int) -> int:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from harnessweaver.adapters.langchain import HarnessMiddleware

    answered: list[int] = []

    def script() -> Iterator[AIMessage]:
        answered.append(1)
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": TOKENS}
        yield AIMessage(content="done", usage_metadata=usage)  # type: ignore[arg-type]

    class Chat(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Chat:  # type: ignore[override]
            return self

    middleware = HarnessMiddleware(harness)
    agent = create_agent(Chat(messages=script()), [], middleware=[middleware])
    config: Any = {"configurable": {"thread_id": f"lc-{n}"}}
    with contextlib.suppress(Exception):  # a refused model call ends the agent its own way
        await agent.ainvoke({"messages": [{"role": "user", "content": f"question {n}"}]}, config)
    return len(answered)


def test_run_loop_and_adapters_share_one_budget_and_rate_limit(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    monkeypatch.setenv("HW_FLEET_URL", redis_url)
    import agents

    agents.set_tracing_disabled(True)
    attempts = 3 * RUNS
    fleet = Fleet(budget=100 * attempts * TOKENS, rate=attempts // 2)
    spec = tmp_path / "harness.yaml"
    spec.write_text(fleet.spec_text("redis").replace(f"reserve_tokens: {10}", "reserve_tokens: 15"))
    harness = hw.load(spec)

    async def everyone() -> list[list[int]]:
        """Rounds in which the three make a model call at once, until all made RUNS."""
        try:
            calls = (_run_loop, _openai_agents, _langchain)
            return [
                list(await asyncio.gather(*(c(harness, n) for c in calls))) for n in range(RUNS)
            ]
        finally:
            await harness.aclose()

    rounds = asyncio.run(everyone())
    made = [sum(column) for column in zip(*rounds, strict=True)]
    assert all(made), made  # each integration's calls went out until the limit was reached
    from fleet import totals

    tokens, counted = totals("redis", redis_url, fleet)
    assert sum(made) == fleet.rate, made  # exactly the limit went out, from all three
    assert counted == fleet.rate  # the rate limit counted each once
    assert tokens == TOKENS * sum(made)  # each one charged to the budget once, none lost
    assert os.environ["HW_FLEET_URL"] == redis_url
