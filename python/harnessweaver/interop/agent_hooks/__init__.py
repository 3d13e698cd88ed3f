"""AGENT-HOOKS-0.1 interop (docs/interop-agent-hooks.md).

:class:`AgentHooksHost` composes interceptors as that contract's host does (profiles,
approval seam, identities, records) and sits on a bus as one middleware; it passes the
contract's Conformance Test Kit (``ctk.HarnessweaverHarness``, ``nox -s interop``).
:class:`BusInterceptor` is the other way round: a bus (one loaded from ``harness.yaml``) as
one interceptor of another host.
:func:`interceptor_middleware` puts an ``agent_hooks.Interceptor`` on a harnessweaver bus: at
the hook points its interception points map to (:data:`POINTS`), in a band, with a fail mode
and a timeout, its verdicts becoming outcomes. Needs ``agent-hooks-sdk`` (the ``agent-hooks``
extra).
"""

from __future__ import annotations

from .contexts import HOOK_OF, POINTS
from .host import AgentHooksHost
from .interceptor import BusInterceptor
from .middleware import interceptor_middleware
from .verdicts import outcome_of

__all__ = [
    "HOOK_OF",
    "POINTS",
    "AgentHooksHost",
    "BusInterceptor",
    "interceptor_middleware",
    "outcome_of",
]
