"""harnessweaver as an AGENT-HOOKS host, for its Conformance Test Kit (its §13).

:class:`HarnessweaverHarness` is the kit's ``Harness``: each vector's interceptors become
middleware (:func:`interceptor_middleware`, in the app band, fail-closed, in the order given:
harnessweaver's bus composes them), and harnessweaver's own run loop (``hw.Harness``) drives
the vector's scripted model and tools. Only model and tool input and output are scripted;
every decision is the bus's. ``nox -s interop`` runs the kit with it on both cores;
docs/interop-agent-hooks.md lists what passes and why the rest does not yet.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, create_model

from ...agent.provider import ScriptedProvider
from ...agent.tools import Tool
from ...bus import HookBus
from ...events import Message, ModelResponse, ToolCall
from ...outcomes import Block
from .host import AgentHooksHost

__all__ = ["HarnessweaverHarness"]

_OUTCOMES = {"completed": "completed", "blocked": "blocked", "suspended": "suspended"}


def _fails(context: Any) -> str:
    raise RuntimeError("the kit's failing identity provider")


def _response(scripted: Any) -> ModelResponse:
    calls = tuple(
        ToolCall(id=call.get("id", ""), name=call["name"], arguments=call.get("args", {}))
        for call in scripted.tool_calls
    )
    content = scripted.content if isinstance(scripted.content, str) else ""
    message = Message(role="assistant", content=content, tool_calls=calls)
    return ModelResponse(message=message, stop_reason=scripted.finish_reason)


class HarnessweaverHarness:
    """The kit's harness over harnessweaver's run loop (``--agent-hooks-harness=
    harnessweaver.interop.agent_hooks.ctk:HarnessweaverHarness``)."""

    name = "harnessweaver"
    tool_seam_host_error = "continue"

    def __init__(self) -> None:
        from agent_hooks.ctk import Capability

        self.capabilities = {
            Capability.MODEL_CALLS,
            Capability.TOOL_CALLS,
            Capability.INT64_JSON,
            Capability.BIGINT_JSON,
        }
        self._run: Any = None
        self.host: AgentHooksHost | None = None
        self._input: Any = None
        self._invoked: list[dict[str, Any]] = []

    def _tool(self, spec: Any) -> Tool[Any, Any]:
        def invoke(**args: Any) -> Any:
            value, _ = spec.invoke(args)
            self._invoked.append({"name": spec.name, "args": dict(args)})
            return value

        arguments = create_model(f"{spec.name}_arguments", __config__=ConfigDict(extra="allow"))
        return Tool(function=invoke, name=spec.name, description="", arguments=arguments)

    def setup(
        self,
        scenario: Any,
        interceptors: list[Any],
        resolver: Any,
        mode: Any,
        composition: Any = None,
        identity_provider: str | None = "jcs-sha256",
        redact_for_approval: list[str] | None = None,
    ) -> None:
        from agent_hooks import IdentityProvider
        from agent_hooks.ctk.scripted import redact_paths

        from ...spec.loader import Harness

        provider: Any = identity_provider
        if identity_provider == "ctk-fault":  # the kit's name for a provider that fails
            provider = IdentityProvider("ctk-fault", _fails)
        paths = list(redact_for_approval or ())
        self.host = AgentHooksHost(
            interceptors,
            mode=mode.value,
            composition=composition,
            approvals=resolver,
            identity_provider=provider,
            redact=(lambda context: redact_paths(context, paths)) if paths else None,
            tools=scenario.tools,
        )
        bus = HookBus()
        bus.register(self.host.middleware())
        provider = ScriptedProvider([_response(r) for r in scenario.model_script])
        offered = [self._tool(spec) for spec in scenario.tools.values()]
        self._run = Harness.from_bus(bus, task="ctk", provider=provider, tools=offered)
        self._input = scenario.input["content"]

    async def run(self) -> Any:
        from agent_hooks.ctk import RunOutcome, RunRecord

        result = await self._run.run(self._input)
        outcome = RunOutcome(_OUTCOMES.get(result.exit_reason, "error"))
        if isinstance(result.end_outcome, Block):  # a withheld output: the run was blocked
            outcome = RunOutcome.BLOCKED
        assert self.host is not None, "setup() builds the host"
        records = list(self.host.records)
        return RunRecord(
            outcome=outcome,
            final_output=result.output,
            tool_invocations=list(self._invoked),
            identities=[(r["input_identity"], r["enforced_identity"]) for r in records],
            records=records,
        )

    def teardown(self) -> None:
        self._run = self._input = None
