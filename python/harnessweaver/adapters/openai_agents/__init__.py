"""The bus inside the OpenAI Agents SDK (the ``openai-agents`` extra).

```python
adapter = OpenAIAgentsAdapter(hw.load("harness.yaml"))   # or a bare hw.HookBus
agent = adapter.guard(agent)                              # its function tools, guarded
run = adapter.new_run(run_id="refund-7")                  # one hw.RunContext per run
result = await run.run(agent, "Refund order 7")
if result.interruptions:                                  # a Suspend at tool.before
    state = result.to_state()
    state.approve(result.interruptions[0])                # or state.reject(...)
    result = await run.run(agent, state)
```

What maps to what, and what the SDK cannot express: ``docs/integrations/openai-agents.md``.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, FunctionTool

from ...approvals import Approvals
from ...bus import HookBus
from ...context import Trace
from .model import guarded_model
from .run import GuardedRun, GuardedStream
from .stops import HarnessStopped
from .tools import denial, guard_tool, refusal

__all__ = [
    "GuardedRun",
    "GuardedStream",
    "HarnessStopped",
    "OpenAIAgentsAdapter",
    "denial",
    "guard_tool",
    "refusal",
]


class OpenAIAgentsAdapter:
    """Puts a harness's bus in front of OpenAI Agents SDK agents.

    ``source`` is a harness (``hw.load(...)``'s result: its ``.bus`` is used) or an
    ``hw.HookBus``. ``guard(agent)`` guards an agent's function tools; ``new_run()`` starts a
    run whose ``RunHooks`` emit the model and step points.
    """

    def __init__(self, source: Any, *, approvals: Approvals | None = None) -> None:
        bus = source if isinstance(source, HookBus) else getattr(source, "bus", None)
        if not isinstance(bus, HookBus):
            raise TypeError(
                f"OpenAIAgentsAdapter takes a harness (with .bus) or an hw.HookBus, got "
                f"{type(source).__name__}"
            )
        self.bus = bus
        own = getattr(source, "approvals", None)
        self.approvals = (
            approvals if approvals is not None else (own if isinstance(own, Approvals) else None)
        )
        """Where a suspended call is filed and consulted (docs/approvals.md): ``approvals=``,
        else the harness's."""

    def guard(self, agent: Agent[Any]) -> Agent[Any]:
        """A clone of ``agent`` whose function tools are guarded (others stay as they are:
        the run's hooks stop the run for them where the bus does not admit them), and so are
        the agents it hands off to, and theirs (each agent cloned once, cycles kept). A
        ``Handoff`` object (``handoff(agent, ...)``) hides its agent: guard the agent before
        wrapping it."""
        return self._guarded(agent, {})

    def _guarded(self, agent: Agent[Any], done: dict[int, Agent[Any]]) -> Agent[Any]:
        if id(agent) in done:
            return done[id(agent)]
        tools = [guard_tool(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        # its model wrapped: model.after is answered inside the call, where a Retry can call
        # the model again (model.py)
        clone = agent.clone(tools=tools, model=guarded_model(agent.model))
        done[id(agent)] = clone  # before its handoffs: one that hands back finds this clone
        clone.handoffs = [
            self._guarded(to, done) if isinstance(to, Agent) else to for to in agent.handoffs
        ]
        return clone

    def guard_tool(self, tool: FunctionTool) -> FunctionTool:
        return guard_tool(tool)

    def new_run(
        self, run_id: str | None = None, trace: Trace | None = None, *, max_retries: int = 2
    ) -> GuardedRun:
        """A run under the bus: a new ``hw.RunContext`` with ``run_id`` (random when not
        given) and ``trace`` (a new one when not given); ``max_retries`` bounds how often a
        ``Retry`` asks the chain again, as the run loop's option does."""
        return GuardedRun(
            self.bus,
            run_id=run_id,
            trace=trace,
            max_retries=max_retries,
            approvals=self.approvals,
        )
