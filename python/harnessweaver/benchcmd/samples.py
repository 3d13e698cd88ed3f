"""The sample events ``harnessweaver bench`` times when no ``--events FILE`` is given: one per
hook point, a refund asked for and made. The Node command uses exactly these JSON forms (the
shared contract of issue 34), so the two commands time the same events."""

from __future__ import annotations

from typing import Any, Final

from ..events import EVENT_TYPES, Event

__all__ = ["SAMPLES", "sample_events"]

_ASK: Final = {"role": "user", "content": "Refund order 1234"}
_TOOL: Final = {"name": "refund_payment", "description": "Refund a card payment"}
_CALL: Final = {
    "id": "call_1",
    "name": "refund_payment",
    "arguments": {"order_id": "1234", "amount_usd": 20},
}
_USAGE: Final = {"input_tokens": 120, "output_tokens": 30, "cost_usd": 0.001}

SAMPLES: Final[dict[str, dict[str, Any]]] = {
    "task.start": {"task": "sample", "input": {"request": "Refund order 1234"}},
    "step.start": {"step": 1, "messages": [_ASK], "tools": [_TOOL]},
    "model.before": {
        "step": 1,
        "request": {"model": "sample-model", "messages": [_ASK], "tools": [_TOOL]},
    },
    "model.after": {
        "step": 1,
        "response": {
            "message": {"role": "assistant", "content": "", "tool_calls": [_CALL]},
            "stop_reason": "tool_use",
            "usage": _USAGE,
        },
    },
    "tool.before": {"step": 1, "tool": _TOOL, "call": _CALL},
    "tool.after": {
        "step": 1,
        "tool": _TOOL,
        "call": _CALL,
        "result": {"output": {"status": "refunded", "amount_usd": 20}},
    },
    "step.end": {"step": 1, "usage": _USAGE},
    "task.end": {
        "output": "Refunded 20 USD for order 1234",
        "exit_reason": "completed",
        "steps": 1,
        "usage": _USAGE,
    },
}
"""The JSON form (``model_dump(mode="json")``) of each hook point's sample event."""


def sample_events() -> dict[str, list[Event]]:
    """Each hook point's sample event, validated into its event type, in catalogue order."""
    return {hook: [EVENT_TYPES[hook].model_validate(SAMPLES[hook])] for hook in EVENT_TYPES}
