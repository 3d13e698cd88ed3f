"""A middleware's rewrite handed back to the SDK: the task's input, and what the model receives.

The SDK lets a run rewrite what the model is asked (``RunConfig.call_model_input_filter``:
the instructions and the input items, just before each model call), and the task's input is
the adapter's own to pass to ``Runner.run``. So a ``Continue(modified)`` at ``task.start``,
``step.start`` or ``model.before`` that the SDK can carry is applied, not turned into the end
of the run (issue 32: ``redact_pii``, ``redact_secrets`` and the loop guard's warnings rewrite
exactly these).

What can be carried back: the text of any message (the system message is the instructions),
a tool call's arguments, a tool result's text, and one message appended at the end (a
guard's note, ``builtins/_notes.py``). Anything else (messages removed, reordered or
inserted, a tool call renamed, the tools or the model changed) has no faithful form in the
SDK's items: :func:`rewritten` answers ``None`` and the run ends as before (the safer side).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...events import Message, TaskStartEvent
from .convert import messages_of

__all__ = ["rewritten", "rewritten_response", "task_input"]


def task_input(original: Any, event: TaskStartEvent) -> Any:
    """The task's input as ``task.start``'s chain left it, in a form ``Runner.run`` takes (a
    string, or a list of input items); ``None`` when the change has no such form."""
    value = event.input
    if isinstance(original, str):
        return value if isinstance(value, str) else None
    if isinstance(original, list) and isinstance(value, list):
        items = [item for item in value if isinstance(item, dict)]
        return items if len(items) == len(value) else None
    return None


def _slots(system: str | None, items: Sequence[Any]) -> list[int | None]:
    """For each message ``messages_of`` makes, the index of the item it came from (``None``:
    the instructions). Kept in step with ``messages_of``: one message per item it converts."""
    slots: list[int | None] = [None] if system else []
    for index, item in enumerate(items):
        if messages_of(None, [item]):
            slots.append(index)
    return slots


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        found = dump(exclude_unset=True)
        if isinstance(found, dict):
            return found
    raise TypeError(type(item).__name__)


def _with_text(item: Any, text: str) -> dict[str, Any]:
    """A message item with ``text`` as its content, in the content's own form: a string, or
    the parts with the text in the first text part (the other text parts dropped, since the
    bus saw them joined as one text; images and files kept where they were)."""
    new = _as_dict(item)
    content = new.get("content")
    if isinstance(content, str) or content is None:
        new["content"] = text
        return new
    parts: list[Any] = []
    placed = False
    for part in content:
        if _get(part, "text") is None:
            parts.append(part)
        elif not placed:
            kind = _get(part, "type") or "input_text"
            replaced: dict[str, Any] = {"type": kind, "text": text}
            if kind == "output_text":
                replaced["annotations"] = []
            parts.append(replaced)
            placed = True
    if not placed:
        parts.append({"type": "input_text", "text": text})
    new["content"] = parts
    return new


def _same_shape(old: Message, new: Message) -> bool:
    if (old.role, old.tool_call_id) != (new.role, new.tool_call_id):
        return False
    if len(old.tool_calls) != len(new.tool_calls):
        return False
    return all(
        (a.id, a.name) == (b.id, b.name)
        for a, b in zip(old.tool_calls, new.tool_calls, strict=True)
    )


def rewritten(
    system: str | None,
    items: Sequence[Any],
    old: Sequence[Message],
    new: Sequence[Message],
) -> tuple[str | None, list[Any]] | None:
    """The instructions and input items whose messages are ``new`` (``old`` being the
    messages of ``system`` and ``items``); ``None`` when ``new`` is not a change the items can
    carry (see the module's docstring)."""
    slots = _slots(system, items)
    if len(slots) != len(old) or len(new) not in (len(old), len(old) + 1):
        return None
    out: list[Any] = list(items)
    instructions = system
    try:
        for slot, before, after in zip(slots, old, new[: len(old)], strict=True):
            if before == after:
                continue
            if not _same_shape(before, after):
                return None
            if slot is None:
                instructions = after.content or ""
                continue
            item = items[slot]
            kind = _get(item, "type")
            if kind == "function_call":
                new_item = _as_dict(item)
                new_item["arguments"] = json.dumps(after.tool_calls[0].arguments)
                out[slot] = new_item
            elif kind == "function_call_output":
                new_item = _as_dict(item)
                new_item["output"] = after.content or ""
                out[slot] = new_item
            else:
                out[slot] = _with_text(item, after.content or "")
    except TypeError:  # an item with no dict form: nothing to rewrite it into
        return None
    if len(new) > len(old):
        added = new[-1]
        if added.role not in ("user", "system") or added.tool_calls or added.tool_call_id:
            return None
        out.append({"role": added.role, "content": added.content or ""})
    if list(messages_of(instructions, out)) != list(new):
        return None  # the items would not say what the chain left: never send something else
    return instructions, out


def _changed_output(item: Any, before: Any, after: Any) -> Any:
    """An output item carrying ``after``'s text or arguments (``before`` being what the bus
    saw of it), or ``None`` when the change is not one the item can carry."""
    kind = _get(item, "type")
    if kind == "function_call":
        if (before.id, before.name) != (after.id, after.name):
            return None
        if before.arguments == after.arguments:
            return item
        return item.model_copy(update={"arguments": json.dumps(after.arguments)})
    return None


def rewritten_response(response: Any, old: Message, new: Message) -> Any:
    """The SDK's ``ModelResponse`` whose message is ``new`` (``old`` being the message the bus
    saw of it): the text of its (one) message item and the arguments of its tool calls may
    change; ``None`` for anything else (a call added, removed or renamed, text where there
    was none, or several message items whose text the bus saw joined)."""
    if (old.role, old.tool_call_id) != (new.role, new.tool_call_id):
        return None
    if len(old.tool_calls) != len(new.tool_calls):
        return None
    output = list(response.output)
    calls = iter(zip(old.tool_calls, new.tool_calls, strict=True))
    messages = [i for i, item in enumerate(output) if _get(item, "type") == "message"]
    if old.content != new.content:
        if len(messages) != 1:
            return None
        index = messages[0]
        item = output[index]
        try:
            output[index] = type(item).model_validate(_with_text(item, new.content or ""))
        except (TypeError, ValueError):
            return None
    for index, item in enumerate(output):
        if _get(item, "type") == "function_call":
            before, after = next(calls)
            changed = _changed_output(item, before, after)
            if changed is None:
                return None
            output[index] = changed
    return dataclasses.replace(response, output=output)
