"""Typed, immutable events: one pydantic model per hook point of the catalogue.

The JSON form of every model (``model_dump(mode="json")``) is pinned by
``conformance/catalogue.json``; the TypeScript implementation produces the same form.
Middleware change an event by returning ``Continue(modified=event.model_copy(update=...))``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "EVENT_TYPES",
    "Event",
    "Message",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelResponse",
    "ModelResponseEvent",
    "StepEndEvent",
    "StepStartEvent",
    "TaskEndEvent",
    "TaskStartEvent",
    "ToolCall",
    "ToolCallEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Usage",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A call of a tool as the model asked for it."""

    id: str = ""
    name: str = ""
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class Message(_Frozen):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class ToolSpec(_Frozen):
    """A tool as offered to the model: its name, description and JSON Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, JsonValue] = Field(default_factory=dict)


class ToolResult(_Frozen):
    output: JsonValue = None
    is_error: bool = False
    truncated: bool = False


class Usage(_Frozen):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ModelRequest(_Frozen):
    model: str = ""
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()


class ModelResponse(_Frozen):
    message: Message
    stop_reason: str = "end_turn"
    usage: Usage = Usage()


class Event(_Frozen):
    """Base class of every hook point's event."""


class TaskStartEvent(Event):
    """``task.start``: a task begins."""

    task: str = ""
    input: JsonValue = None


class StepStartEvent(Event):
    """``step.start``: a step of the run loop begins."""

    step: int = 0
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()


class ModelRequestEvent(Event):
    """``model.before``: the request about to be sent to the model."""

    step: int = 0
    request: ModelRequest


class ModelResponseEvent(Event):
    """``model.after``: the model's response."""

    step: int = 0
    response: ModelResponse


class ToolCallEvent(Event):
    """``tool.before``: a tool call about to run (``event.tool.name``, ``event.call.arguments``)."""

    step: int = 0
    tool: ToolSpec
    call: ToolCall


class ToolResultEvent(Event):
    """``tool.after``: a tool call and its result."""

    step: int = 0
    tool: ToolSpec
    call: ToolCall
    result: ToolResult = ToolResult()


class StepEndEvent(Event):
    """``step.end``: a step finished, with the usage it cost."""

    step: int = 0
    usage: Usage = Usage()


class TaskEndEvent(Event):
    """``task.end``: the task finished, with its output and exit reason."""

    output: JsonValue = None
    exit_reason: str = "completed"
    steps: int = 0
    usage: Usage = Usage()


EVENT_TYPES: dict[str, type[Event]] = {
    "task.start": TaskStartEvent,
    "step.start": StepStartEvent,
    "model.before": ModelRequestEvent,
    "model.after": ModelResponseEvent,
    "tool.before": ToolCallEvent,
    "tool.after": ToolResultEvent,
    "step.end": StepEndEvent,
    "task.end": TaskEndEvent,
}
"""The event type of every hook point, in catalogue order."""
