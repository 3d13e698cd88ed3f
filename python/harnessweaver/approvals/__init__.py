"""Durable approvals: a paused action filed in the state store, decided anywhere, claimed once.

A middleware's ``Suspend`` pauses an action for a person to decide. ``harnessweaver.approvals``
keeps that pause in the harness's state store: :class:`Approvals` files an
:class:`ApprovalRecord` bound to the exact action (its content identity), the spec version and
the subject; anyone sharing the store decides it (``harnessweaver approvals approve ID``);
the process that resumes claims it, single use, strictly. See docs/approvals.md.

Names import on first use: loading a spec reads ``approvals:`` without importing the book.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from .book import (
        INDEX_KEY,
        MAX_OPEN,
        Approvals,
        Verdict,
        binding_key,
        how_to_decide,
        record_key,
    )
    from .config import ApprovalsConfig, ApprovalsConfigError, parse_approvals
    from .notify import (
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        HttpNotifier,
        Notifier,
        sign,
        verify_signature,
    )
    from .record import (
        KEEP,
        REFUSALS,
        STATUSES,
        ApprovalDecision,
        ApprovalRecord,
        ApprovalRefused,
        ApprovalUse,
        action_of,
        binding_of,
        spec_identity,
    )
    from .rules import VERDICTS, VerdictKind, claim, decide, status_at

__all__: list[str] = [
    "INDEX_KEY",
    "KEEP",
    "MAX_OPEN",
    "REFUSALS",
    "SIGNATURE_HEADER",
    "STATUSES",
    "TIMESTAMP_HEADER",
    "VERDICTS",
    "ApprovalDecision",
    "ApprovalRecord",
    "ApprovalRefused",
    "ApprovalUse",
    "Approvals",
    "ApprovalsConfig",
    "ApprovalsConfigError",
    "HttpNotifier",
    "Notifier",
    "Verdict",
    "VerdictKind",
    "action_of",
    "binding_key",
    "binding_of",
    "claim",
    "decide",
    "how_to_decide",
    "parse_approvals",
    "record_key",
    "sign",
    "spec_identity",
    "status_at",
    "verify_signature",
]

_HOMES = {
    ".book": (
        "INDEX_KEY",
        "MAX_OPEN",
        "Approvals",
        "Verdict",
        "binding_key",
        "how_to_decide",
        "record_key",
    ),
    ".config": ("ApprovalsConfig", "ApprovalsConfigError", "parse_approvals"),
    ".notify": (
        "SIGNATURE_HEADER",
        "TIMESTAMP_HEADER",
        "HttpNotifier",
        "Notifier",
        "sign",
        "verify_signature",
    ),
    ".record": (
        "KEEP",
        "REFUSALS",
        "STATUSES",
        "ApprovalDecision",
        "ApprovalRecord",
        "ApprovalRefused",
        "ApprovalUse",
        "action_of",
        "binding_of",
        "spec_identity",
    ),
    ".rules": ("VERDICTS", "VerdictKind", "claim", "decide", "status_at"),
}
"""Where each name of ``__all__`` lives."""
__getattr__ = _lazy.loader(__name__, _lazy.homes(_HOMES))
__dir__ = _lazy.lister(__name__, __all__)
