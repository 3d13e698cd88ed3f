"""The three agents' hook protocols: which event goes to which hook point, and how each
decision is written back, following each agent's published hook schema.

- Claude Code: ``hookSpecificOutput.permissionDecision`` allow/deny/ask with
  ``updatedInput`` at ``PreToolUse``; ``decision: "block"`` + ``reason`` at
  ``PostToolUse``, ``UserPromptSubmit`` and ``Stop`` (at ``Stop`` it means *keep working*);
  ``continue: false`` + ``stopReason`` stops the agent.
- Codex CLI: the same shapes, but ``PreToolUse`` takes no ``ask`` (Codex treats it as an
  invalid answer and runs the tool) and rewrites only with ``permissionDecision: "allow"``
  + ``updatedInput``; a deny needs a non-empty reason. There is no ``SessionEnd``.
- Gemini CLI: ``decision: "deny"`` + ``reason``; ``hookSpecificOutput.tool_input`` (merged
  into the model's arguments), ``tool_output``, ``llm_request``, ``llm_response``;
  ``continue: false`` + ``stopReason``. No ask. ``SessionStart``/``SessionEnd`` are
  advisory.

A decision an event cannot express takes the safer one that it can (never the tool running
unchecked): see ``docs/integrations/coding-agents.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .fields import text
from .protocol import Decision, HookInputError, Reply, Request

__all__ = ["AGENTS", "Agent", "parse"]

_CANNOT = "harnessweaver: the harness rewrote this {what}, which {agent} cannot apply here; {then}"


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent: its name as ``--agent`` takes it, its events (name → hook point or
    ``None``), what it calls itself in messages, and how it answers."""

    name: str
    title: str
    events: Mapping[str, str | None]
    answer: Callable[[Request, Decision], Reply]
    adapt: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The agent's document in the common field names (``hook_event_name``, ``session_id``,
    ``tool_name``, ``tool_input``, ``tool_response``), for agents that name them otherwise."""
    fail: Callable[[str], Reply] | None = None
    """The fail-closed answer for the line ``message``, for agents where exit 2 does not block
    (default: exit 2 with the line on stderr)."""


def parse(agent: Agent, raw: bytes) -> Request:
    """The event document ``raw`` (stdin) as a request; :class:`HookInputError` naming what
    is wrong otherwise."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"stdin is not a JSON document: {type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise HookInputError(f"stdin must hold a JSON object, got a {type(doc).__name__}")
    if agent.adapt is not None:
        doc = agent.adapt(doc)
    name = text(doc, "hook_event_name", "the event document")
    if name not in agent.events:
        known = ", ".join(agent.events)
        raise HookInputError(f"unknown {agent.title} event {name!r:.60}: the events are {known}")
    session = text(doc, "session_id", name)
    if not session:
        raise HookInputError(f"{name}: field 'session_id' must not be empty")
    return Request(agent.name, name, session, agent.events[name], doc)


_NOTHING_TO_REWRITE = frozenset({"SessionStart", "SessionEnd", "Stop", "AfterAgent"})
"""Events whose event carries nothing the agent would take back: a rewrite there changes
nothing the agent does (the session's source, its end, the end of a turn)."""


def _arguments(decision: Decision) -> dict[str, Any]:
    return dict(decision.event.call.arguments)


def _specific(name: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": name, **fields}}


def _stop(reason: str) -> dict[str, Any]:
    return {"continue": False, "stopReason": reason}


# -- Claude Code and Codex ----------------------------------------------------------------


def _claude_like(request: Request, decision: Decision, *, codex: bool) -> Reply:
    kind, reason, name = decision.kind, decision.reason, request.name
    title = "Codex" if codex else "Claude Code"
    if kind == "continue" or (kind == "modify" and name in _NOTHING_TO_REWRITE):
        return Reply()
    if name == "PreToolUse":
        if kind == "modify":
            updated = _arguments(decision)
            if codex:  # Codex applies a rewrite only with allow (no ask here)
                return Reply(_specific(name, permissionDecision="allow", updatedInput=updated))
            why = "harnessweaver rewrote this tool call's input; approve the rewritten call"
            return Reply(
                _specific(
                    name,
                    permissionDecision="ask",
                    permissionDecisionReason=why,
                    updatedInput=updated,
                )
            )
        if kind == "ask" and not codex:
            return Reply(_specific(name, permissionDecision="ask", permissionDecisionReason=reason))
        out = _specific(name, permissionDecision="deny", permissionDecisionReason=reason)
        if kind == "stop" and not codex:  # Codex rejects continue:false at PreToolUse
            out.update(_stop(reason))
        return Reply(out)
    if name in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit"):
        if kind == "modify":
            what = "prompt" if name == "UserPromptSubmit" else "tool result"
            then = (
                "the prompt is refused"
                if name == "UserPromptSubmit"
                else "do not rely on the result as shown"
            )
            reason = _CANNOT.format(what=what, agent=title, then=then)
        out = {"decision": "block", "reason": reason}
        if kind == "stop":
            out.update(_stop(reason))
        return Reply(out)
    if name == "Stop":
        if kind == "retry":  # block at Stop = keep working, with the reason as feedback
            return Reply({"decision": "block", "reason": reason})
        return Reply(_stop(reason or "harnessweaver: the harness ended the session"))
    if name == "SessionStart":
        return Reply(_stop(reason or "harnessweaver: the harness refused the session"))
    return Reply()  # SessionEnd: nothing can be refused any more


def _claude(request: Request, decision: Decision) -> Reply:
    return _claude_like(request, decision, codex=False)


def _codex(request: Request, decision: Decision) -> Reply:
    return _claude_like(request, decision, codex=True)


CLAUDE_EVENTS: dict[str, str | None] = {
    "SessionStart": "task.start",
    "UserPromptSubmit": "step.start",
    "PreToolUse": "tool.before",
    "PermissionRequest": None,  # after PreToolUse for the same call: counted once, there
    "PermissionDenied": None,
    "PostToolUse": "tool.after",
    "PostToolUseFailure": "tool.after",
    "Notification": None,
    "SubagentStart": None,
    "SubagentStop": None,
    "Stop": "step.end",
    "StopFailure": None,
    "PreCompact": None,
    "PostCompact": None,
    "SessionEnd": "task.end",
}

CODEX_EVENTS: dict[str, str | None] = {
    "SessionStart": "task.start",
    "UserPromptSubmit": "step.start",
    "PreToolUse": "tool.before",
    "PermissionRequest": None,
    "PostToolUse": "tool.after",
    "SubagentStart": None,
    "SubagentStop": None,
    "PreCompact": None,
    "PostCompact": None,
    "Stop": "step.end",
    "StopFailure": None,
}

# -- Gemini CLI ---------------------------------------------------------------------------

GEMINI_EVENTS: dict[str, str | None] = {
    "SessionStart": "task.start",
    "BeforeAgent": "step.start",
    "BeforeModel": "model.before",
    "BeforeToolSelection": None,
    "AfterModel": "model.after",
    "BeforeTool": "tool.before",
    "AfterTool": "tool.after",
    "AfterAgent": "step.end",
    "Notification": None,
    "PreCompress": None,
    "SessionEnd": "task.end",
}


def _deny(reason: str, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {"decision": "deny", "reason": reason}
    if kind == "stop":
        out.update(_stop(reason))
    return out


def _gemini(request: Request, decision: Decision) -> Reply:
    kind, reason, name = decision.kind, decision.reason, request.name
    if kind == "continue" or name == "SessionEnd":
        return Reply()
    if kind == "modify" and name in _NOTHING_TO_REWRITE:
        return Reply()
    if name == "SessionStart":  # advisory: the command refuses the session's later events
        return Reply({"systemMessage": f"harnessweaver: {reason}"})
    if name == "AfterAgent":
        if kind == "retry":  # deny at AfterAgent = retry the turn with the reason
            return Reply({"decision": "deny", "reason": reason})
        return Reply(_stop(reason or "harnessweaver: the harness ended the session"))
    if kind != "modify":
        return Reply(_deny(reason, kind))
    event = decision.event
    if name == "BeforeTool":
        updated = _arguments(decision)
        dropped = sorted(set(request.doc.get("tool_input", {})) - set(updated))
        if dropped:  # Gemini merges tool_input into the arguments: it cannot remove a key
            why = _CANNOT.format(
                what="tool call (it removed " + ", ".join(dropped) + ")",
                agent="Gemini CLI",
                then="the call is refused",
            )
            return Reply(_deny(why, "block"))
        return Reply({"hookSpecificOutput": {"tool_input": updated}})
    if name == "AfterTool":
        output = event.result.output
        shown = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return Reply({"hookSpecificOutput": {"tool_output": shown}})
    if name == "BeforeModel":
        roles = {"user": "user", "assistant": "model", "system": "system", "tool": "user"}
        messages = [{"role": roles[m.role], "content": m.content} for m in event.request.messages]
        return Reply({"hookSpecificOutput": {"llm_request": {"messages": messages}}})
    if name == "AfterModel":
        response = event.response
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [response.message.content]}
        }
        if response.stop_reason:
            candidate["finishReason"] = response.stop_reason
        return Reply({"hookSpecificOutput": {"llm_response": {"candidates": [candidate]}}})
    why = _CANNOT.format(what="prompt", agent="Gemini CLI", then="the prompt is refused")
    return Reply(_deny(why, "block"))  # BeforeAgent


AGENTS: dict[str, Agent] = {
    "claude-code": Agent("claude-code", "Claude Code", CLAUDE_EVENTS, _claude),
    "codex": Agent("codex", "Codex", CODEX_EVENTS, _codex),
    "gemini": Agent("gemini", "Gemini CLI", GEMINI_EVENTS, _gemini),
}


def _register() -> None:
    """The agents with a module of their own (imported last: they build on this one)."""
    from .copilot import COPILOT
    from .cursor import CURSOR
    from .vscode import VSCODE

    for agent in (COPILOT, CURSOR, VSCODE):
        AGENTS[agent.name] = agent


_register()
