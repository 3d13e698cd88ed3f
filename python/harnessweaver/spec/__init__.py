"""Harness specs: ``harness.yaml``, its plugins and profiles, loaded into a hook bus.

``hw.load("harness.yaml", task=..., env=...)`` returns a :class:`Harness` whose bus has every
chain resolved; the layer that declares an item sets its band (hook-bus.md, "Where bands come
from"; I13). ``harnessweaver hooks harness.yaml`` prints the chains. See docs/harness-spec.md.

``harnessweaver`` re-exports every name of this package's ``__all__`` (``hw.load`` is
``hw.spec.load``). The loader loads on first use: a program that only runs the bus never
imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from .errors import Problem, SpecError
    from .loader import Harness, HarnessEntry, load
    from .model import Provenance

__all__: list[str] = ["Harness", "HarnessEntry", "Problem", "Provenance", "SpecError", "load"]

_HOMES = {
    ".errors": ("Problem", "SpecError"),
    ".loader": ("Harness", "HarnessEntry", "load"),
    ".model": ("Provenance",),
}
"""Where each name of ``__all__`` lives (``tests/test_public_api.py`` holds this table,
``__all__`` and the type checker's imports above together)."""
__getattr__ = _lazy.loader(__name__, _lazy.homes(_HOMES))
__dir__ = _lazy.lister(__name__, __all__)
