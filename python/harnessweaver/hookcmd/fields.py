"""Reading the fields of an event document: each one checked, each error naming the field."""

from __future__ import annotations

from typing import Any

from .protocol import HookInputError

__all__ = ["obj", "opt_str", "text"]


def text(doc: dict[str, Any], key: str, event: str) -> str:
    """A required string field."""
    value = doc.get(key)
    if not isinstance(value, str):
        got = "missing" if key not in doc else f"a {type(value).__name__}"
        raise HookInputError(f"{event}: field {key!r} must be a string, got {got}")
    return value


def opt_str(doc: dict[str, Any], key: str, event: str, default: str = "") -> str:
    """An optional string field (``null`` counts as absent)."""
    value = doc.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise HookInputError(
            f"{event}: field {key!r} must be a string, got a {type(value).__name__}"
        )
    return value


def obj(doc: dict[str, Any], key: str, event: str) -> dict[str, Any]:
    """A required JSON object field."""
    value = doc.get(key)
    if not isinstance(value, dict):
        got = "missing" if key not in doc else f"a {type(value).__name__}"
        raise HookInputError(f"{event}: field {key!r} must be a JSON object, got {got}")
    return value
