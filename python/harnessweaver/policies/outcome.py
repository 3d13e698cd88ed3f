"""Cedar's answer to a request turned into an outcome, as I38 says (the list in :mod:`.cedar`):
``Continue``, a ``Suspend`` naming the permits that ask for approval, a ``Block`` naming the
forbids (or no permit), or :class:`CedarEvaluationError` when a policy errors and the item
fails on it.

Outcomes name policies by their shown ids, deduplicated and sorted by code point, so every
implementation gives the same code and reason for the same answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from ..outcomes import Block, Continue, Suspend
from .errors import CedarEvaluationError
from .policy import Policy

__all__ = ["APPROVAL_ANNOTATIONS", "CODE_LIMIT", "REASON_LIMIT", "Evaluation", "outcome_of"]

APPROVAL_ANNOTATIONS: Final = ("requireApproval", "escalate")
"""The annotations that turn a permit into a Suspend, in the order the approver role is taken."""
CODE_LIMIT: Final = 128
REASON_LIMIT: Final = 4096
"""I28's bounds of an outcome's code and reason, in code points."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Cedar's answer: allowed or not, the determining policies, the erroring ones (and
    whether any error was reported at all)."""

    allowed: bool
    determining: tuple[Policy, ...]
    errors: tuple[Policy, ...]
    errored: bool


def outcome_of(
    answer: Evaluation, *, no_decision: str, on_error: str
) -> Continue | Block | Suspend:
    """The outcome of Cedar's answer (I38)."""
    if answer.errored and on_error == "fail":
        raise CedarEvaluationError(_ids(answer.errors))
    if answer.allowed:
        return _allow(answer.determining)
    if answer.determining:
        ids = _ids(answer.determining)
        reason = "forbidden by Cedar policy " + ", ".join(ids)
        code = "cedar:" + ",".join(ids)
        return Block(reason=reason[:REASON_LIMIT], code=code[:CODE_LIMIT])
    if no_decision == "continue":
        return Continue()
    return Block(reason="no Cedar policy permits this request", code="cedar:no_permit")


def _ids(policies: Iterable[Policy]) -> tuple[str, ...]:
    """``ids(S)`` of I38: the shown ids, deduplicated, sorted by code point."""
    return tuple(sorted({policy.shown for policy in policies}))


def _allow(determining: Sequence[Policy]) -> Continue | Suspend:
    asking = [p for p in determining if any(a in p.annotations for a in APPROVAL_ANNOTATIONS)]
    if not asking:
        return Continue()
    ids = _ids(asking)
    first = next(policy for policy in asking if policy.shown == ids[0])
    role = next(first.annotations[a] for a in APPROVAL_ANNOTATIONS if a in first.annotations)
    reason = "approval required by Cedar policy " + ", ".join(ids)
    code = "cedar:" + ",".join(ids)
    return Suspend(reason=reason[:REASON_LIMIT], approver_role=role or None, code=code[:CODE_LIMIT])
