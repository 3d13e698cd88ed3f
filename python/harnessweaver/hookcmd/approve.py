"""A Suspend at ``tool.before`` as a durable approval (``docs/approvals.md``).

The hook command lives for one event, so a person's answer cannot wait in it: a call the
harness suspends is filed in the approvals book of the harness's store (the hook command's
SQLite state file, or the spec's ``state:``), and the answer names the record and how to decide
it (``harnessweaver approvals approve ID``). The next time the agent makes the same call (the
same tool, the same arguments, in the same session, under the same spec), the book is
consulted again (``Approvals.consult``, the "ask again" pattern):

- still pending: the same answer as before (Claude Code, VS Code: asked in the agent's own UI;
  Codex, Gemini CLI and the rest, which cannot ask: refused, naming the approval);
- approved: the call is allowed, once (the record is claimed: a third identical call files a
  new record and asks again); an edited approval runs the edited arguments;
- denied: refused as a denial (the record is closed);
- a store that cannot answer, or a refusal of the book's rules: refused (fail closed, never
  allowed).

Only ``tool.before`` is filed: its action (the tool and its arguments) is the same when the
agent calls again, while other hook points' events carry the step or a result, which a later
event would never match. An Escalate is not filed: the hook command acts on it (it stops the
session).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from .protocol import Decision, Request

__all__ = ["APPROVING", "book_of", "consult", "consumer_of", "filed_by", "subject_of"]

_log = logging.getLogger(__name__)

APPROVING = frozenset({"claude-code", "codex"})
"""Agents whose ``PreToolUse`` answer can say "allow" (the call runs without the agent's own
permission prompt: a person already approved it). The others get their neutral answer (the
agent's own permission settings still apply) or their rewrite for an edited approval."""


def book_of(harness: Any) -> Any:
    """The harness's approvals book (``Harness.approvals``: on its store, under its spec's
    identity and the spec's ``approvals:`` settings); for a harness without one, a book on its
    store with the defaults."""
    book = getattr(harness, "approvals", None)
    if book is not None:
        return book
    from ..approvals import Approvals, spec_identity

    return Approvals(harness.store, spec=spec_identity(harness))


def subject_of(agent: str, session: str) -> str:
    """The record's subject: approvals of one session never apply to another."""
    return f"session:{agent}/{session}"


def filed_by(agent: str) -> str:
    return f"hook command ({agent})"


def consumer_of(request: Request) -> str:
    """Who claims the approval: the session and the call's id (the agent's ``tool_use_id``)."""
    call = request.doc.get("tool_use_id")
    return f"{subject_of(request.agent, request.session)}#{call if isinstance(call, str) else ''}"


def consult(request: Request, decision: Decision, harness: Any) -> Decision:
    """``decision`` as the approvals book of ``harness`` makes it: an ``ask`` at
    ``tool.before`` is filed or consulted (the module docstring); anything else unchanged."""
    if decision.kind != "ask" or request.hook != "tool.before" or decision.outcome is None:
        return decision
    from ..approvals import ApprovalRefused
    from ..state import StateUnavailable

    try:
        verdict = asyncio.run(_consult(request, decision, harness))
    except StateUnavailable as exc:
        _log.error("harnessweaver hook: the approvals store failed: %s", type(exc).__name__)
        why = f"{decision.reason}; the approvals store cannot answer, so nobody approved it"
        return Decision("block", f"{why} (state_unavailable)")
    except ApprovalRefused as exc:
        return Decision("block", f"{exc} ({exc.code})")
    except Exception as exc:  # a bug in the book: nobody approved the call (fail closed)
        _log.error("harnessweaver hook: consulting the approvals failed: %s", type(exc).__name__)
        why = f"{decision.reason}; consulting the approvals failed ({type(exc).__name__})"
        return Decision("block", f"{why} (approval_failed)")
    return _decided(request, decision, verdict)


async def _consult(request: Request, decision: Decision, harness: Any) -> Any:
    outcome = decision.outcome
    return await book_of(harness).consult(
        hook="tool.before",
        event=decision.event,
        reason=str(outcome.reason),
        code=getattr(outcome, "code", None),
        approver_role=getattr(outcome, "approver_role", None),
        subject=subject_of(request.agent, request.session),
        filed_by=filed_by(request.agent),
        consumer=consumer_of(request),
    )


def _decided(request: Request, decision: Decision, verdict: Any) -> Decision:
    from ..approvals import how_to_decide

    record = verdict.record
    if verdict.kind == "pending":
        return replace(decision, reason=f"{decision.reason}; {how_to_decide(record)}")
    if verdict.kind == "denied":
        said = record.decision.reason if record.decision is not None else ""
        why = f"approval {record.id} was denied" + (f": {said}" if said else "")
        return Decision("block", f"{why} (approval_denied)")
    event = verdict.event_like(decision.event)
    edited = _arguments(event) != _sent(request)  # an edit, or the chain's own rewrite
    reason = f"harnessweaver: approval {record.id} approved this call (used once)"
    if request.agent in APPROVING:
        return Decision("allow", reason, event if edited else None)
    if edited:
        return Decision("modify", reason, event)
    return Decision("continue")


def _arguments(event: Any) -> Any:
    return event.call.model_dump(mode="json")["arguments"]


def _sent(request: Request) -> Any:
    """The arguments the agent sent, as the harness judged them (``freetext``): the call runs
    as sent only when the approved event's arguments are these."""
    from .freetext import judged

    tool_input = request.doc.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    return judged(request.agent, str(request.doc.get("tool_name")), tool_input)
