"""The three agents' hook protocols: which event goes to which hook point, and how each
decision is written back, following each agent's published hook schema.

- Claude Code: ``hookSpecificOutput.permissionDecision`` allow/deny/ask, and
  ``updatedInput`` (alone: the user's permission settings then judge the rewritten call) at
  ``PreToolUse``; ``decision: "block"`` + ``reason`` at
  ``PostToolUse``, ``UserPromptSubmit`` and ``Stop`` (at ``Stop`` it means *keep working*);
  ``continue: false`` + ``stopReason`` stops the agent.
- Codex CLI: the same shapes, but ``PreToolUse`` takes no ``ask`` (Codex treats it as an
  invalid answer and runs the tool) and rewrites only with ``permissionDecision: "allow"``
  + ``updatedInput``; a deny needs a non-empty reason. Codex 0.169 sends ``SessionEnd``.
- Gemini CLI: ``decision: "deny"`` + ``reason``; ``hookSpecificOutput.tool_input`` (merged
  into the model's arguments), ``llm_request``, ``llm_response``; ``continue: false`` +
  ``stopReason``. No ask. ``AfterTool`` ignores ``tool_output`` (0.61): a rewritten result
  is a deny there. ``SessionStart``/``SessionEnd`` are advisory.

An event an agent sends that the table does not map (the agents add events faster than
this table follows) is answered neutrally, as one with no hook point.

A decision an event cannot express takes the safer one that it can (never the tool running
unchecked): see ``docs/integrations/coding-agents.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .fields import text
from .freetext import restored
from .protocol import Decision, HookInputError, Reply, Request

if TYPE_CHECKING:
    from .options import HookOptions

__all__ = ["AGENTS", "Agent", "agent_for", "parse"]

_CANNOT = "harnessweaver: the harness rewrote this {what}, which {agent} cannot apply here; {then}"


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent: its name as ``--agent`` takes it, its events (name → hook point; ``None``
    or absent: none), what it calls itself in messages, how it answers, and how it answers
    a rewritten tool call (``--rewrite``)."""

    name: str
    title: str
    events: Mapping[str, str | None]
    reply: Callable[[Agent, Request, Decision], Reply]
    rewrite: str = "settings"
    adapt: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The agent's document in the common field names (``hook_event_name``, ``session_id``,
    ``tool_name``, ``tool_input``, ``tool_response``), for agents that name them otherwise."""
    fail: Callable[[str], Reply] | None = None
    """The fail-closed answer for the line ``message``, for agents where exit 2 does not block
    (default: exit 2 with the line on stderr)."""

    def answer(self, request: Request, decision: Decision) -> Reply:
        """The reply to ``decision`` on ``request``, in this agent's terms."""
        return self.reply(self, request, decision)


def agent_for(options: HookOptions) -> Agent:
    """The agent of ``options``, answering rewrites as ``--rewrite`` says."""
    agent = AGENTS[options.agent]
    return agent if options.rewrite is None else replace(agent, rewrite=options.rewrite)


def parse(agent: Agent, raw: bytes) -> Request:
    """The event document ``raw`` (stdin) as a request; :class:`HookInputError` naming what
    is wrong otherwise.

    An event the table does not map (one the agent added after this table was written, or
    one it has that maps to no hook point) is a request with no hook point: answered
    neutrally, whatever else the document holds. One that maps to a hook point needs its
    session."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"stdin is not a JSON document: {type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise HookInputError(f"stdin must hold a JSON object, got a {type(doc).__name__}")
    if agent.adapt is not None:
        doc = agent.adapt(doc)
    name = text(doc, "hook_event_name", "the event document")
    hook = agent.events.get(name)
    if hook is None:  # nothing reads the session: it is not checked
        session = doc.get("session_id")
        return Request(agent.name, name, session if isinstance(session, str) else "", None, doc)
    session = text(doc, "session_id", name)
    if not session:
        raise HookInputError(f"{name}: field 'session_id' must not be empty")
    return Request(agent.name, name, session, hook, doc)


_NOTHING_TO_REWRITE = frozenset({"SessionStart", "SessionEnd", "Stop", "AfterAgent"})
"""Events whose event carries nothing the agent would take back: a rewrite there changes
nothing the agent does (the session's source, its end, the end of a turn)."""


_REWROTE = "harnessweaver rewrote this tool call's input"
_APPROVE = _REWROTE + "; approve the rewritten call"
_NO_ASK = (
    _REWROTE + ", and --rewrite ask wants a person to approve it; {agent} cannot ask here, "
    "so the call is refused"
)


def _rewritten(agent: Agent, request: Request, decision: Decision) -> dict[str, Any]:
    """The rewritten call's input as the agent takes it back: the event's arguments, with
    the model's free text the harness never saw (``freetext``) given back."""
    original = request.doc.get("tool_input")
    return restored(
        agent.name,
        str(request.doc.get("tool_name")),
        decision.event.call.arguments,
        original if isinstance(original, dict) else {},
    )


def _specific(name: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": name, **fields}}


def _stop(reason: str) -> dict[str, Any]:
    return {"continue": False, "stopReason": reason}


# -- Claude Code and Codex ----------------------------------------------------------------


def _claude_like(agent: Agent, request: Request, decision: Decision) -> Reply:
    kind, reason, name = decision.kind, decision.reason, request.name
    codex = agent.name == "codex"
    if kind == "continue" or (kind == "modify" and name in _NOTHING_TO_REWRITE):
        return Reply()
    if name == "PreToolUse":
        if kind == "modify":
            return Reply(_pre_tool_rewrite(agent, request, decision))
        if kind == "allow":  # approved through the approvals book (hookcmd/approve.py)
            if codex and decision.event is None:
                return Reply()  # Codex's "allow" is its rewrite form: the neutral answer runs it
            return Reply(_approved(request, decision, reason=not codex))
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
            reason = _CANNOT.format(what=what, agent=agent.title, then=then)
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


def _approved(request: Request, decision: Decision, *, reason: bool) -> dict[str, Any]:
    """``allow``: a person approved this very call (``harnessweaver approvals approve``);
    with ``updatedInput`` when the approval edited its arguments (Codex: no reason, as in its
    rewrite form)."""
    fields: dict[str, Any] = {"permissionDecision": "allow"}
    if reason:
        fields["permissionDecisionReason"] = decision.reason
    if decision.event is not None:
        original = request.doc.get("tool_input")
        fields["updatedInput"] = restored(
            request.agent,
            str(request.doc.get("tool_name")),
            decision.event.call.arguments,
            original if isinstance(original, dict) else {},
        )
    return _specific(request.name, **fields)


def _pre_tool_rewrite(agent: Agent, request: Request, decision: Decision) -> dict[str, Any]:
    """A rewritten call at ``PreToolUse``, as ``--rewrite`` says (measured in ``claude -p``):

    - ``settings``: Claude Code gets ``updatedInput`` alone; it applies it, and the user's
      own permission settings judge the rewritten call as they would any call;
    - ``allow``: ``allow`` + ``updatedInput``: the call runs without Claude Code's approval
      prompt (the user's deny and ask rules still apply, to the rewritten input);
    - ``ask``: ``ask`` + ``updatedInput``: a person approves the rewritten call (headless,
      nobody can: the call is refused).

    Codex applies a rewrite only with ``allow`` (it rejects ``updatedInput`` without it), and
    has no ask: ``ask`` refuses the call there."""
    name, updated = request.name, _rewritten(agent, request, decision)
    if agent.rewrite == "ask":
        if agent.name == "codex":
            why = _NO_ASK.format(agent=agent.title)
            return _specific(name, permissionDecision="deny", permissionDecisionReason=why)
        return _specific(
            name, permissionDecision="ask", permissionDecisionReason=_APPROVE, updatedInput=updated
        )
    if agent.name == "codex":
        return _specific(name, permissionDecision="allow", updatedInput=updated)
    if agent.rewrite == "allow":
        return _specific(
            name,
            permissionDecision="allow",
            permissionDecisionReason=_REWROTE,
            updatedInput=updated,
        )
    return _specific(name, updatedInput=updated)


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
    "SessionEnd": "task.end",  # sent by Codex 0.169 (not in its published schema before)
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


def _gemini(agent: Agent, request: Request, decision: Decision) -> Reply:
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
        if agent.rewrite == "ask":  # no ask in Gemini CLI: a person cannot approve it
            return Reply(_deny(_NO_ASK.format(agent=agent.title), "block"))
        updated = _rewritten(agent, request, decision)
        dropped = sorted(set(request.doc.get("tool_input", {})) - set(updated))
        if dropped:  # Gemini merges tool_input into the arguments: it cannot remove a key
            why = _CANNOT.format(
                what="tool call (it removed " + ", ".join(dropped) + ")",
                agent="Gemini CLI",
                then="the call is refused",
            )
            return Reply(_deny(why, "block"))
        return Reply({"hookSpecificOutput": {"tool_input": updated}})
    if name == "AfterTool":  # Gemini 0.61 ignores tool_output: the result is replaced
        why = _CANNOT.format(what="tool result", agent="Gemini CLI", then="the result is withheld")
        return Reply(_deny(why, "block"))
    if name == "BeforeModel":
        roles = {"user": "user", "assistant": "model", "system": "system", "tool": "user"}
        messages = [{"role": roles[m.role], "content": m.content} for m in event.request.messages]
        sent = request.doc["llm_request"].get("messages", [])
        if len(messages) < len(sent):  # Gemini merges by index: a dropped message stays
            why = _CANNOT.format(
                what="model request (it removed messages)",
                agent="Gemini CLI",
                then="the request is refused",
            )
            return Reply(_deny(why, "block"))
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
    "claude-code": Agent("claude-code", "Claude Code", CLAUDE_EVENTS, _claude_like),
    "codex": Agent("codex", "Codex", CODEX_EVENTS, _claude_like),
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
