"""One compiled policy as a :class:`~.compiled.CedarPolicySet` keeps it: Cedar's id, the id
outcomes show, its annotations, the scope keys slices are chosen by (:mod:`.slices`) and its
source.

Each is read from its statement's head by :mod:`.statements` (no round trip through the
engine), or from the engine's JSON form when that reader cannot (an escape in a string, an odd
token) or when the files split a policy between them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .statements import Head, Unreadable, read_head

__all__ = ["EntityRef", "Policy", "from_engine", "from_text", "policy_index"]

EntityRef = tuple[str, str] | None
"""A policy's ``==`` scope constraint on action or resource, ``None`` when it may match any."""


@dataclass(frozen=True, slots=True)
class Policy:
    """One compiled policy: Cedar's id, the shown id, its annotations, its scope keys and its
    source: its statement (or, when the files split a policy, its JSON form), to build
    slices from."""

    cedar_id: str
    shown: str
    annotations: Mapping[str, str]
    action: EntityRef
    resource: EntityRef
    source: str


def _scope(constraint: Mapping[str, Any]) -> EntityRef:
    if constraint.get("op") != "==":
        return None
    entity = constraint.get("entity")
    if not isinstance(entity, Mapping):  # `== ?principal` (a template) or a slot
        return None
    return str(entity.get("type")), str(entity.get("id"))


def policy_index(cedar_id: str) -> int:
    """The ``k`` of Cedar's id ``policyk`` (0 for any other id)."""
    return int(cedar_id.removeprefix("policy")) if cedar_id.startswith("policy") else 0


def _policy(cedar_id: str, head: Head, source: str) -> Policy:
    annotations = {k: v or "" for k, v in head.annotations.items()}
    shown = annotations.get("id", cedar_id)
    return Policy(cedar_id, shown, annotations, head.action, head.resource, source)


def from_text(cedarpy: Any, index: int, text: str) -> Policy:
    """Policy ``index`` read from its statement (the engine reads the rare head this reader
    does not: an escape in a string, an odd token)."""
    try:
        head = read_head(text)
    except Unreadable:
        est = json.loads(cedarpy.policies_to_json_str(text))
        head = _head(next(iter(est["staticPolicies"].values())))
    return _policy(f"policy{index}", head, text)


def _head(body: Mapping[str, Any]) -> Head:
    annotations = body.get("annotations") or {}
    return Head(
        {k: None if v is None else str(v) for k, v in annotations.items()},
        _scope(body.get("action") or {}),
        _scope(body.get("resource") or {}),
    )


def from_engine(cedarpy: Any, joined: str) -> list[Policy]:
    """Every policy from the engine's JSON form (its ids kept; slices made from it)."""
    statics: Mapping[str, Any] = json.loads(cedarpy.policies_to_json_str(joined))["staticPolicies"]
    return [
        _policy(cedar_id, _head(statics[cedar_id]), f"{json.dumps(cedar_id)}: {json.dumps(body)}")
        for cedar_id, body in sorted(statics.items(), key=lambda item: policy_index(item[0]))
    ]
