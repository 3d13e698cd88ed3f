"""VS Code's agent hooks (GitHub Copilot Chat; ``.github/hooks/*.json`` or Claude Code's
settings files), a Claude Code-compatible protocol.

The extension sends ``timestamp``, ``hook_event_name``, ``session_id`` (only when the chat
has one), ``transcript_path`` and the event's fields (``tool_name``, ``tool_input``,
``tool_use_id``, ``tool_response``, ``prompt``, ``stop_hook_active``, ...). What VS Code reads:

- ``PreToolUse``: ``hookSpecificOutput.permissionDecision`` allow/deny/ask +
  ``permissionDecisionReason`` + ``updatedInput`` (ignored when it does not match the tool's
  schema); with several hooks the most restrictive decision wins;
- ``PostToolUse``: ``decision: "block"`` + ``reason``;
- ``Stop``: ``decision: "block"`` + ``reason`` keeps the agent working;
- every event: ``continue: false`` + ``stopReason`` stops processing.

Exit 2 is a blocking error shown to the model; any other non-zero exit is a warning and the
agent goes on, so the command never exits with anything but 0 or 2. There is no
``SessionEnd`` event.
"""

from __future__ import annotations

from typing import Any

from .agents import _CANNOT, Agent, _specific, _stop
from .protocol import Decision, Reply, Request

__all__ = ["VSCODE", "VSCODE_EVENTS", "answer"]

VSCODE_EVENTS: dict[str, str | None] = {
    "SessionStart": "task.start",
    "UserPromptSubmit": "step.start",
    "PreToolUse": "tool.before",
    "PostToolUse": "tool.after",
    "PreCompact": None,
    "SubagentStart": None,
    "SubagentStop": None,
    "Stop": "step.end",
}

_TITLE = "VS Code"


def answer(request: Request, decision: Decision) -> Reply:
    """VS Code's answer to ``decision`` at ``request``'s event."""
    kind, reason, name = decision.kind, decision.reason, request.name
    if kind == "continue":
        return Reply()
    if name == "PreToolUse":
        if kind == "modify":  # ask: if VS Code drops the input as off-schema, a person sees it
            why = "harnessweaver rewrote this tool call's input; approve the rewritten call"
            return Reply(
                _specific(
                    name,
                    permissionDecision="ask",
                    permissionDecisionReason=why,
                    updatedInput=dict(decision.event.call.arguments),
                )
            )
        verdict = "ask" if kind == "ask" else "deny"
        denied = _specific(name, permissionDecision=verdict, permissionDecisionReason=reason)
        if kind == "stop":
            denied.update(_stop(reason))
        return Reply(denied)
    if name == "PostToolUse":
        if kind == "modify":
            reason = _CANNOT.format(
                what="tool result", agent=_TITLE, then="do not rely on the result as shown"
            )
        out: dict[str, Any] = {"decision": "block", "reason": reason}
        if kind == "stop":
            out.update(_stop(reason))
        return Reply(out)
    if name == "UserPromptSubmit":  # the common output only: stop processing the prompt
        if kind == "modify":
            reason = _CANNOT.format(what="prompt", agent=_TITLE, then="the prompt is refused")
        return Reply(_stop(reason))
    if name == "Stop":
        if kind == "retry":  # both shapes VS Code documents for Stop
            out = {"decision": "block", "reason": reason}
            out.update(_specific(name, decision="block", reason=reason))
            return Reply(out)
        if kind == "modify":
            return Reply()
        return Reply(_stop(reason or "harnessweaver: the harness ended the session"))
    if kind == "modify":  # SessionStart: nothing to rewrite
        return Reply()
    return Reply(_stop(reason or "harnessweaver: the harness refused the session"))


def _reply(agent: Agent, request: Request, decision: Decision) -> Reply:
    return answer(request, decision)  # one answer, whatever --rewrite says (see the docs page)


VSCODE = Agent("vscode", _TITLE, VSCODE_EVENTS, _reply)
