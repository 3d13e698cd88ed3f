"""LangChain's messages, tools and tool calls as harnessweaver's events' values, and back.

Every conversion back keeps LangChain's own object where harnessweaver's view of it did not
change, so a middleware that changes nothing changes nothing (ids, metadata and content
blocks are kept).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages import ToolCall as LcToolCall
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ...events import Message, ToolCall, ToolResult, ToolSpec, Usage

__all__ = [
    "ai_message",
    "hw_call",
    "hw_message",
    "hw_messages",
    "hw_result",
    "hw_tool",
    "hw_usage",
    "lc_call",
    "lc_messages",
    "model_name",
    "tool_message",
]

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def hw_call(call: LcToolCall) -> ToolCall:
    return ToolCall(id=call.get("id") or "", name=call["name"], arguments=call["args"])


def lc_call(call: ToolCall, like: LcToolCall) -> LcToolCall:
    """``call`` as LangChain's tool call; the id stays the model's (results pair by id)."""
    return LcToolCall(
        name=call.name, args=dict(call.arguments), id=like.get("id"), type="tool_call"
    )


def hw_message(message: BaseMessage) -> Message:
    role = _ROLES.get(message.type, "user")
    calls = tuple(hw_call(c) for c in message.tool_calls) if isinstance(message, AIMessage) else ()
    return Message(
        role=role,
        content=message.text,
        name=message.name,
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        tool_calls=calls,
    )


def hw_messages(
    system: SystemMessage | None, messages: Sequence[BaseMessage]
) -> tuple[Message, ...]:
    head = (hw_message(system),) if system is not None else ()
    return (*head, *(hw_message(m) for m in messages))


def _lc_message(message: Message) -> AnyMessage:
    if message.role == "system":
        return SystemMessage(content=message.content, name=message.name)
    if message.role == "user":
        return HumanMessage(content=message.content, name=message.name)
    if message.role == "tool":
        return ToolMessage(
            content=message.content, tool_call_id=message.tool_call_id or "", name=message.name
        )
    calls = [
        LcToolCall(name=c.name, args=dict(c.arguments), id=c.id or None, type="tool_call")
        for c in message.tool_calls
    ]
    return AIMessage(content=message.content, name=message.name, tool_calls=calls)


def lc_messages(changed: Sequence[Message], original: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``changed`` as LangChain messages: an unchanged message stays LangChain's own."""
    seen = [(hw_message(m), m) for m in original]
    return [next((lc for hw, lc in seen if hw == m), None) or _lc_message(m) for m in changed]


def hw_tool(tool: BaseTool | dict[str, Any]) -> ToolSpec:
    function = convert_to_openai_tool(tool)["function"]
    return ToolSpec(
        name=function["name"],
        description=function.get("description", ""),
        parameters=function.get("parameters", {}),
    )


def hw_usage(message: BaseMessage | None) -> Usage:
    meta = message.usage_metadata if isinstance(message, AIMessage) else None
    if not meta:
        return Usage()
    return Usage(input_tokens=meta["input_tokens"], output_tokens=meta["output_tokens"])


def ai_message(message: Message, like: AIMessage) -> AIMessage:
    """A changed response as LangChain's message, with the model's message id."""
    if hw_message(like) == message:
        return like
    out = _lc_message(message.model_copy(update={"role": "assistant"}))
    assert isinstance(out, AIMessage)
    return out.model_copy(update={"id": like.id, "usage_metadata": like.usage_metadata})


def hw_result(message: ToolMessage) -> ToolResult:
    content = message.content
    output: Any = content if isinstance(content, str) else list(content)
    return ToolResult(output=output, is_error=message.status == "error")


def tool_message(result: ToolResult, like: ToolMessage) -> ToolMessage:
    """A changed result as LangChain's tool message, answering the same call."""
    if hw_result(like) == result:
        return like
    output = result.output
    content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return ToolMessage(
        content=content,
        tool_call_id=like.tool_call_id,
        name=like.name,
        id=like.id,
        status="error" if result.is_error else "success",
    )


def model_name(model: Any) -> str:
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str):
            return value
    return ""
