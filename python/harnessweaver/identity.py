"""Content identity (I27, ``docs/trace.md``): what an event held, as one short text.

``hw.HookBus(identity="jcs-sha256")`` puts the identities of the event given and of the event
the chain left on every hook record; ``hw.content_identity`` computes the same text for any
event or JSON value, for example to check that an approval is about the event it names.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ._select import core

__all__ = ["IdentityScheme", "content_identity"]

IdentityScheme: TypeAlias = Literal["jcs-sha256"]
"""The content-identity schemes a bus may compute (I27): SHA-256 over the RFC 8785 form."""


def content_identity(value: Any) -> str | None:
    """``"sha256:"`` + the 64 hex digits of the SHA-256 of the RFC 8785 (JCS) form of
    ``value``, an event (its JSON form) or a JSON value; ``None`` when it is outside I-JSON (a
    lone surrogate, a number that is not finite or an integer beyond 2^53 - 1). The text is
    the same in every implementation. Anything else than an event or a JSON value is a
    ``TypeError``."""
    identity: str | None = core.content_identity(value)
    return identity
