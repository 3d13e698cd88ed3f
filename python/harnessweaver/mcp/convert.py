"""MCP tool calls as the bus's events, and the bus's answers as MCP tool results.

A ``tools/call`` is a ``ToolCallEvent``: the tool as the upstream listed it (name,
description, input schema) and the call's arguments. Its result is a ``ToolResultEvent``
whose ``result.output`` is the result's JSON form without its ``_meta`` and ``isError``:
``{"content": [...]}``, plus ``"structuredContent"`` when the upstream gave one. A
middleware that rewrites the output (a redaction) rewrites what the client receives.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from ..events import ToolCall, ToolCallEvent, ToolResult, ToolResultEvent, ToolSpec

__all__ = [
    "META_KEY",
    "REFUSED",
    "arguments_of",
    "call_event",
    "refusal",
    "result_event",
    "rewritten",
    "tool_spec",
]

META_KEY = "dev.harnessweaver/decision"
"""The ``_meta`` key of a result the proxy answered itself: what was decided, and its code."""

REFUSED = "harnessweaver refused the call"
"""How the text of every refusal starts, so a model (and a person) can tell who refused."""


def tool_spec(tool: types.Tool | None, name: str) -> ToolSpec:
    """The tool as the model was offered it; a tool the upstream did not list is its name only
    (a guard that needs the schema sees none, and decides on what it has)."""
    if tool is None:
        return ToolSpec(name=name)
    return ToolSpec(
        name=name, description=tool.description or "", parameters=dict(tool.input_schema)
    )


def call_event(
    spec: ToolSpec, call_id: str, arguments: dict[str, Any] | None, step: int
) -> ToolCallEvent:
    call = ToolCall(id=call_id, name=spec.name, arguments=arguments or {})
    return ToolCallEvent(step=step, tool=spec, call=call)


def arguments_of(event: ToolCallEvent) -> dict[str, Any]:
    """The (maybe rewritten) arguments as plain JSON values, for the upstream."""
    arguments: dict[str, Any] = event.call.model_dump(mode="json")["arguments"]
    return arguments


def result_event(before: ToolCallEvent, result: types.CallToolResult) -> ToolResultEvent:
    output = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    output.pop("_meta", None)
    output.pop("isError", None)
    output.pop("resultType", None)
    tool_result = ToolResult(output=output, is_error=bool(result.is_error))
    return ToolResultEvent(step=before.step, tool=before.tool, call=before.call, result=tool_result)


def rewritten(event: ToolResultEvent, original: types.CallToolResult) -> types.CallToolResult:
    """The result the client receives after a middleware rewrote ``event``'s output.

    An output that is no longer an MCP result (a middleware made it a string, say) is given as
    one text content holding it, so the client still receives a result it can read."""
    output = event.result.model_dump(mode="json")["output"]
    if not isinstance(output, dict) or not isinstance(output.get("content"), list):
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        output = {"content": [{"type": "text", "text": text}]}
    data = {**output, "isError": bool(event.result.is_error)}
    if original.meta is not None:
        data["_meta"] = original.meta
    return types.CallToolResult.model_validate(data, by_alias=True)


def refusal(
    decision: str, reason: str, code: str | None, approval: str | None = None
) -> types.CallToolResult:
    """A result the proxy answers itself: ``isError`` with the reason and code as text (the
    MCP way to tell a model a call failed), the decision and code under ``_meta`` (and the
    approval record it names, when it filed one)."""
    text = f"{REFUSED}: {reason}" + (f" (code: {code})" if code else "")
    meta: dict[str, Any] = {"outcome": decision}
    if code:
        meta["code"] = code
    if approval:
        meta["approval"] = approval
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        is_error=True,
        _meta={META_KEY: meta},
    )
