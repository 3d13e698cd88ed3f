"""The ``{"cedar": {...}}`` behaviour of the corpus (I38, feature ``cedar``): the
``harnessweaver.cedar`` engine built from texts instead of files.

The policy set is compiled on the declaration's first call, once; the request is made from the
event and the emitting context's attributes (``given.contexts``), at the hook point the event
was emitted at, exactly as the built-in does.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import harnessweaver as hw

from ..policies.cedar import CedarPolicySet, PolicySource, hook_of

__all__ = ["CedarBehaviour", "cedar_available"]


def cedar_available() -> bool:
    """Whether the Cedar engine (cedarpy, the ``cedar`` extra) is installed."""
    return importlib.util.find_spec("cedarpy") is not None


class CedarBehaviour:
    """One declaration's Cedar engine: compiled on the first call, then reused."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self._compiled: CedarPolicySet | None = None

    def _compile(self) -> CedarPolicySet:
        given = self.settings
        schema = given.get("schema")
        entities = given.get("entities")
        return CedarPolicySet.compile(
            [PolicySource("policies", given["policies"])],
            schema=None if schema is None else PolicySource("schema", schema),
            schema_format=given.get("schema_format", "cedar"),
            entities=None if entities is None else PolicySource("entities", json.dumps(entities)),
            namespace=given.get("namespace"),
            no_decision=given.get("no_decision", "block"),
            on_error=given.get("on_error", "fail"),
        )

    def decide(self, event: Any, env: hw.Envelope) -> Any:
        if self._compiled is None:
            self._compiled = self._compile()
        return self._compiled.decide(hook_of(event), event, env.attributes)
