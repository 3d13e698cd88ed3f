"""Harness specs: ``harness.yaml``, its plugins and profiles, loaded into a hook bus.

``hw.load("harness.yaml", task=..., env=...)`` returns a :class:`Harness` whose bus has every
chain resolved; the layer that declares an item sets its band (hook-bus.md, "Where bands come
from"; I13). ``harnessweaver hooks harness.yaml`` prints the chains. See docs/harness-spec.md.
"""

from __future__ import annotations

from .errors import Problem, SpecError
from .loader import Harness, HarnessEntry, load
from .model import Provenance

__all__ = ["Harness", "HarnessEntry", "Problem", "Provenance", "SpecError", "load"]
