"""The SDK's values as harnessweaver's: input items as messages, a model response, tool specs.

Best effort and one way only: what the bus sees is what the SDK asked for or answered, so a
middleware can judge it; nothing here is converted back (a rewritten model request or
response cannot be handed to the SDK, and the adapter refuses it: ``docs/integrations``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agents import Agent, Handoff, handoff
from pydantic_core import to_jsonable_python

from ...events import Message, ModelResponse, ToolCall, ToolSpec, Usage
from ...jsondepth import nests_deeper

__all__ = [
    "arguments_of",
    "handoff_specs",
    "jsonable",
    "messages_of",
    "model_name",
    "response_of",
    "specs_of",
]

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def _get(item: Any, key: str) -> Any:
    """A field of an input or output item: the SDK gives dicts or pydantic models."""
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        parts = (_get(part, "text") for part in content)
        return "".join(part for part in parts if isinstance(part, str))
    return ""


def jsonable(value: Any) -> Any:
    """A tool output or argument as JSON (text for what has no JSON form)."""
    try:
        return to_jsonable_python(value)
    except Exception:  # an object pydantic cannot serialise: the model reads its str() anyway
        return str(value)


MAX_ARGUMENTS_DEPTH: Final = 128
"""How deeply a model's tool-call arguments may nest: the hook command's and the chat
provider's bound; deeper arguments are not a JSON object the bus reads (issue 28)."""


def arguments_of(text: str | None) -> dict[str, Any] | None:
    """A tool call's JSON arguments as an object; ``None`` when they are not a JSON object
    (or nest deeper than :data:`MAX_ARGUMENTS_DEPTH`)."""
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        return None
    if not isinstance(parsed, dict) or nests_deeper(parsed, MAX_ARGUMENTS_DEPTH):
        return None
    return parsed


def _call(item: Any) -> ToolCall:
    arguments = arguments_of(_get(item, "arguments"))
    return ToolCall(
        id=str(_get(item, "call_id") or ""),
        name=str(_get(item, "name") or ""),
        arguments=arguments if arguments is not None else {},
    )


def messages_of(system: str | None, items: Iterable[Any]) -> tuple[Message, ...]:
    """The conversation as the model is asked it: the system prompt, then each message, tool
    call and tool output of the input items (other items, e.g. reasoning, are left out)."""
    messages = [Message(role="system", content=system)] if system else []
    for item in items:
        kind, role = _get(item, "type"), _get(item, "role")
        if kind == "function_call":
            messages.append(Message(role="assistant", tool_calls=(_call(item),)))
        elif kind == "function_call_output":
            output = _get(item, "output")
            text = output if isinstance(output, str) else json.dumps(jsonable(output))
            call_id = str(_get(item, "call_id") or "")
            messages.append(Message(role="tool", content=text, tool_call_id=call_id))
        elif role in _ROLES:
            messages.append(Message(role=_ROLES[role], content=_text(_get(item, "content"))))
    return tuple(messages)


def response_of(response: Any) -> ModelResponse:
    """An SDK ``ModelResponse`` as harnessweaver's: its text and tool calls, its usage."""
    text: list[str] = []
    calls: list[ToolCall] = []
    for item in _get(response, "output") or ():
        kind = _get(item, "type")
        if kind == "function_call":
            calls.append(_call(item))
        elif kind == "message":
            text.append(_text(_get(item, "content")))
    usage = _get(response, "usage")
    spent = Usage(
        input_tokens=int(_get(usage, "input_tokens") or 0),
        output_tokens=int(_get(usage, "output_tokens") or 0),
    )
    message = Message(role="assistant", content="".join(text), tool_calls=tuple(calls))
    return ModelResponse(
        message=message, stop_reason="tool_use" if calls else "end_turn", usage=spent
    )


def spec_of(tool: Any) -> ToolSpec:
    """A tool as offered to the model (a function tool's name, description and schema)."""
    schema = getattr(tool, "params_json_schema", None)
    return ToolSpec(
        name=str(getattr(tool, "name", "") or type(tool).__name__),
        description=str(getattr(tool, "description", "") or ""),
        parameters=schema if isinstance(schema, dict) else {},
    )


def specs_of(tools: Iterable[Any]) -> tuple[ToolSpec, ...]:
    return tuple(spec_of(tool) for tool in tools)


def handoff_specs(agent: Any) -> tuple[ToolSpec, ...]:
    """The handoffs an agent offers the model, as the tools the model sees them as
    (``transfer_to_<agent>``, or a ``Handoff``'s own name and schema)."""
    specs = []
    for to in getattr(agent, "handoffs", ()) or ():
        offered = handoff(to) if isinstance(to, Agent) else to
        if isinstance(offered, Handoff):
            schema = offered.input_json_schema
            specs.append(
                ToolSpec(
                    name=offered.tool_name,
                    description=offered.tool_description or "",
                    parameters=schema if isinstance(schema, dict) else {},
                )
            )
    return tuple(specs)


def model_name(agent: Any) -> str:
    """The agent's model as a name: the string it was given, or the model object's name."""
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model
    return str(getattr(model, "model", "") or (type(model).__name__ if model else ""))
