"""Cursor's agent hook protocol (``.cursor/hooks.json``, ``version: 1``).

Every document carries ``hook_event_name`` and ``conversation_id`` (the session: it is the
same across a conversation's events). What Cursor reads back:

- ``preToolUse`` (every tool, shell and MCP included): ``permission`` allow/deny +
  ``user_message`` / ``agent_message``, and ``updated_input`` (the tool input used instead);
- ``beforeSubmitPrompt``: ``continue: false`` + ``user_message`` refuses the prompt;
- ``stop``: ``followup_message`` submits one more prompt (a retry);
- ``postToolUse`` / ``postToolUseFailure``: ``additional_context`` for the model only: a result
  cannot be withheld;
- ``sessionStart``: ``continue`` + ``user_message``; ``sessionEnd``: nothing.

Exit 2 denies; any other failure (a crash, a timeout, JSON Cursor cannot read) lets the
action run unless the hook entry has ``failClosed: true``, which ``--print-config`` always
writes. ``beforeShellExecution`` / ``beforeMCPExecution`` / ``beforeReadFile`` are not wired:
``preToolUse`` sees the same calls, and each call counts once.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from .agents import _CANNOT, Agent
from .limits import check_depth
from .protocol import Decision, Reply, Request

__all__ = ["CURSOR", "CURSOR_EVENTS", "adapt", "answer"]

CURSOR_EVENTS: dict[str, str | None] = {
    "sessionStart": "task.start",
    "beforeSubmitPrompt": "step.start",
    "preToolUse": "tool.before",
    "postToolUse": "tool.after",
    "postToolUseFailure": "tool.after",
    "stop": "step.end",
    "sessionEnd": "task.end",
    "beforeShellExecution": None,  # preToolUse sees the same call: counted once, there
    "afterShellExecution": None,
    "beforeMCPExecution": None,
    "afterMCPExecution": None,
    "beforeReadFile": None,
    "afterFileEdit": None,
    "afterAgentResponse": None,
    "afterAgentThought": None,
    "subagentStart": None,
    "subagentStop": None,
    "preCompact": None,
    "beforeTabFileRead": None,
    "afterTabFileEdit": None,
}

_TITLE = "Cursor"


def adapt(doc: dict[str, Any]) -> dict[str, Any]:
    """The common field names: the session is ``conversation_id`` (``session_id`` where only
    that is sent); ``postToolUse``'s ``tool_output`` (a JSON string) and
    ``postToolUseFailure``'s ``error_message`` become ``tool_response`` (the JSON string nested
    past the document's limit is refused as the document would be: :class:`~.limits.LimitError`)."""
    out = dict(doc)
    if "conversation_id" in out:
        out["session_id"] = out["conversation_id"]
    name = out.get("hook_event_name")
    if name == "postToolUse" and "tool_output" in out:
        output = out["tool_output"]
        if isinstance(output, str):
            check_depth(output.encode("utf-8", "surrogatepass"))  # JSON in a string: uncounted
            with contextlib.suppress(ValueError):  # plain text output stays text
                output = json.loads(output)
        out["tool_response"] = output
    elif name == "postToolUseFailure":
        error = out.get("error_message") or out.get("failure_type") or "the tool failed"
        out["tool_response"] = {"error": error, "failure_type": out.get("failure_type")}
    return out


def _deny(reason: str) -> dict[str, Any]:
    return {"permission": "deny", "user_message": reason, "agent_message": reason}


def answer(request: Request, decision: Decision) -> Reply:
    """Cursor's answer to ``decision`` at ``request``'s event."""
    kind, reason, name = decision.kind, decision.reason, request.name
    if kind == "continue" or name == "sessionEnd":
        return Reply()
    if name == "preToolUse":
        if kind == "modify":
            updated = dict(decision.event.call.arguments)
            return Reply({"permission": "allow", "updated_input": updated})
        if kind == "ask":  # Cursor does not always honour ask (auto-review runs the call)
            return Reply(_deny(f"harnessweaver: approval required: {reason}"))
        return Reply(_deny(reason))
    if name == "beforeSubmitPrompt":
        if kind == "modify":
            reason = _CANNOT.format(what="prompt", agent=_TITLE, then="the prompt is refused")
        return Reply({"continue": False, "user_message": reason})
    if name in ("postToolUse", "postToolUseFailure"):
        if kind == "modify":
            reason = _CANNOT.format(
                what="tool result", agent=_TITLE, then="do not rely on the result as shown"
            )
        note = f"harnessweaver refused this tool result: {reason}. Do not rely on it."
        return Reply({"additional_context": note})
    if name == "stop":
        if kind == "retry":
            return Reply({"followup_message": reason})
        return Reply()  # the agent is stopping anyway
    if name == "sessionStart":
        if kind == "modify":
            return Reply()
        return Reply({"continue": False, "user_message": f"harnessweaver: {reason}"})
    return Reply()  # pragma: no cover - every wired event is handled above


def _reply(agent: Agent, request: Request, decision: Decision) -> Reply:
    return answer(request, decision)  # one answer, whatever --rewrite says (see the docs page)


CURSOR = Agent("cursor", _TITLE, CURSOR_EVENTS, _reply, adapt=adapt)
