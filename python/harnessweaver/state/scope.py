"""Scopes and keys: whose count a counter is, and the one key text every implementation uses.

A key names the layer that declared the item, the item, the scope, the scope's subject and
the counter's name: ``hw1/<layer>/<item>/<scope>/<subject>/<name>``, each part percent-encoded
so no part can reach into another. The layer keeps an org budget and a task budget with the same
item id apart (both apply; the most severe answer wins). TypeScript builds the same text, so a
Node worker and a Python worker count in one place.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from ..envelope import Envelope

__all__ = [
    "ATTRIBUTE_ENV",
    "KEY_PREFIX",
    "NO_SUBJECT",
    "SCOPES",
    "Scope",
    "envelope_subject",
    "environ_attributes",
    "scope_subject",
    "state_key",
]

Scope: TypeAlias = Literal["run", "session", "user", "task", "app", "org"]
SCOPES: tuple[Scope, ...] = ("run", "session", "user", "task", "app", "org")
"""run: one run (``env.run_id``); session, user, app: the envelope's attribute of that name;
task: the harness's task; org: everyone using the store."""
KEY_PREFIX = "hw1"
"""The key layout's version: a new layout gets a new prefix, never a changed meaning."""
_ATTRIBUTE_SCOPES = ("session", "user", "app")
NO_SUBJECT = "-"
"""The subject of the org scope, and of the task scope in a harness without a task."""


def state_key(layer: str, item: str, scope: str, subject: str, name: str) -> str:
    """``hw1/layer/item/scope/subject/name``, each part percent-encoded (no ``/`` left)."""
    parts = (layer, item, scope, subject, name)
    return f"{KEY_PREFIX}/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


def scope_subject(
    scope: str,
    *,
    run_id: str,
    attributes: Mapping[str, object],
    task: str | None,
) -> str:
    """Whose count it is in ``scope``. A session, user or app scope needs that attribute on
    the envelope as text: without it, :class:`LookupError` naming the attribute and the scope
    (a failure of the middleware under its fail mode, never a shared count by mistake)."""
    if scope == "run":
        return run_id
    if scope in _ATTRIBUTE_SCOPES:
        value = attributes.get(scope)
        if not isinstance(value, str):
            found = "missing" if value is None else f"not text ({type(value).__name__})"
            raise LookupError(
                f"scope {scope} needs the envelope attribute {scope!r} as text; it is {found}"
            )
        return value
    if scope == "task":
        return task if task else NO_SUBJECT
    if scope == "org":
        return NO_SUBJECT
    raise ValueError(f"unknown scope {scope!r}: the scopes are {', '.join(SCOPES)}")


def envelope_subject(scope: str, env: Envelope, task: str | None) -> str:
    """:func:`scope_subject` for an envelope."""
    return scope_subject(scope, run_id=env.run_id, attributes=env.attributes, task=task)


ATTRIBUTE_ENV = {"user": "HARNESSWEAVER_USER", "app": "HARNESSWEAVER_APP"}
"""The envelope attributes a host that has no caller identity of its own (the hook command,
the MCP proxy) takes from its environment, for guards of scope ``user`` and ``app``."""


def environ_attributes(session: str, environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """The attributes of such a host's envelope: ``session`` (the agent's or the MCP
    client's session id) and ``user``/``app`` from :data:`ATTRIBUTE_ENV` where set."""
    source = os.environ if environ is None else environ
    found: dict[str, object] = {"session": session}
    for name, variable in ATTRIBUTE_ENV.items():
        value = source.get(variable)
        if value:
            found[name] = value
    return found
