"""What ends an SDK run for the bus: :class:`HarnessStopped`, and when an outcome calls for it.

Where the SDK has no way to refuse one operation and go on (a model call, the run's start
or end, a tool the adapter did not guard), every outcome but a plain ``Continue`` ends the
run: the safer mapping (``docs/integrations/openai-agents.md``).
"""

from __future__ import annotations

from typing import Any

from agents.exceptions import AgentsException

from ...outcomes import Block, Continue, Escalate, HookResult, Retry, Suspend

__all__ = ["HarnessStopped", "kind_of", "not_expressible", "stop_for"]


def kind_of(outcome: Any) -> str:
    """``block``, ``suspend``, ``escalate``, ``retry`` or ``continue``."""
    for kind, cls in (
        ("block", Block),
        ("suspend", Suspend),
        ("escalate", Escalate),
        ("retry", Retry),
    ):
        if isinstance(outcome, cls):
            return kind
    return "continue"


class HarnessStopped(AgentsException):
    """The bus's answer ended the run: ``hook`` is the hook point, ``outcome`` the combined
    outcome's kind (``block``, ``suspend``, ``escalate``, ``retry``, or ``modified`` for a
    change the SDK cannot carry out), ``reason`` and ``code`` the outcome's own.

    An ``AgentsException``, so the SDK lets it through unchanged: ``Runner.run`` raises it.
    """

    def __init__(self, hook: str, outcome: str, reason: str | None, code: str | None) -> None:
        self.hook = hook
        self.outcome = outcome
        self.reason = reason
        self.code = code
        super().__init__(f"harnessweaver stopped the run at {hook}: {outcome} ({reason})")


def stop_for(hook: str, result: HookResult, event: Any, what: str) -> HarnessStopped | None:
    """The stop that ``result`` calls for at a point where the SDK can only go on or end:
    ``None`` for a ``Continue`` that left ``event`` as it was, else the run ends. A change
    (``Continue(modified)``) ends it too, since the SDK would go on with ``what`` unchanged."""
    outcome = result.outcome
    if isinstance(outcome, Continue):
        if result.event == event:
            return None
        return not_expressible(hook, what)
    return HarnessStopped(hook, kind_of(outcome), outcome.reason, outcome.code)


def not_expressible(hook: str, what: str) -> HarnessStopped:
    """The end of a run for a change the SDK cannot carry out (``modified``)."""
    reason = f"a middleware changed the {what} in a way the OpenAI Agents SDK cannot carry out"
    return HarnessStopped(hook, "modified", reason, "not_expressible")
