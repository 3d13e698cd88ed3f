"""GitHub Copilot CLI's hook protocol (``.github/hooks/*.json``, ``version: 1``).

The command is wired under the PascalCase event names, for which Copilot CLI sends its
"VS Code compatible" documents: ``hook_event_name``, ``session_id``, ``tool_name``,
``tool_input`` (the camelCase names carry no event name at all). What Copilot CLI reads back:

- ``preToolUse``: ``permissionDecision`` allow/deny/ask + ``permissionDecisionReason``, and
  ``modifiedArgs`` (the arguments used instead of the model's);
- ``agentStop``: ``decision: "block"`` + ``reason`` forces another turn;
- ``postToolUseFailure``: exit 2 returns stderr to the model as recovery guidance;
- everything else (session start and end, the prompt, ``postToolUse`` for a command hook):
  output is not processed.

Copilot CLI logs and skips a hook that exits non-zero or times out: exit 2 does NOT block a
tool call there. So this agent fails closed with exit 0 and a ``deny`` on stdout (which the
events that take no decision ignore), never with exit 2.
"""

from __future__ import annotations

import json
from typing import Any

from .agents import _CANNOT, Agent
from .limits import check_depth
from .protocol import Decision, Reply, Request

__all__ = ["COPILOT", "COPILOT_EVENTS", "adapt", "answer", "fail"]

COPILOT_EVENTS: dict[str, str | None] = {
    "SessionStart": "task.start",
    "UserPromptSubmit": "step.start",
    "PreToolUse": "tool.before",
    "PostToolUse": "tool.after",
    "PostToolUseFailure": "tool.after",
    "Stop": "step.end",
    "SubagentStop": None,
    "PreCompact": None,
    "ErrorOccurred": None,
    "Notification": None,
    "SessionEnd": "task.end",
}

_TITLE = "Copilot CLI"


def adapt(doc: dict[str, Any]) -> dict[str, Any]:
    """The common field names: ``tool_input`` given as a JSON string is parsed (Copilot CLI
    parses it "when possible"; nested past the document's limit, it is refused as the document
    would be: :class:`~.limits.LimitError`), and ``PostToolUse``'s ``tool_result`` becomes
    ``tool_response`` (an object with ``error`` when ``result_type`` is not ``success``)."""
    out = dict(doc)
    raw = out.get("tool_input")
    if isinstance(raw, str):
        check_depth(raw.encode("utf-8", "surrogatepass"))  # JSON in a string: not yet counted
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw  # left a string: translate refuses it, the call is denied
        out["tool_input"] = parsed
    result = out.get("tool_result")
    if "tool_response" not in out and isinstance(result, dict):
        shown = result.get("text_result_for_llm", "")
        kind = result.get("result_type", "success")
        out["tool_response"] = shown if kind == "success" else {"error": shown or str(kind)}
    return out


def _both(**fields: Any) -> dict[str, Any]:
    """``fields`` at the top level (Copilot CLI's own shape) and under
    ``hookSpecificOutput`` (the Claude Code / VS Code shape it also reads): whichever one the
    CLI reads for a PascalCase-wired hook, it reads the same decision."""
    specific = {"hookEventName": "PreToolUse", **fields}
    if "modifiedArgs" in specific:
        specific["updatedInput"] = specific.pop("modifiedArgs")
    return {**fields, "hookSpecificOutput": specific}


def _deny(reason: str) -> dict[str, Any]:
    return _both(permissionDecision="deny", permissionDecisionReason=reason)


def fail(line: str) -> Reply:
    """Exit 0 with a deny on stdout and the line on stderr: a non-zero exit is "logged and
    skipped" by Copilot CLI, which would run the tool."""
    return Reply(_deny(line), 0, line)


def answer(request: Request, decision: Decision) -> Reply:
    """Copilot CLI's answer to ``decision`` at ``request``'s event."""
    kind, reason, name = decision.kind, decision.reason, request.name
    if kind == "continue":
        return Reply()
    if name == "PreToolUse":
        if kind == "modify":  # no decision: Copilot's own permission flow still applies
            return Reply(_both(modifiedArgs=dict(decision.event.call.arguments)))
        if kind == "ask":  # ask prompts only interactively; -p has nobody to ask
            return Reply(_deny(f"harnessweaver: approval required: {reason}"))
        return Reply(_deny(reason))
    if name == "PostToolUseFailure":  # exit 2: stderr is handed to the model as guidance
        if kind == "modify":
            reason = _CANNOT.format(
                what="tool result", agent=_TITLE, then="do not rely on the result as shown"
            )
        return Reply(None, 2, f"harnessweaver: {reason}")
    if name == "Stop" and kind == "retry":  # block at agentStop = one more turn
        return Reply({"decision": "block", "reason": reason})
    # SessionStart, UserPromptSubmit, PostToolUse, SessionEnd: Copilot CLI reads no answer.
    # A refused session start or an Escalate refuses the session's later tool calls
    # (command.py keeps the session blocked); the rest is said on stderr only.
    return Reply(None, 0, f"harnessweaver: {reason}" if reason else None)


def _reply(agent: Agent, request: Request, decision: Decision) -> Reply:
    return answer(request, decision)  # one answer, whatever --rewrite says (see the docs page)


COPILOT = Agent("copilot", _TITLE, COPILOT_EVENTS, _reply, adapt=adapt, fail=fail)
