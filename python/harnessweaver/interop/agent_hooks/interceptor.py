"""A harnessweaver bus as one AGENT-HOOKS interceptor, for another host (Microsoft Agent
Framework, the SDK's ``InterceptionEmitter``): an org's layered ``harness.yaml`` runs
unchanged inside an agent that speaks that contract.

Each context becomes the event of its hook point (the reverse of ``contexts.py``) and is
emitted on the bus, in a run context per session; the combined outcome becomes the verdict.
``agent_startup`` emits nothing (the task starts with its input); ``agent_shutdown`` emits
``task.end`` only when ``output`` did not (a run that stopped before its output). Message
content that is not text (a host's structured parts) is shown to the bus as its JSON text;
a rewrite of such an event cannot be written back faithfully, so it is refused (a deny), not
dropped: dropping it would let through what a redaction meant to remove.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ...bus import HookBus
from ...context import RunContext
from ...envelope import Envelope
from ...events import (
    Message,
    ModelRequest,
    ModelRequestEvent,
    ModelResponse,
    ModelResponseEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
)
from ...outcomes import Continue, HookResult, Suspend
from .contexts import HOOK_OF, target_of, uncall

__all__ = ["BusInterceptor"]


_ROLES = frozenset({"system", "user", "assistant", "tool"})


class _Session:
    __slots__ = ("ctx", "ended", "lossy", "step")

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.step = 0
        self.ended = False
        self.lossy = False
        """Whether the event of the current context says less than the context (a host's
        structured message content, shown to the bus as JSON text)."""


def _text(content: Any, session: _Session) -> str:
    """Message content as the bus's events hold it (text): other JSON as its JSON text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    session.lossy = True
    return json.dumps(content, ensure_ascii=False, sort_keys=True, default=str)


def _message(raw: Any, session: _Session) -> Message:
    if not isinstance(raw, dict):
        raise ValueError(f"a message is an object, got {type(raw).__name__}")
    role = raw.get("role")
    if role not in _ROLES:
        session.lossy, role = True, "user"
    calls = tuple(uncall(call) for call in raw.get("tool_calls") or ())
    return Message(
        role=role,
        content=_text(raw.get("content"), session),
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
        tool_call_id=raw.get("tool_call_id") if isinstance(raw.get("tool_call_id"), str) else None,
        tool_calls=calls,
    )


def _tool(context: dict[str, Any]) -> tuple[ToolSpec, ToolCall]:
    call = context["tool_call"]
    spec = ToolSpec(name=call["name"])
    return spec, ToolCall(id=call["id"], name=call["name"], arguments=call.get("args", {}))


class BusInterceptor:
    """``bus`` as an ``agent_hooks.Interceptor`` (``await intercept(context)``).

    ``task``: the task name ``task.start`` carries. ``new_context``: the run context of a new
    session, given its id (by default one whose envelope's run id is the session id). The
    newest ``max_sessions`` sessions keep theirs; a session ends at ``agent_shutdown``.
    """

    def __init__(
        self,
        bus: HookBus,
        *,
        task: str = "",
        new_context: Callable[[str], RunContext] | None = None,
        max_sessions: int = 1024,
    ) -> None:
        self.bus = bus
        self.task = task
        self.new_context = new_context or (lambda run: RunContext(envelope=Envelope(run_id=run)))
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def _session(self, context: dict[str, Any]) -> _Session:
        key = str(context["session"]["id"])
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session(self.new_context(key))
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        return session

    def _event(self, point: str, context: dict[str, Any], session: _Session) -> Any:
        if point == "input":
            return TaskStartEvent(task=self.task, input=context["input"]["content"])
        session.lossy = False
        if point == "pre_model_call":
            session.step += 1
            messages = tuple(_message(m, session) for m in context["messages"])
            request = ModelRequest(model=context["model"]["id"], messages=messages)
            return ModelRequestEvent(step=session.step, request=request)
        if point == "post_model_call":
            raw = context["response"]
            calls = tuple(uncall(c) for c in raw.get("tool_calls") or ())
            content = _text(raw.get("content"), session)
            message = Message(role="assistant", content=content, tool_calls=calls)
            response = ModelResponse(message=message, stop_reason=raw.get("finish_reason", ""))
            return ModelResponseEvent(step=session.step, response=response)
        if point == "pre_tool_call":
            spec, call = _tool(context)
            return ToolCallEvent(step=session.step, tool=spec, call=call)
        if point == "post_tool_call":
            spec, call = _tool(context)
            raw = context["tool_result"]
            result = ToolResult(output=raw.get("value"), is_error=bool(raw.get("is_error")))
            return ToolResultEvent(step=session.step, tool=spec, call=call, result=result)
        if point == "output":
            session.ended = True
            return TaskEndEvent(output=context["output"]["content"], steps=session.step)
        reason = context["summary"].get("reason", "error")
        return TaskEndEvent(exit_reason=reason, steps=session.step)

    async def intercept(self, context: dict[str, Any], /) -> Any:
        """The bus's combined outcome on the event of ``context``, as a verdict."""
        from agent_hooks import ALLOW

        point = context["interception_point"]
        session = self._session(context)
        if point == "agent_startup" or (point == "agent_shutdown" and session.ended):
            if point == "agent_shutdown":
                self._sessions.pop(str(context["session"]["id"]), None)
            return ALLOW
        event = self._event(point, context, session)
        result = await self.bus.emit(HOOK_OF[point], event, session.ctx)
        if point == "agent_shutdown":
            self._sessions.pop(str(context["session"]["id"]), None)
        return _verdict(point, event, result, session.lossy)


def _verdict(point: str, event: Any, result: HookResult, lossy: bool = False) -> Any:
    """A combined outcome as a verdict: Continue allows (a modified event transforms the
    target); Block denies; Suspend and Escalate are a liftable deny (the host's approval
    seam decides); Retry, which the contract cannot express, denies."""
    from agent_hooks import Decision, Transform, Verdict, Warning

    outcome = result.outcome
    warnings = tuple(Warning(reason=w.middleware, message=w.text) for w in result.warnings)
    if isinstance(outcome, Continue):
        if result.event is event or point == "agent_shutdown":  # nothing to rewrite there
            return Verdict(decision=Decision.ALLOW, warnings=warnings)
        if lossy:  # written back, the rewrite would lose what the bus never saw: refuse it
            return Verdict(
                decision=Decision.DENY,
                reason="harnessweaver:rewrite_not_expressible",
                message="the bus rewrote content it was shown as text; the host's form is kept",
                warnings=warnings,
            )
        changed = Transform("$target", target_of(point, result.event))
        return Verdict(decision=Decision.TRANSFORM, transform=changed, warnings=warnings)
    reason = getattr(outcome, "code", None) or f"harnessweaver:{outcome.kind}"
    said: str | None = getattr(outcome, "reason", None)
    liftable = isinstance(outcome, Suspend) or outcome.kind == "escalate"
    approval: dict[str, Any] | None = {} if liftable else None
    return Verdict(
        decision=Decision.DENY, reason=reason, message=said, warnings=warnings, approval=approval
    )
