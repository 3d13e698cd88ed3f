"""A person's approval of a call the harness suspended (or escalated), asked of the client.

MCP's way to ask a person is an elicitation, which a client declares it can show
(``capabilities.elicitation``). On the handshake protocol (2025-11-25) the proxy sends
``elicitation/create`` while the call waits; on 2026-07-28 it answers the call with an
``InputRequiredResult`` and the client calls again with the person's answer and the
``requestState`` the proxy gave, sealed by the SDK (AES-GCM under a key of this process,
600 s), so the client can neither read nor forge it.

An approval is bound to the content identity (I27) of the exact call: the harness, the tool
and the arguments. A retry whose arguments differ is refused, never approved. A client that
cannot elicit gets a refusal that says so: a call that needs a person never goes on without
one (never fail open).

Where a person cannot be asked through the client (it declared no elicitation capability, or
there is no channel to ask on), the proxy files the call in the approvals book
(``docs/approvals.md``; ``filed_by`` ``mcp proxy``, subject ``mcp:<server name>``) and refuses
it, naming the record and how to decide it (``harnessweaver approvals approve ID``). The same
call made again consults the book: approved, it runs once (edited: with the edited
arguments); denied, it is refused as a denial; still pending, refused again naming the same
record. A store that cannot answer refuses (``state_unavailable``). A call elicited from a
person is not filed: the person's answer binds to the call there and then.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .convert import arguments_of, call_event, refusal, tool_spec
from .gate import UNIDENTIFIABLE, Admit, Ask, Gate, call_identity

__all__ = ["APPROVAL", "FILED_BY", "Approvals"]

_log = logging.getLogger("harnessweaver.mcp")

APPROVAL = "dev.harnessweaver/approval"
"""The key of the approval among a 2026-07-28 call's input requests and responses."""

FILED_BY = "mcp proxy"
"""The ``filed_by`` of the records the proxy files."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve this tool call"}},
    "required": ["approve"],
}
"""What the person answers: one yes or no (a form with nested fields is not MCP's)."""

_ELICIT = types.ClientCapabilities(elicitation=types.ElicitationCapability())

Ctx = ServerRequestContext[Any, Any]
Answer = Admit | types.CallToolResult | types.InputRequiredResult


class Approvals:
    """Asks the client's person; reads the answer of a 2026-07-28 retry."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def resumed(
        self, params: types.CallToolRequestParams, tool: types.Tool | None, step: int
    ) -> Answer | None:
        """What a 2026-07-28 retry carries: a person's answer to the proxy's own question, or
        answers to the tool's (the call was admitted before it asked); ``None`` when neither.

        The state is the proxy's, unsealed by the SDK, so it is the one the proxy gave; the
        call it names must still be this one (the same harness, tool and arguments)."""
        if params.request_state is None:
            return None
        try:
            state = json.loads(params.request_state)
            identity, arguments = state["identity"], state["arguments"]
        except (ValueError, KeyError, TypeError):
            return _refused("the call's requestState is not the proxy's", "approval_invalid")
        current = call_identity(self.gate.key, params.name, params.arguments)
        if identity != current or current == UNIDENTIFIABLE:
            return _refused("the answer was given for another call", "approval_mismatch")
        responses = dict(params.input_responses or {})
        event = call_event(tool_spec(tool, params.name), f"mcp-{step}", arguments, step)
        if "upstream" in state:  # admitted before; the tool itself asked the client
            return Admit(event, responses=responses or None, state=state["upstream"])
        if not _approved(responses.get(APPROVAL)):
            return _refused("a person declined the call", "approval_declined")
        return Admit(event)

    @staticmethod
    def asked_again(
        admitted: Admit, asked: types.InputRequiredResult, identity: str
    ) -> types.InputRequiredResult:
        """The tool's own input request, passed to the client; the retry's state names the
        admitted call and carries the tool's state, so the retry goes on to the tool."""
        state = {
            "identity": identity,
            "arguments": admitted.arguments,
            "upstream": asked.request_state,
        }
        return asked.model_copy(update={"request_state": json.dumps(state, separators=(",", ":"))})

    async def ask(
        self, ctx: Ctx, params: types.CallToolRequestParams, asked: Ask, consumer: str = ""
    ) -> Answer:
        """Ask the client's person about ``asked``: the approved event, a refusal, or (2026-07-28)
        the input request the client answers by calling again. Where nobody can be asked, the
        approvals book decides (``consumer``: who claims an approval, this run and call)."""
        code = asked.code or "approval_required"
        if not ctx.session.check_client_capability(_ELICIT):
            why = f"{asked.reason}; a person must approve it, and this client cannot ask one"
            return await self.filed(
                asked, why + " (it declared no elicitation capability)", code, consumer
            )
        message = _message(params, asked)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            state = {"identity": asked.identity, "arguments": arguments_of(asked.event)}
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=SCHEMA)
            )
            return types.InputRequiredResult(
                input_requests={APPROVAL: request},
                request_state=json.dumps(state, separators=(",", ":")),
            )
        if not ctx.session.can_send_request:
            why = f"{asked.reason}; no channel to ask a person on"
            return await self.filed(asked, why, code, consumer)
        try:
            answer = await ctx.session.elicit_form(message, SCHEMA, ctx.request_id)
        except Exception as exc:  # the client failed to ask: nobody approved
            _log.warning("harnessweaver mcp: the elicitation failed: %s", type(exc).__name__)
            return _refused(f"{asked.reason}; asking a person failed", code, asked.kind)
        if not _approved(answer):
            return _refused("a person declined the call", "approval_declined", asked.kind)
        return Admit(asked.event)

    async def filed(self, asked: Ask, why: str, code: str, consumer: str) -> Answer:
        """The approvals book's answer to ``asked`` (the module docstring); without a book,
        the refusal ``why``."""
        book = self.gate.approvals
        if book is None:
            return _refused(why, code, asked.kind)
        from ..approvals import ApprovalRefused, how_to_decide
        from ..state import StateUnavailable

        try:
            verdict = await book.consult(
                hook="tool.before",
                event=asked.event,
                reason=asked.reason,
                code=asked.code,
                approver_role=asked.role,
                subject=self.gate.subject,
                filed_by=FILED_BY,
                consumer=consumer,
            )
        except StateUnavailable as exc:
            _log.error("harnessweaver mcp: the approvals store failed: %s", type(exc).__name__)
            why = f"{asked.reason}; the approvals store cannot answer, so nobody approved it"
            return _refused(why, "state_unavailable", asked.kind)
        except ApprovalRefused as exc:
            return _refused(str(exc), exc.code, asked.kind, exc.approval)
        except Exception as exc:  # a bug in the book: nobody approved the call (fail closed)
            _log.error("harnessweaver mcp: consulting the approvals failed: %s", type(exc).__name__)
            why = f"{asked.reason}; consulting the approvals failed ({type(exc).__name__})"
            return _refused(why, "approval_failed", asked.kind)
        record = verdict.record
        if verdict.kind == "pending":
            return _refused(f"{why}; {how_to_decide(record)}", code, asked.kind, record.id)
        if verdict.kind == "denied":
            said = record.decision.reason if record.decision is not None else ""
            why = f"approval {record.id} was denied" + (f": {said}" if said else "")
            return _refused(why, "approval_denied", asked.kind, record.id)
        _log.info("harnessweaver mcp: approval %s admitted a call (used once)", record.id)
        return Admit(verdict.event_like(asked.event))


def _approved(answer: Any) -> bool:
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
        return False
    return answer.content is not None and answer.content.get("approve") is True


def _message(params: types.CallToolRequestParams, asked: Ask) -> str:
    arguments = json.dumps(params.arguments or {}, ensure_ascii=False, sort_keys=True)
    who = "needs approval" if asked.kind == "suspend" else "is escalated"
    return (
        f"The tool call {params.name!r} {who}: {asked.reason}\n"
        f"Arguments: {arguments}\nCall identity: {asked.identity}"
    )


def _refused(
    reason: str, code: str, kind: str = "block", approval: str | None = None
) -> types.CallToolResult:
    _log.warning("harnessweaver mcp: refused a call needing approval (%s)", code)
    return refusal(kind, reason, code, approval)
