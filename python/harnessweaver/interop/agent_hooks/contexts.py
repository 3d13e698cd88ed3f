"""AGENT-HOOKS contexts (its §4) built from harnessweaver events, and transformed targets
(its §5.2) written back into the event.

Each interception point maps to one hook point (:data:`POINTS`); ``task.start`` carries two
(``agent_startup``, then ``input``) and so does ``task.end`` (``output``, then
``agent_shutdown``). ``step.start`` and ``step.end`` have no counterpart. A context is built
anew for every call, so an interceptor that changes the one it is given changes nothing else
(its §7, vector AH-CTK-104).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from ...events import (
    Message,
    ModelRequestEvent,
    ModelResponseEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResultEvent,
)

__all__ = [
    "HOOK_BY_EVENT",
    "HOOK_OF",
    "POINTS",
    "SPEC",
    "TARGETS",
    "build",
    "retarget",
    "target_of",
    "uncall",
    "unmessage",
    "write_back",
]

SPEC: Final = "agent-hooks/0.1"
POINTS: Final[dict[str, tuple[str, ...]]] = {
    "task.start": ("agent_startup", "input"),
    "model.before": ("pre_model_call",),
    "model.after": ("post_model_call",),
    "tool.before": ("pre_tool_call",),
    "tool.after": ("post_tool_call",),
    "task.end": ("output", "agent_shutdown"),
}
"""Hook point → the interception points it carries, in the order they are asked."""
HOOK_OF: Final[dict[str, str]] = {
    point: hook for hook, points in POINTS.items() for point in points
}
"""Interception point → its hook point."""
HOOK_BY_EVENT: Final[dict[type, str]] = {
    TaskStartEvent: "task.start",
    ModelRequestEvent: "model.before",
    ModelResponseEvent: "model.after",
    ToolCallEvent: "tool.before",
    ToolResultEvent: "tool.after",
    TaskEndEvent: "task.end",
}
"""The hook point whose chain a middleware is given an event of this type in."""

TARGETS: Final[dict[str, str]] = {
    "agent_startup": "agent_init",
    "input": "input",
    "pre_model_call": "messages",
    "post_model_call": "response",
    "pre_tool_call": "tool_call.args",
    "post_tool_call": "tool_result.value",
    "output": "output",
    "agent_shutdown": "summary",
}
"""Interception point → the member its ``$target`` is (its §4.2)."""

_SHUTDOWN_REASONS: Final = {"completed": "completed", "cancelled": "cancelled"}
"""A run's exit reason as ``summary.reason`` (completed, cancelled, error): any other is an
error."""


def _thaw(value: Any) -> Any:
    """A plain copy of a frozen JSON value: an interceptor may change what it is given."""
    if isinstance(value, dict):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(item) for item in value]
    return value


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        out["tool_calls"] = [_call(call) for call in message.tool_calls]
    return out


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "args": _thaw(call.arguments)}


def unmessage(raw: Any) -> Message:
    if not isinstance(raw, dict):
        raise ValueError(f"a transformed message must be an object, got {raw!r}")
    calls = tuple(uncall(call) for call in raw.get("tool_calls", ()))
    return Message.model_validate({**raw, "tool_calls": calls})


def uncall(raw: Any) -> ToolCall:
    if not isinstance(raw, dict):
        raise ValueError(f"a transformed tool call must be an object, got {raw!r}")
    return ToolCall(id=raw.get("id", ""), name=raw.get("name", ""), arguments=raw.get("args", {}))


def _payload(point: str, event: Any, tools: list[str]) -> dict[str, Any]:
    """The point's members (its §4.2)."""
    if point == "agent_startup":  # the task.start event names no tools: the caller's
        return {"agent_init": {"tools_registered": list(tools)}}
    if point == "input":
        return {"input": {"content": _thaw(event.input), "role": "user"}}
    if point == "pre_model_call":
        request = event.request
        messages = [_message(m) for m in request.messages]
        return {"model": {"id": request.model}, "messages": messages}
    if point == "post_model_call":  # model.after's event names no model
        message = event.response.message
        response = {
            "content": message.content,
            "tool_calls": [_call(call) for call in message.tool_calls],
            "finish_reason": event.response.stop_reason,
        }
        return {"model": {"id": ""}, "response": response}
    if point == "output":
        return {"output": {"content": _thaw(event.output)}}
    if point == "agent_shutdown":
        return {"summary": {"reason": _SHUTDOWN_REASONS.get(event.exit_reason, "error")}}
    call = {"id": event.call.id or f"{event.tool.name}-{event.step}", "name": event.tool.name}
    call["args"] = _thaw(event.call.arguments)
    if point == "pre_tool_call":
        return {"tool_call": call}
    result = {"value": _thaw(event.result.output), "is_error": event.result.is_error}
    return {"tool_call": call, "tool_result": result}


def _at(members: dict[str, Any], where: str) -> Any:
    value: Any = members
    for step in where.split("."):
        value = value[step]
    return value


def target_of(point: str, event: Any) -> Any:
    """What ``$target`` is at ``point`` for ``event``."""
    return _at(_payload(point, event, []), TARGETS[point])


def retarget(context: dict[str, Any], target: Any) -> dict[str, Any]:
    """``context`` with its target (and the member it is) replaced by ``target``."""
    where = TARGETS[context["interception_point"]].split(".")
    out = {**context, "target": target}
    holder = out
    for step in where[:-1]:
        holder[step] = {**holder[step]}
        holder = holder[step]
    holder[where[-1]] = target
    return out


def build(
    point: str,
    event: Any,
    *,
    now: datetime,
    sequence: int,
    session: str,
    agent: str,
    tools: list[str],
) -> dict[str, Any]:
    """The context of ``event`` at ``point``: the envelope (its §4.1), ``target`` and the
    point's members (its §4.2); ``tools``: the tools ``agent_startup`` lists."""
    members = _payload(point, event, tools)
    stamp = now.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return {
        "spec": SPEC,
        "interception_point": point,
        "timestamp": stamp,
        "sequence": sequence,
        "agent": {"id": agent, "framework": "harnessweaver"},
        "session": {"id": session},
        "target": _at(members, TARGETS[point]),
        **members,
    }


def _messages(event: ModelRequestEvent, target: Any) -> ModelRequestEvent:
    if not isinstance(target, list):
        raise ValueError(f"transformed messages must be a list, got {target!r}")
    request = event.request.model_copy(update={"messages": tuple(map(unmessage, target))})
    return event.model_copy(update={"request": request})


def _response(event: ModelResponseEvent, target: Any) -> ModelResponseEvent:
    if not isinstance(target, dict):
        raise ValueError(f"a transformed response must be an object, got {target!r}")
    calls = tuple(uncall(call) for call in target.get("tool_calls", ()))
    message = Message.model_validate(
        {
            **event.response.message.model_dump(),
            "content": target.get("content", ""),
            "tool_calls": calls,
        }
    )
    stop = target.get("finish_reason", event.response.stop_reason)
    response = event.response.model_copy(update={"message": message, "stop_reason": stop})
    return event.model_copy(update={"response": response})


def _args(event: ToolCallEvent, target: Any) -> ToolCallEvent:
    if not isinstance(target, dict):
        raise ValueError(f"transformed tool arguments must be an object, got {target!r}")
    return event.updated({"call.arguments": target})


def _value(event: ToolResultEvent, target: Any) -> ToolResultEvent:
    return event.updated({"result.output": target})


def _input(event: TaskStartEvent, target: Any) -> TaskStartEvent:
    return event.updated({"input": _content(target)})


def _output(event: TaskEndEvent, target: Any) -> TaskEndEvent:
    return event.updated({"output": _content(target)})


def _content(target: Any) -> Any:
    if not isinstance(target, dict) or "content" not in target:
        raise ValueError(f"a transformed payload must be an object with content, got {target!r}")
    return target["content"]


_WRITERS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "input": _input,
    "pre_model_call": _messages,
    "post_model_call": _response,
    "pre_tool_call": _args,
    "post_tool_call": _value,
    "output": _output,
}


def write_back(point: str, event: Any, target: Any) -> Any:
    """``event`` with the point's payload replaced by the transformed ``target``.

    ``ValueError`` where the point takes no transform (``agent_startup``, ``agent_shutdown``:
    its §4.3) or the target does not fit the event."""
    writer = _WRITERS.get(point)
    if writer is None:
        raise ValueError(f"no transform is permitted at {point} (AGENT-HOOKS §4.3)")
    return writer(event, target)
