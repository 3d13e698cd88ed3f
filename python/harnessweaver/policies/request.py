"""The mapping of I38: an event and its envelope's attributes → a Cedar request.

``cedar_request(hook, event, attributes, namespace)`` gives plain data: ``principal``,
``action`` and ``resource`` as Cedar's ``{"type", "id"}`` form (any string is an id; no
``Type::"id"`` text is ever built), ``context`` a JSON-able record. The AuthZEN middleware
maps from the same request, so both deciders see one event the same way.

JSON → Cedar: a string stays a String, a boolean a Bool, a whole number within ±(2^53-1) a Long
(``12``, ``12.0`` and ``1e3`` alike), ``null`` is left out of its record or set, a list is a
Set, an object a Record. Anything else (a fraction, a number past 2^53-1, NaN, a record key
Cedar's JSON reads as an escape, ``__entity``, ``__extn``, ``__expr``, nesting deeper than
:data:`MAX_DEPTH`, a string with a lone surrogate) means the request cannot be built:
:class:`CedarRequestError` naming the path, never the value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..events import ModelRequestEvent, ToolCallEvent, ToolResultEvent
from .errors import CedarRequestError

__all__ = [
    "HOOKS",
    "MAX_DEPTH",
    "MAX_LONG",
    "CedarRequest",
    "cedar_request",
    "principal_of",
    "resource_of",
    "to_cedar_value",
]

HOOKS: Final = ("tool.before", "tool.after", "model.before")
"""The hook points a policy middleware decides on."""
MAX_LONG: Final = 2**53 - 1
"""The largest magnitude a number may have to be a Long: every implementation reads JSON
numbers as doubles, so past it two different numbers could be one."""
MAX_DEPTH: Final = 32
"""How deep a converted value may nest: the converted object itself (``arguments``,
``attributes``) is level 1; a set or record at level 33 cannot be built."""
ESCAPES: Final = frozenset({"__entity", "__extn", "__expr"})
"""Record keys Cedar's JSON reads as an entity, extension or expression escape: a user's key
must never be taken for one."""

CedarRequest = dict[str, Any]
"""``{"principal": {"type", "id"}, "action": ..., "resource": ..., "context": {...}}``."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LONG_KEY: Final = 64
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _key_path(path: str, key: str) -> str:
    """``path`` and one more record key: ``.key`` for a plain name of at most 64 code points,
    else ``["..."]`` as JSON writes it (ASCII only), a long key cut to its first 64."""
    if len(key) <= _LONG_KEY and _NAME.fullmatch(key):
        return f"{path}.{key}"
    shown = key if len(key) <= _LONG_KEY else key[:_LONG_KEY] + "…"
    return f"{path}[{json.dumps(shown)}]"


def _string(value: str, path: str) -> str:
    # Cedar's strings are Unicode scalar values: a lone surrogate has no form there.
    if _SURROGATE.search(value) is not None:
        raise CedarRequestError(path, why="a string with a lone surrogate")
    return value


def _number(value: float, path: str) -> int:
    if isinstance(value, int):
        if -MAX_LONG <= value <= MAX_LONG:
            return value
    elif math.isfinite(value) and value.is_integer() and abs(value) <= MAX_LONG:
        return int(value)
    raise CedarRequestError(path, why="a number that is not a whole number within ±(2^53-1)")


def to_cedar_value(value: object, path: str, depth: int = 1) -> Any:
    """``value`` (JSON data) as Cedar's JSON form of a value; ``None`` stays ``None`` (its
    record or set leaves it out). ``depth`` is the level ``value`` is at (:data:`MAX_DEPTH`)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _string(value, path)
    if isinstance(value, int | float):
        return _number(value, path)
    if isinstance(value, Mapping):
        if depth > MAX_DEPTH:
            raise CedarRequestError(path, why=f"a record nested deeper than {MAX_DEPTH}")
        record = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CedarRequestError(path, why="a record key that is not a string")
            where = _key_path(path, key)
            _string(key, where)
            if key in ESCAPES:
                raise CedarRequestError(where, why=f"a record key {key} (a Cedar JSON escape)")
            converted = to_cedar_value(item, where, depth + 1)
            if converted is not None:
                record[key] = converted
        return record
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        if depth > MAX_DEPTH:
            raise CedarRequestError(path, why=f"a set nested deeper than {MAX_DEPTH}")
        converted_items = (
            to_cedar_value(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)
        )
        return [item for item in converted_items if item is not None]
    raise CedarRequestError(path, why=f"a value of type {type(value).__name__}")


def _type(name: str, namespace: str | None) -> str:
    return name if namespace is None else f"{namespace}::{name}"


def principal_of(attributes: Mapping[str, object]) -> tuple[str, str]:
    """``("User", id)`` for a string attribute ``user``, else ``("Agent", id)`` for a string
    ``agent``, else ``("Agent", "anonymous")``: the kind and the id, before any namespace."""
    user = attributes.get("user")
    if isinstance(user, str):
        return "User", user
    agent = attributes.get("agent")
    if isinstance(agent, str):
        return "Agent", agent
    return "Agent", "anonymous"


def resource_of(event: object) -> tuple[str, str]:
    """``("Tool", name)`` for a tool event (``call.name``, else ``tool.name``), ``("Model",
    request.model)`` for a model request."""
    if isinstance(event, ToolCallEvent | ToolResultEvent):
        return "Tool", event.call.name or event.tool.name
    if isinstance(event, ModelRequestEvent):
        return "Model", event.request.model
    raise TypeError(
        f"a policy middleware decides tool and model requests, not {type(event).__name__}"
    )


def _context(hook: str, event: Any, attributes: Mapping[str, object], tool: str) -> dict[str, Any]:
    context: dict[str, Any] = {
        "hook": hook,
        "step": _number(event.step, "context.step"),
        "attributes": to_cedar_value(dict(attributes), "context.attributes"),
    }
    if isinstance(event, ToolCallEvent | ToolResultEvent):
        context["tool"] = tool
        context["arguments"] = to_cedar_value(event.call.arguments, "context.arguments")
        if isinstance(event, ToolResultEvent):
            context["is_error"] = event.result.is_error
    else:
        request = event.request
        context["model"] = tool
        names = [_string(spec.name, f"context.tools[{i}]") for i, spec in enumerate(request.tools)]
        context["tools"] = names
        context["messages"] = len(request.messages)
    return context


def cedar_request(
    hook: str, event: object, attributes: Mapping[str, object] | None, namespace: str | None
) -> CedarRequest:
    """The Cedar request of ``event`` at ``hook`` with the envelope's ``attributes`` (I38);
    :class:`CedarRequestError` when it cannot be built."""
    if hook not in HOOKS:
        raise ValueError(f"a policy middleware decides on {', '.join(HOOKS)}, not {hook!r}")
    attributes = attributes or {}
    kind, who = principal_of(attributes)
    what, name = resource_of(event)
    return {
        "principal": {"type": _type(kind, namespace), "id": _string(who, "principal")},
        "action": {"type": _type("Action", namespace), "id": hook},
        "resource": {"type": _type(what, namespace), "id": _string(name, "resource")},
        "context": _context(hook, event, attributes, name),
    }
