"""An agent's event document as the event of its hook point (``docs/events.md``).

The run is the agent's session (``env.run_id`` is its ``session_id``); the step is the
session's turn, counted by the command (each prompt submitted starts one). A shell call's
arguments leave out the model's free-text ``description`` (``freetext``); a tool result is a
failure as each agent reports one (``failure``).

Gemini CLI's ``llm_request`` holds text only (its hook translator keeps the text parts of
each turn and drops turns with none): the model's tool calls and their results never reach a
``BeforeModel`` document, so ``model.before`` sees the conversation's text and nothing of its
tool history.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    Event,
    Message,
    ModelRequest,
    ModelRequestEvent,
    ModelResponse,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
)
from .failure import failed
from .fields import obj, opt_str, text
from .freetext import judged
from .protocol import HookInputError, Request

__all__ = ["GEMINI_ROLES", "build_event"]

GEMINI_ROLES = {"user": "user", "model": "assistant", "system": "system"}
"""Gemini's message roles as harnessweaver's (and back, reversed)."""


def build_event(request: Request, step: int, task: str | None) -> Event:
    """The event of ``request.hook`` for ``request``'s document, at ``step``."""
    doc, name, hook = request.doc, request.name, request.hook
    if hook in ("tool.before", "tool.after"):
        tool = text(doc, "tool_name", name)
        arguments = judged(request.agent, tool, obj(doc, "tool_input", name))
        call = ToolCall(id=opt_str(doc, "tool_use_id", name), name=tool, arguments=arguments)
        if hook == "tool.before":
            return ToolCallEvent(step=step, tool=ToolSpec(name=tool), call=call)
        result = _result(request.agent, doc)
        return ToolResultEvent(step=step, tool=ToolSpec(name=tool), call=call, result=result)
    if hook == "step.start":
        prompt = text(doc, "prompt", name)
        return StepStartEvent(step=step, messages=(Message(role="user", content=prompt),))
    if hook == "step.end":
        return StepEndEvent(step=step)
    if hook == "task.start":
        return TaskStartEvent(task=task or "", input={"source": opt_str(doc, "source", name)})
    if hook == "task.end":
        return TaskEndEvent(
            exit_reason="completed", steps=step, output={"reason": opt_str(doc, "reason", name)}
        )
    if hook == "model.before":
        return ModelRequestEvent(step=step, request=_llm_request(obj(doc, "llm_request", name)))
    if hook == "model.after":
        return ModelResponseEvent(step=step, response=_llm_response(obj(doc, "llm_response", name)))
    raise HookInputError(f"{name}: no hook point {hook!r}")  # pragma: no cover - table bug


def _result(agent: str, doc: dict[str, Any]) -> ToolResult:
    name = str(doc.get("hook_event_name"))
    if name == "PostToolUseFailure":  # Claude Code: the tool failed; ``error`` says why
        return ToolResult(output=opt_str(doc, "error", name), is_error=True)
    if "tool_response" not in doc:
        raise HookInputError(f"{name}: field 'tool_response' is missing")
    output = doc["tool_response"]
    return ToolResult(output=output, is_error=failed(agent, doc))


def _llm_request(request: dict[str, Any]) -> ModelRequest:
    messages = request.get("messages", [])
    if not isinstance(messages, list):
        raise HookInputError("BeforeModel: field 'llm_request.messages' must be a list")
    return ModelRequest(
        model=str(request.get("model") or ""),
        messages=tuple(_message(item, "llm_request.messages") for item in messages),
    )


def _message(item: Any, where: str) -> Message:
    if not isinstance(item, dict) or item.get("role") not in GEMINI_ROLES:
        raise HookInputError(
            f"{where}: a message is {{role: user|model|system, content: string}}, got {item!r:.80}"
        )
    content = item.get("content", "")
    return Message(role=GEMINI_ROLES[item["role"]], content=str(content))


def _llm_response(response: dict[str, Any]) -> ModelResponse:
    candidates = response.get("candidates") or []
    first = candidates[0] if isinstance(candidates, list) and candidates else {}
    if not isinstance(first, dict):
        raise HookInputError("AfterModel: field 'llm_response.candidates[0]' must be an object")
    content = first.get("content") or {}
    parts = content.get("parts", []) if isinstance(content, dict) else []
    texts = [
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in parts
        if isinstance(part, str | dict)
    ]
    finish = first.get("finishReason")
    usage = Usage()
    meta = response.get("usageMetadata")
    if finish and isinstance(meta, dict):  # usage counts once, on the chunk that finishes
        prompt = int(meta.get("promptTokenCount") or 0)
        output = int(meta.get("candidatesTokenCount") or 0)
        if not (prompt or output):
            output = int(meta.get("totalTokenCount") or 0)
        usage = Usage(input_tokens=prompt, output_tokens=output)
    return ModelResponse(
        message=Message(role="assistant", content="".join(texts)),
        stop_reason=str(finish or ""),
        usage=usage,
    )
