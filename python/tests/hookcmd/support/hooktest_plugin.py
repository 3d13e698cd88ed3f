"""Middleware for the hook command's tests: an outcome chosen by environment variables, and a
recorder of what each invocation emitted."""

from __future__ import annotations

import json
import os
from typing import Any

import harnessweaver as hw

HOOKS = [
    "task.start",
    "step.start",
    "model.before",
    "model.after",
    "tool.before",
    "tool.after",
    "step.end",
    "task.end",
]


def _hook_of(event: Any) -> str:
    return next(hook for hook, kind in hw.EVENT_TYPES.items() if type(event) is kind)


def _modified(event: Any) -> Any:
    if isinstance(event, hw.ToolCallEvent):
        if os.environ.get("HW_TEST_DROP"):
            return event.updated({"call.arguments": {"command": "echo safe"}})
        return event.updated({"call.arguments.command": "echo safe"})
    if isinstance(event, hw.ToolResultEvent):
        return event.updated({"result.output": "[redacted]"})
    if isinstance(event, hw.ModelRequestEvent):
        return event.updated({"request.messages.1.content": "[redacted]"})
    if isinstance(event, hw.ModelResponseEvent):
        return event.updated({"response.message.content": "[redacted]"})
    if isinstance(event, hw.StepStartEvent):
        return event.updated({"messages.0.content": "[redacted]"})
    return event.updated({"step": 99}) if hasattr(event, "step") else event.updated({"task": "x"})


@hw.middleware(hooks=HOOKS, fail_mode="closed")
async def scripted(event: Any, env: hw.Envelope) -> Any:
    """Answers ``HW_TEST_OUTCOME`` at ``HW_TEST_HOOK``; records every event it sees."""
    record = os.environ.get("HW_TEST_RECORD")
    hook = _hook_of(event)
    if record:
        with open(record, "a", encoding="utf-8") as out:
            line = {"hook": hook, "run": env.run_id, "step": getattr(event, "step", None)}
            out.write(json.dumps(line) + "\n")
    if os.environ.get("HW_TEST_HOOK") != hook:
        return None
    outcome = os.environ.get("HW_TEST_OUTCOME")
    if outcome == "warn":  # I24: a Continue with two warnings
        return hw.Continue(warnings=["mind the budget", "second"])
    if outcome == "block-warn":
        return hw.Block("scripted refusal", code="scripted", warnings=["logged for review"])
    if outcome == "block":
        return hw.Block("scripted refusal", code="scripted")
    if outcome == "suspend":
        return hw.Suspend("a person must approve this")
    if outcome == "escalate":
        return hw.Escalate("scripted escalation")
    if outcome == "retry":
        return hw.Retry("scripted retry: do better")
    if outcome == "modify":
        return hw.Continue(modified=_modified(event))
    if outcome == "drop-message":  # a model request with its last message left out
        request = event.request.model_copy(update={"messages": event.request.messages[:-1]})
        return hw.Continue(modified=event.model_copy(update={"request": request}))
    if outcome == "raise":
        raise RuntimeError("scripted failure")
    if outcome == "exit":  # a middleware that ends the process: never exit 1 (go on)
        raise SystemExit(1)
    return None


plugin = hw.Plugin(namespace="hooktest", version="1.0.0", middleware=[scripted])
