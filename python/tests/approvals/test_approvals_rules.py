"""The approval rules (harnessweaver/approvals/rules.py): every refusal, and the order the
checks run in when several apply (the corpus pins it, so both implementations refuse alike)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from harnessweaver.approvals import (
    KEEP,
    REFUSALS,
    ApprovalRecord,
    ApprovalRefused,
    action_of,
    binding_of,
    claim,
    decide,
    how_to_decide,
    status_at,
)
from harnessweaver.identity import content_identity

T0 = 1_796_560_000.0  # 2026-12-06
EXPIRES = T0 + 3600
SPEC = "sha256:" + "a" * 64
OTHER_SPEC = "sha256:" + "b" * 64
EVENT = {
    "step": 1,
    "tool": {"name": "refund", "description": "", "parameters": {}},
    "call": {"id": "call-1", "name": "refund", "arguments": {"amount": 5}},
}


def record(**changes: Any) -> ApprovalRecord:
    action = action_of("tool.before", EVENT)
    identity = content_identity(action)
    assert identity is not None
    base = ApprovalRecord(
        id="ap_0123456789abcdef_1",
        binding=binding_of(identity, SPEC, None),
        identity=identity,
        action=action,
        spec=SPEC,
        hook="tool.before",
        tool="refund",
        reason="a large refund",
        approver_role="finance",
        filed_by="run loop",
        filed_at=T0,
        expires_at=EXPIRES,
    )
    return base.model_copy(update=changes)


def approve(**changes: Any) -> dict[str, Any]:
    return {
        "approved": True,
        "role": "finance",
        "by": "ana",
        "reason": "ok",
        "edited": None,
    } | changes


def refused(code: str, call: Any, *args: Any, **kwargs: Any) -> ApprovalRefused:
    with pytest.raises(ApprovalRefused) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, str(caught.value)
    assert caught.value.approval == "ap_0123456789abcdef_1"
    return caught.value


# -- status_at ------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["pending", "approved"])
def test_pending_and_approved_expire_at_expires_at(status: str) -> None:
    rec = record(status=status)
    assert status_at(rec, EXPIRES - 0.001) == status
    assert status_at(rec, EXPIRES) == "expired"


@pytest.mark.parametrize("status", ["denied", "used", "closed"])
def test_what_happened_keeps_its_status_after_expiry(status: str) -> None:
    assert status_at(record(status=status), EXPIRES + 10) == status


# -- decide ---------------------------------------------------------------------------------


def test_decide_approves_with_the_decision_filled_in() -> None:
    done = decide(record(), approve(), T0 + 5)
    assert done.status == "approved"
    assert done.decision is not None
    assert (done.decision.approved, done.decision.role, done.decision.by) == (
        True,
        "finance",
        "ana",
    )
    assert done.decision.at == T0 + 5
    assert done.decision.edited is None
    assert record().status == "pending"  # the record given is unchanged (frozen)


def test_decide_denies() -> None:
    done = decide(record(), approve(approved=False), T0)
    assert done.status == "denied"
    assert done.decision is not None and done.decision.approved is False


def test_decide_edits() -> None:
    done = decide(record(), approve(edited={"amount": 3}), T0)
    assert done.status == "approved"
    assert done.decision is not None and done.decision.edited == {"amount": 3}


def test_a_used_record_is_replayed_before_anything_else() -> None:
    # expired, another spec, the wrong role and a bad edit too: replayed comes first
    rec = record(status="used")
    refused(
        "approval_replayed", decide, rec, approve(role="x", edited=[1]), EXPIRES + 1, OTHER_SPEC
    )


@pytest.mark.parametrize("status", ["approved", "denied", "closed"])
def test_a_decided_record_is_decided_before_expiry(status: str) -> None:
    rec = record(status=status)
    error = refused("approval_decided", decide, rec, approve(role="x"), EXPIRES + 1, OTHER_SPEC)
    assert status in str(error)


def test_expiry_comes_before_the_spec() -> None:
    error = refused("approval_expired", decide, record(), approve(role="x"), EXPIRES, OTHER_SPEC)
    assert "2026-12-06T" in str(error)  # the times, in the message


def test_the_spec_comes_before_the_role() -> None:
    error = refused("approval_spec_changed", decide, record(), approve(role="x"), T0, OTHER_SPEC)
    assert SPEC in str(error) and OTHER_SPEC in str(error)


def test_no_spec_given_is_not_checked() -> None:
    assert decide(record(), approve(), T0, None).status == "approved"
    assert decide(record(), approve(), T0, SPEC).status == "approved"


def test_the_role_comes_before_the_edit() -> None:
    error = refused("approval_wrong_role", decide, record(), approve(role="ops", edited=[1]), T0)
    assert "finance" in str(error) and "ops" in str(error)


def test_a_missing_role_is_the_wrong_role() -> None:
    refused("approval_wrong_role", decide, record(), approve(role=None), T0)


def test_no_approver_role_takes_any_role() -> None:
    rec = record(approver_role=None)
    assert decide(rec, approve(role=None), T0).status == "approved"
    assert decide(rec, approve(role="anyone"), T0).status == "approved"


@pytest.mark.parametrize("edited", [[1, 2], "text", 3])
def test_an_edit_is_a_json_object(edited: object) -> None:
    refused("approval_invalid_edit", decide, record(), approve(edited=edited), T0)


def test_an_edit_is_an_approval() -> None:
    refused("approval_invalid_edit", decide, record(), approve(approved=False, edited={}), T0)


# -- claim ----------------------------------------------------------------------------------


def test_claim_of_an_approved_record_uses_it() -> None:
    rec = decide(record(), approve(), T0)
    kind, used = claim(rec, rec.identity, SPEC, "run-1/step-2", T0 + 1)
    assert kind == "approved"
    assert used.status == "used"
    assert used.used is not None and (used.used.by, used.used.at) == ("run-1/step-2", T0 + 1)
    error = refused("approval_replayed", claim, used, rec.identity, SPEC, "run-1/step-2", T0 + 2)
    assert "run-1/step-2" in str(error)


def test_claim_of_a_denied_record_closes_it() -> None:
    rec = decide(record(), approve(approved=False), T0)
    kind, closed = claim(rec, rec.identity, SPEC, "c", T0 + 1)
    assert (kind, closed.status) == ("denied", "closed")
    assert closed.used is not None and closed.used.by == "c"
    refused("approval_replayed", claim, closed, rec.identity, SPEC, "other", T0 + 2)


def test_claim_of_a_pending_record_changes_nothing() -> None:
    rec = record()
    kind, same = claim(rec, rec.identity, SPEC, "c", T0)
    assert kind == "pending"
    assert same == rec


def test_claim_checks_the_spec_first() -> None:
    rec = record(status="used")
    refused("approval_spec_changed", claim, rec, "sha256:" + "0" * 64, OTHER_SPEC, "c", EXPIRES + 1)


def test_claim_checks_the_action_second() -> None:
    rec = record(status="used")
    other = "sha256:" + "0" * 64
    error = refused("approval_mismatch", claim, rec, other, SPEC, "c", EXPIRES + 1)
    assert other in str(error) and rec.identity in str(error)
    assert "5" not in str(error).replace(rec.identity, "").replace(other, "").replace(rec.id, "")


@pytest.mark.parametrize("status", ["used", "closed"])
def test_claim_refuses_a_replay_before_expiry(status: str) -> None:
    rec = record(status=status)
    refused("approval_replayed", claim, rec, rec.identity, SPEC, "c", EXPIRES + 1)


@pytest.mark.parametrize("status", ["pending", "approved", "denied"])
def test_claim_refuses_an_expired_record(status: str) -> None:
    rec = record(status=status)
    refused("approval_expired", claim, rec, rec.identity, SPEC, "c", EXPIRES)


# -- the parts ------------------------------------------------------------------------------


def test_the_action_at_tool_before_leaves_the_call_id_out() -> None:
    again = {**EVENT, "call": {**EVENT["call"], "id": "call-2"}}
    assert action_of("tool.before", EVENT) == {
        "hook": "tool.before",
        "tool": "refund",
        "arguments": {"amount": 5},
    }
    assert action_of("tool.before", again) == action_of("tool.before", EVENT)


def test_the_action_at_tool_after_holds_the_result() -> None:
    event = {**EVENT, "result": {"output": "done", "is_error": False, "truncated": False}}
    assert action_of("tool.after", event)["result"] == event["result"]


def test_the_action_elsewhere_is_the_whole_event() -> None:
    event = {"step": 3, "usage": {"input_tokens": 1}}
    assert action_of("step.end", event) == {"hook": "step.end", "event": event}


def test_an_event_model_is_its_json_form() -> None:
    import harnessweaver as hw

    event = hw.ToolCallEvent(
        tool=hw.ToolSpec(name="refund"), call=hw.ToolCall(id="x", name="refund", arguments={"a": 1})
    )
    assert action_of("tool.before", event)["arguments"] == {"a": 1}


def test_a_tool_event_without_a_call_cannot_be_bound() -> None:
    with pytest.raises(ValueError, match="call"):
        action_of("tool.before", {"step": 1})


def test_the_binding_changes_with_each_part() -> None:
    base = binding_of("sha256:" + "1" * 64, SPEC, None)
    assert base != binding_of("sha256:" + "2" * 64, SPEC, None)
    assert base != binding_of("sha256:" + "1" * 64, OTHER_SPEC, None)
    assert base != binding_of("sha256:" + "1" * 64, SPEC, "run:r1")
    assert base == content_identity(
        {"identity": "sha256:" + "1" * 64, "spec": SPEC, "subject": None}
    )


def test_refusal_codes_and_pickling() -> None:
    assert len(REFUSALS) == 9
    with pytest.raises(ValueError, match="unknown approval refusal code"):
        ApprovalRefused("nope", "x")
    error = pickle.loads(pickle.dumps(ApprovalRefused("approval_expired", "msg", "ap_1")))
    assert (error.code, error.approval, str(error)) == ("approval_expired", "ap_1", "msg")


def test_how_to_decide_names_the_id_role_expiry_and_commands() -> None:
    text = how_to_decide(record())
    assert text == (
        "approval ap_0123456789abcdef_1 is pending (role finance, expires 2026-12-06T13:26:40Z): "
        "decide it with `harnessweaver approvals approve ap_0123456789abcdef_1` or "
        "`harnessweaver approvals deny ap_0123456789abcdef_1`"
    )
    assert "(expires 2026" in how_to_decide(record(approver_role=None))


def test_the_record_round_trips_through_json() -> None:
    rec = decide(record(), approve(edited={"amount": 1}), T0)
    assert ApprovalRecord.model_validate(rec.to_json()) == rec
    assert rec.to_json()["v"] == 1
    assert KEEP == 7 * 24 * 3600
