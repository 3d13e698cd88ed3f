"""An interceptor written for the AGENT-HOOKS contract sits in a harness spec like any other
middleware: a local plugin declares it with ``interceptor_middleware`` (or a whole
``AgentHooksHost``), ``harness.yaml`` places it, ``harnessweaver hooks`` shows it, and the
run acts on its verdicts."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("agent_hooks")

import harnessweaver as hw

pytestmark = pytest.mark.anyio

PLUGIN = '''
import agent_hooks
import harnessweaver as hw
from harnessweaver.interop.agent_hooks import AgentHooksHost, interceptor_middleware


class NoShell:
    """An interceptor of the AGENT-HOOKS contract."""

    def intercept(self, context, /):
        call = context.get("tool_call", {})
        if context["interception_point"] == "pre_tool_call" and call.get("name") == "run_shell":
            return agent_hooks.Verdict.deny(reason="policy:no_shell", message="no shell")
        return agent_hooks.ALLOW


plugin = hw.Plugin(
    namespace="ah",
    version="0.1.0",
    middleware=[
        interceptor_middleware(
            NoShell(), name="no_shell", fail_mode="closed", at=["pre_tool_call"]
        ),
        AgentHooksHost([NoShell()], names=["no_shell"]).middleware(name="host"),
    ],
)
'''


@pytest.fixture
def spec(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "ah_policies.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (tmp_path / "harness.yaml").write_text(
        textwrap.dedent(
            """\
            plugins: {local: [ah_policies]}
            middleware:
              - {use: ah.no_shell, timeout: 2s}
            tasks:
              hosted:
                guardrails:
                  tool.before:
                    - {use: ah.host}
            """
        ),
        encoding="utf-8",
    )
    yield tmp_path / "harness.yaml"
    sys.modules.pop("ah_policies", None)


@hw.tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    return "ran"


async def test_the_interceptor_is_placed_shown_and_acted_on(spec: Path) -> None:
    harness = hw.load(spec)
    shown = harness.render()
    assert "no_shell" in shown and "2s" in shown
    shell = hw.ScriptedProvider.tool_call("run_shell", {"command": "ls"})
    agent = harness.with_agent(provider=hw.ScriptedProvider([shell, "ok"]), tools=[run_shell])
    result = await agent.run("list files")
    refused = [m.content for m in result.state.messages if m.role == "tool"]
    assert refused and "no shell" in refused[0]
    blocked = [r for r in result.trace if r.get("middleware") == "ah.no_shell"]
    said = [(r["hook"], r["outcome"], r.get("code")) for r in blocked if r["outcome"] != "continue"]
    assert said == [("tool.before", "block", "policy:no_shell")]


async def test_a_whole_host_sits_in_a_task(spec: Path) -> None:
    harness = hw.load(spec, task="hosted")
    chain = [(entry.name, entry.declaration.band) for entry in harness.chains()["tool.before"]]
    assert chain == [("ah.no_shell", "app"), ("ah.host", "task")]
