"""The acme plugin: the refund desk's middleware as ``acme.<name>``, and its baseline profile
(``profile://acme.baseline``, a path relative to this file)."""

import harnessweaver as hw
from app.middleware import RefundCap, audit_tracer, no_weekend_refunds

plugin = hw.Plugin(
    namespace="acme",
    version="1.0.0",
    middleware=[no_weekend_refunds, RefundCap, audit_tracer],
    profiles={"baseline": "profiles/baseline.yaml"},
)
