"""Content identity (I27): the SHA-256 of an event's RFC 8785 form, and the bus's scheme.

The pair of the Rust core's ``identity.rs``. The canonical form is the ``rfc8785`` library's;
the domain check is ours, because RFC 8785 libraries disagree at its edges (``rfc8785``
prints ``1e+21`` where a TypeScript number of that value is an unsafe integer), and the
identity must be the same in every implementation.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Final

from ..errors import error_for

__all__ = ["SCHEME", "content_identity", "identity_scheme"]

SCHEME: Final = "jcs-sha256"
"""The one identity scheme: SHA-256 over the RFC 8785 (JCS) bytes of the event's JSON form."""

_LIMIT: Final = 2**53 - 1  # I-JSON's integers: every JSON reader holds them exactly


def identity_scheme(value: object) -> str | None:
    """A bus's scheme: ``None`` or ``"jcs-sha256"``; anything else is ``invalid_identity``
    naming the value (I27)."""
    if value is None or (isinstance(value, str) and value == SCHEME):
        return value
    shown = f"'{value}'" if isinstance(value, str) else repr(value)
    raise error_for(
        "register",
        "invalid_identity",
        "I27",
        f"invalid identity scheme {shown}: the identity scheme is 'jcs-sha256', or None for no "
        "identities (I27)",
    )


def content_identity(value: Any) -> str | None:
    """``sha256:`` + the hex SHA-256 of the RFC 8785 form of ``value`` (an event, as its JSON
    form, or a JSON value); ``None`` when it is outside I-JSON (I27): a lone surrogate, a number
    that is not finite or an integer beyond 2^53 - 1. Any other type is a ``TypeError``."""
    import rfc8785

    if hasattr(value, "model_dump") and not isinstance(value, type):
        # The values as the event holds them: equal to its JSON form (§6.3) inside I-JSON, but
        # pydantic's JSON mode would write a key's lone surrogate as U+FFFD and hide it.
        value = value.model_dump()
    try:
        if not _in_domain(value):
            return None
        canonical = rfc8785.dumps(value)
    except RecursionError:
        return None  # nested deeper than any reader follows: no identity, never a crash
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def _in_domain(value: Any) -> bool:
    """Whether ``value`` is a JSON value RFC 8785 serializes (I-JSON); ``TypeError`` when it
    is no JSON value at all."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return _whole_text(value)
    if isinstance(value, int):
        return -_LIMIT <= value <= _LIMIT
    if isinstance(value, float):
        return math.isfinite(value) and not (value.is_integer() and abs(value) > _LIMIT)
    if isinstance(value, list | tuple):
        return all(_in_domain(item) for item in value)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"content identity: an object key is a str, not {key!r} (I27)")
            if not (_whole_text(key) and _in_domain(item)):
                return False
        return True
    raise TypeError(f"content identity of a {type(value).__name__}: an event or a JSON value (I27)")


def _whole_text(text: str) -> bool:
    """No lone surrogate: the text has a UTF-8 form."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
