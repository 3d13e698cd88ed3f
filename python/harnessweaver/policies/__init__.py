"""Policy deciders: ``harnessweaver.cedar`` (Cedar policies in process) and
``harnessweaver.authzen`` (a remote AuthZEN 1.0 decision point), on one request mapping (I38,
``docs/policies.md``).

Only :mod:`.request` and :mod:`.errors` are imported here: the Cedar engine (``cedarpy``, the
``cedar`` extra) is imported when a policy set is compiled, not before.
"""

from __future__ import annotations

from .errors import (
    AuthZenError,
    CedarEvaluationError,
    CedarLoadError,
    CedarRequestError,
    PolicyError,
)
from .request import cedar_request, to_cedar_value

__all__ = [
    "AuthZenError",
    "CedarEvaluationError",
    "CedarLoadError",
    "CedarRequestError",
    "PolicyError",
    "cedar_request",
    "to_cedar_value",
]
