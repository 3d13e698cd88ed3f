"""Every built-in profile (and the built-in guards ``tool_denylist`` and ``shell_guard``)
through harnessweaver's own run loop, LangChain (``create_agent`` + ``HarnessMiddleware``)
and the OpenAI Agents SDK (``OpenAIAgentsAdapter``), each the real package, offline: each
runs to its end and its characteristic decision shows (issue 32). A built-in that cannot run
somewhere is found here. The hook command: ``test_profiles_hook_command.py``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from matrix_support import SCENARIOS, TOOL_NAMES, Played, Scenario, Tools, builtin_profiles
from matrix_support import write_spec as spec_in

import harnessweaver as hw

RUNNERS: dict[str, Callable[[Scenario, Path], Played]] = {}


def runner(name: str) -> Callable[[Callable[[Scenario, Path], Played]], Any]:
    def register(fn: Callable[[Scenario, Path], Played]) -> Any:
        RUNNERS[name] = fn
        return fn

    return register


def _texts(items: list[Any]) -> list[str]:
    return [text for text in items if isinstance(text, str) and text]


# --- harnessweaver's own run loop ------------------------------------------------------------


@runner("run-loop")
def run_loop(scenario: Scenario, folder: Path) -> Played:
    tools = Tools()
    turns = []
    for turn in scenario.script:
        if isinstance(turn, str):
            turns.append(hw.ScriptedProvider.text(turn))
        else:
            calls = (hw.ToolCall(id=i, name=name, arguments=args) for name, args, i in turn)
            turns.append(hw.ScriptedProvider.tool_calls(*calls))
    provider = hw.ScriptedProvider(turns)
    harness = hw.load(spec_in(scenario, folder)).with_agent(
        provider=provider, tools=[hw.tool(getattr(tools, name)) for name in TOOL_NAMES]
    )
    result = harness.run_sync(scenario.prompt)
    assert result.exit_reason == "completed", result.exit_reason
    read = [_texts([m.content for m in request.messages]) for request in provider.requests]
    return Played(str(result.output), tools.ran, read, result.trace.records())


# --- LangChain -------------------------------------------------------------------------------


@runner("langchain")
def langchain(scenario: Scenario, folder: Path) -> Played:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import StructuredTool

    from harnessweaver.adapters.langchain import HarnessMiddleware, ScriptedChatModel

    tools = Tools()
    script: list[str | AIMessage] = [
        turn
        if isinstance(turn, str)
        else AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in turn])
        for turn in scenario.script
    ]
    model = ScriptedChatModel(script=script)
    lc_tools = [StructuredTool.from_function(getattr(tools, name)) for name in TOOL_NAMES]
    middleware = HarnessMiddleware(hw.load(spec_in(scenario, folder)))
    agent = create_agent(model, lc_tools, middleware=[middleware])
    result = agent.invoke({"messages": [{"role": "user", "content": scenario.prompt}]})
    assert "__interrupt__" not in result
    read = [_texts([m.text for m in call]) for call in model.inputs]
    return Played(result["messages"][-1].text, tools.ran, read, middleware.trace.records())


# --- OpenAI Agents SDK -----------------------------------------------------------------------


@runner("openai-agents")
def openai_agents(scenario: Scenario, folder: Path) -> Played:
    agents = pytest.importorskip("agents")
    from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter
    from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say

    agents.set_tracing_disabled(True)
    tools = Tools()
    turns = [
        [say(turn)] if isinstance(turn, str) else [call(n, a, call_id=i) for n, a, i in turn]
        for turn in scenario.script
    ]
    model = ScriptedModel(turns)
    adapter = OpenAIAgentsAdapter(hw.load(spec_in(scenario, folder)))
    sdk_tools = [agents.function_tool(getattr(tools, name)) for name in TOOL_NAMES]
    agent = adapter.guard(agents.Agent(name="support", model=model, tools=sdk_tools))
    run = adapter.new_run()
    result = asyncio.run(run.run(agent, scenario.prompt))
    read = []
    for items in model.inputs:
        texts = []
        for item in items:
            if isinstance(item, dict):
                content = item.get("content", item.get("output"))
                texts.append(content if isinstance(content, str) else str(content or ""))
        read.append(_texts(texts))
    return Played(str(result.final_output), tools.ran, read, run.trace.records())


# --- the matrix ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY", "sk-dummy-offline"))


def test_every_builtin_profile_has_a_scenario() -> None:
    """A profile added to the package without a scenario here fails the suite."""
    profiles = builtin_profiles()
    assert profiles, "no built-in profiles found"
    assert set(profiles) <= set(SCENARIOS), set(profiles) - set(SCENARIOS)


@pytest.mark.parametrize("runner_name", sorted(RUNNERS))
@pytest.mark.parametrize("scenario_name", sorted(SCENARIOS))
def test_the_profile_runs_and_its_decision_shows(
    scenario_name: str, runner_name: str, tmp_path: Path
) -> None:
    scenario = SCENARIOS[scenario_name]
    played = RUNNERS[runner_name](scenario, tmp_path)
    scenario.check(played)


def _key(record: dict[str, Any]) -> tuple[Any, ...]:
    fields = ("kind", "hook", "middleware", "band", "outcome", "modified", "code", "step", "tool")
    return tuple(record.get(name) for name in fields)


@pytest.mark.parametrize("scenario_name", sorted(SCENARIOS))
def test_every_adapter_leaves_the_run_loops_records(scenario_name: str, tmp_path: Path) -> None:
    """The same profile, the same script: the same trace records (but the run id and the
    clock) through LangChain and the OpenAI Agents SDK as through the run loop; so a rewrite
    the loop applies is applied by each adapter (``modified: true``, the run goes on)."""
    scenario = SCENARIOS[scenario_name]
    played = {
        name: RUNNERS[name](scenario, tmp_path / name)
        for name in sorted(RUNNERS)
        if not (tmp_path / name).mkdir()
    }
    expected = [_key(record) for record in played["run-loop"].records]
    # the scenario's decision is in the records: a rewrite, a refusal or a retry
    assert any(key[4] != "continue" or key[5] for key in expected)
    for name, run in played.items():
        assert [_key(record) for record in run.records] == expected, name
