"""Rewriting the text of an event: what the redacting built-ins share.

Each function applies a text rewrite (``str -> str``) to every string of one part of an event
and returns the modified event, or ``None`` when the rewrite changed nothing: a middleware
then answers a plain ``Continue()`` instead of building a copy nobody needs (the trace says
``modified: false``, and later middleware keep the very same event).

What counts as the text of each event:

- ``task.start``: the task's input, every string at any depth (keys are left alone);
- ``tool.before``: the call's arguments, the same way;
- ``tool.after``: the result's output, the same way;
- ``model.before``: each message's content and the arguments of the tool calls it carries
  (what the model provider receives).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import JsonValue

from ..events import (
    Message,
    ModelRequestEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResultEvent,
)

__all__ = [
    "Rewrite",
    "check_pattern",
    "rewrite_json",
    "rewrite_messages",
    "rewrite_request",
    "rewrite_task_input",
    "rewrite_tool_call",
    "rewrite_tool_result",
]

Rewrite = Callable[[str], str]
"""A text rewrite, such as ``pattern.sub`` with a replacement."""


def check_pattern(pattern: str) -> str:
    """``pattern`` if it is a regular expression fit for redaction, else ``ValueError``.

    A pattern that matches the empty string would put a replacement between every two
    characters of every text, so it is refused along with patterns that do not compile.
    """
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    if compiled.fullmatch("") is not None:
        raise ValueError(f"the regular expression {pattern!r} matches the empty string")
    return pattern


def _text(text: str, rewrite: Rewrite) -> str:
    new = rewrite(text)
    return text if new == text else new


def rewrite_json(value: JsonValue, rewrite: Rewrite) -> JsonValue:
    """``value`` with every string rewritten; the very same object when nothing changed."""
    if isinstance(value, str):
        return _text(value, rewrite)
    if isinstance(value, dict):
        items = {key: rewrite_json(item, rewrite) for key, item in value.items()}
        changed = any(items[key] is not item for key, item in value.items())
        return items if changed else value
    if isinstance(value, list):
        elements = [rewrite_json(item, rewrite) for item in value]
        changed = any(new is not old for new, old in zip(elements, value, strict=True))
        return elements if changed else value
    return value


def _arguments(call: ToolCall, rewrite: Rewrite) -> ToolCall:
    arguments = rewrite_json(call.arguments, rewrite)
    return call if arguments is call.arguments else call.model_copy(update={"arguments": arguments})


def rewrite_messages(messages: Sequence[Message], rewrite: Rewrite) -> tuple[Message, ...] | None:
    """The messages with their contents and tool-call arguments rewritten, or ``None``."""
    changed = False
    out: list[Message] = []
    for message in messages:
        content = _text(message.content, rewrite)
        calls = tuple(_arguments(call, rewrite) for call in message.tool_calls)
        same_calls = all(new is old for new, old in zip(calls, message.tool_calls, strict=True))
        if content is not message.content or not same_calls:
            changed = True
            message = message.model_copy(update={"content": content, "tool_calls": calls})
        out.append(message)
    return tuple(out) if changed else None


def rewrite_request(event: ModelRequestEvent, rewrite: Rewrite) -> ModelRequestEvent | None:
    """``model.before``: the request with its messages rewritten, or ``None``."""
    messages = rewrite_messages(event.request.messages, rewrite)
    if messages is None:
        return None
    request = event.request.model_copy(update={"messages": messages})
    return event.model_copy(update={"request": request})


def rewrite_task_input(event: TaskStartEvent, rewrite: Rewrite) -> TaskStartEvent | None:
    """``task.start``: the task with its input rewritten, or ``None``."""
    value = rewrite_json(event.input, rewrite)
    return None if value is event.input else event.model_copy(update={"input": value})


def rewrite_tool_call(event: ToolCallEvent, rewrite: Rewrite) -> ToolCallEvent | None:
    """``tool.before``: the call with its arguments rewritten, or ``None``."""
    call = _arguments(event.call, rewrite)
    return None if call is event.call else event.model_copy(update={"call": call})


def rewrite_tool_result(event: ToolResultEvent, rewrite: Rewrite) -> ToolResultEvent | None:
    """``tool.after``: the result with its output rewritten, or ``None``."""
    output = rewrite_json(event.result.output, rewrite)
    if output is event.result.output:
        return None
    result = event.result.model_copy(update={"output": output})
    return event.model_copy(update={"result": result})
