"""The conformance testee's ``{"cedar": {...}}`` behaviour and its ``cedar`` feature (I38)."""

from __future__ import annotations

from typing import Any

import pytest

from harnessweaver.conformance.testee import FEATURES, observe

pytest.importorskip("cedarpy")

POLICIES = """
@id("refunds") @requireApproval("finance")
permit(principal in Group::"staff", action == Action::"tool.before", resource == Tool::"refund")
  when { context.arguments.amount > 100 };
permit(principal in Group::"staff", action == Action::"tool.before", resource == Tool::"refund");
"""
ENTITIES = [
    {
        "uid": {"type": "User", "id": "bob"},
        "attrs": {},
        "parents": [{"type": "Group", "id": "staff"}],
    }
]


FORBID_AGENTS = 'forbid(principal is Acme::Agent, action, resource == Acme::Tool::"refund");'
SAMPLES: dict[str, Any] = {}


def refund(amount: Any) -> dict[str, Any]:
    return {
        "step": 1,
        "tool": {"name": "refund", "description": "", "parameters": {}},
        "call": {"id": "c1", "name": "refund", "arguments": {"amount": amount}},
    }


SAMPLES["tool.before"] = refund(0)  # the testee reads a hook's sample even when a step gives one


def case(does: dict[str, Any], *emits: tuple[str, Any]) -> dict[str, Any]:
    return {
        "id": "policy.test",
        "given": {
            "contexts": {"staff": {"attributes": {"user": "bob"}}},
            "middleware": [
                {"name": "policy", "hooks": ["tool.before"], "fail_mode": "closed", "does": does}
            ],
        },
        "when": [{"emit": "tool.before", "event": event, "context": who} for who, event in emits],
    }


def outcomes(seen: dict[str, Any]) -> list[Any]:
    assert seen["error"] is None
    return [emit["outcome"] for emit in seen["emits"]]


def test_the_testee_declares_cedar_when_the_engine_is_installed() -> None:
    assert "cedar" in FEATURES


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_cedar_behaviour_decides_with_the_context_s_attributes(backend: str) -> None:
    does = {"cedar": {"policies": POLICIES, "entities": ENTITIES}}
    emits = [
        ("staff", refund(5)),
        ("staff", refund(500)),
        ("main", refund(5)),
        ("staff", refund(0.5)),
    ]
    seen = observe(case(does, *emits), SAMPLES, backend)
    assert outcomes(seen) == [
        {"kind": "continue", "modified": False},
        {
            "kind": "suspend",
            "reason": "approval required by Cedar policy refunds",
            "approver_role": "finance",
            "code": "cedar:refunds",
        },
        {
            "kind": "block",
            "reason": "no Cedar policy permits this request",
            "code": "cedar:no_permit",
        },
        {
            "kind": "block",
            "reason": "middleware policy failed: exception",
            "code": "middleware_error",
        },
    ]
    failed = [r for r in seen["traces"]["staff"] if r.get("failure")]
    assert [r["error"] for r in failed] == ["CedarRequestError"]


def test_no_decision_namespace_and_a_json_schema_are_taken_from_the_behaviour() -> None:
    schema = {
        "Acme": {
            "entityTypes": {"Agent": {}, "User": {}, "Tool": {}},
            "actions": {
                "tool.before": {
                    "appliesTo": {"principalTypes": ["Agent", "User"], "resourceTypes": ["Tool"]}
                }
            },
        }
    }
    import json

    does = {
        "cedar": {
            "policies": FORBID_AGENTS,
            "schema": json.dumps(schema),
            "schema_format": "json",
            "namespace": "Acme",
            "no_decision": "continue",
        }
    }
    seen = observe(case(does, ("staff", refund(1)), ("main", refund(1))), SAMPLES, "asyncio")
    assert outcomes(seen) == [
        {"kind": "continue", "modified": False},
        {"kind": "block", "reason": "forbidden by Cedar policy policy0", "code": "cedar:policy0"},
    ]
