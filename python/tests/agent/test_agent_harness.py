"""The harness around the run loop: built in code or from a spec, options set immutably,
the contract mode kept for the bus."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from agent_support import Counted, harness

import harnessweaver as hw


def test_a_harness_is_built_in_code_around_an_existing_bus() -> None:
    bus = hw.HookBus()
    lookup = Counted()
    h = hw.Harness.from_bus(bus, task="triage", tools=[lookup.tool], system="be brief")
    assert h.bus is bus
    assert (h.spec, h.entries, h.task) == (None, (), "triage")
    assert h.agent.tools == (lookup.tool,)
    assert h.render().startswith("chains of a harness built in code (task: triage, env: none)")


def test_with_agent_returns_a_new_harness_and_leaves_this_one_alone() -> None:
    h = harness()
    smaller = h.with_agent(budgets=hw.Budgets(max_steps=3), model="small")
    assert (smaller.agent.budgets.max_steps, smaller.agent.model) == (3, "small")
    assert (h.agent.budgets.max_steps, h.agent.model) == (25, "")
    assert smaller.agent.provider is h.agent.provider  # what was not changed is kept
    assert smaller.bus is h.bus
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.agent = hw.AgentOptions()  # type: ignore[misc]


def test_with_agent_checks_what_it_is_given() -> None:
    with pytest.raises(hw.AgentError, match=r"invalid max_retries -1: a retry bound") as caught:
        harness().with_agent(max_retries=-1)
    assert caught.value.rule == "agent-options"


def test_with_agent_takes_exactly_the_fields_of_the_options() -> None:
    # Approvals is imported for type checking only (the approvals package loads on first use)
    from harnessweaver.approvals import Approvals

    hints = typing.get_type_hints(hw.AgentChanges, localns={"Approvals": Approvals})  # type: ignore[attr-defined]
    keys = set(hints)
    assert keys == {field.name for field in dataclasses.fields(hw.AgentOptions)}


def test_the_trace_file_sits_beside_the_journal() -> None:
    options = hw.AgentOptions(journal="runs/r1.jsonl")
    assert options.trace_path == Path("runs/r1.trace.jsonl")
    assert hw.AgentOptions().trace_path is None


def test_a_loaded_harness_keeps_its_contract_mode(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("", encoding="utf-8")
    h = hw.load(spec, contracts="strict")
    assert h.contracts == "strict"
    assert hw.load(spec).contracts is None


def test_the_contract_mode_reaches_the_bus(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("", encoding="utf-8")
    assert hw.load(spec, contracts="warn").bus.contracts == "warn"
    assert hw.load(spec, contracts="strict").bus.contracts == "strict"
    assert hw.load(spec).bus.contracts is None


def test_an_unknown_contract_mode_is_refused_before_loading(tmp_path: Path) -> None:
    with pytest.raises(hw.HarnessweaverError) as caught:
        hw.load(tmp_path / "missing.yaml", contracts="loud")  # type: ignore[arg-type]
    assert (caught.value.kind, caught.value.rule) == ("invalid_contracts", "contracts")
    assert str(caught.value) == (
        "invalid contracts mode 'loud': a contract mode is 'warn' or 'strict' (contracts)"
    )


def test_the_spec_sets_the_contract_mode_and_the_argument_wins(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("contracts: strict\n", encoding="utf-8")
    assert hw.load(spec).bus.contracts == "strict"
    assert hw.load(spec).contracts == "strict"
    assert hw.load(spec, contracts="warn").bus.contracts == "warn"


def test_an_unknown_contract_mode_in_the_spec_names_file_line_and_rule(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: []\ncontracts: loud\n", encoding="utf-8")
    with pytest.raises(hw.SpecError) as caught:
        hw.load(spec)
    assert str(caught.value).splitlines()[-1].strip() == (
        "harness.yaml:2: contracts: invalid contracts mode 'loud': a contract mode is 'warn' "
        "or 'strict' (contracts)"
    )


def test_a_loaded_harness_runs_too(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: []\n", encoding="utf-8")
    h = hw.load(spec).with_agent(provider=hw.ScriptedProvider(["hello"]))
    result = h.run_sync("hi")
    assert (result.exit_reason, result.output) == ("completed", "hello")


def test_the_sync_helpers_run_on_either_backend() -> None:
    pytest.importorskip("trio")
    h = harness(
        hw.middleware(hooks=["tool.before"], fail_mode="closed", name="ask")(_ask_once),
        script=[hw.ScriptedProvider.tool_call("lookup", {"order": 1}), "done"],
        tools=[Counted().tool],
    )
    suspended = h.run_sync("go", backend="trio")
    assert suspended.exit_reason == "suspended"
    resumed = h.resume_sync(suspended.state, hw.Decision.approve(), backend="asyncio")
    assert resumed.output == "done"


async def _ask_once(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    return None if event.call.id != "call_1_1" else hw.Suspend("check")


def test_importing_harnessweaver_does_not_load_the_run_loop() -> None:
    import subprocess
    import sys

    code = "import sys, harnessweaver; assert 'harnessweaver.agent' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
