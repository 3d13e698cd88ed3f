"""Approvals cases (``given.approvals``, INTERPRETING.md §2, §4, I34): the Python runner runs
the steps on a real book and memory store; the driver compares each answer by the keys written,
leaves refusal messages to matchers, and the Rust testee skips the family."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from checkout import CORPUS
from driver_support import write_cases

from harnessweaver.conformance.canonical import pinned
from harnessweaver.conformance.cases import Case, CaseLoadError, load_cases
from harnessweaver.conformance.driver import (
    RUST_TESTEE,
    RunConfig,
    builtin_implementations,
    run_implementation,
)
from harnessweaver.conformance.expectations import Expectations, Status
from harnessweaver.conformance.matchers import compare_observation
from harnessweaver.conformance.testee import FEATURES, observe

SAMPLES: dict[str, Any] = json.loads((CORPUS / "catalogue.json").read_text())["samples"]
SPEC = "sha256:" + "a" * 64
FILE = {
    "hook": "tool.before",
    "reason": "refunds need finance",
    "approver_role": "finance",
    "filed_by": "run loop",
}


def approvals_case(when: list[dict[str, Any]], then: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "approvals.x",
        "description": "An approvals case.",
        "rules": ["I34"],
        "features": ["approvals"],
        "given": {"approvals": {"spec": SPEC, "now": 1000, "expires_after": 60}},
        "when": when,
        "then": {"emits": [], "approvals": then},
    }


def test_the_runner_declares_approvals() -> None:
    assert "approvals" in FEATURES


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_each_step_is_answered_and_a_refusal_does_not_end_the_case(backend: str) -> None:
    case = approvals_case(
        [
            {"file": FILE},
            {"decide": {"id": "ap_0000000000000000_1", "approved": True}},
            {"now": 1060, "list": {}},
        ],
        [],
    )
    actual = observe(case, SAMPLES, backend)
    answers = actual["approvals"]
    record = answers[0]["record"]
    assert record["status"] == "pending" and record["expires_at"] == 1060
    assert answers[1]["refused"]["code"] == "approval_unknown"
    assert answers[2] == {"list": [{"id": record["id"], "status": "expired"}]}
    assert actual["error"] is None and actual["emits"] == [] and actual["traces"] == {}


def test_only_the_keys_written_are_compared_in_an_answer() -> None:
    case = approvals_case([{"file": FILE}], [])
    actual = observe(case, SAMPLES, "asyncio")
    assert not compare_observation(
        {"emits": [], "approvals": [{"record": {"status": "pending"}}]}, actual
    )
    diffs = compare_observation(
        {"emits": [], "approvals": [{"record": {"status": "used"}}]}, actual
    )
    assert [d.path for d in diffs] == ["/approvals/0/record/status"]
    extra = compare_observation(
        {"emits": [], "approvals": [{"record": {}}, {"status": "pending"}]}, actual
    )
    assert [d.path for d in extra] == ["/approvals"]


def test_refusal_messages_are_not_pinned() -> None:
    observation = {
        "approvals": [{"refused": {"code": "approval_unknown", "approval": None, "message": "x"}}]
    }
    assert pinned(observation)["approvals"] == [
        {"refused": {"code": "approval_unknown", "approval": None}}
    ]


def test_loading_refuses_an_approvals_case_without_its_tag(tmp_path: Path) -> None:
    case = approvals_case([], [])
    case["features"] = []
    write_cases(tmp_path, [case])
    with pytest.raises(CaseLoadError, match="carries the feature approvals"):
        load_cases(tmp_path)


def test_loading_refuses_a_refusal_message_written_as_text(tmp_path: Path) -> None:
    refused = {"code": "approval_unknown", "approval": None, "message": "no such approval"}
    write_cases(tmp_path, [approvals_case([{"get": {"id": "x"}}], [{"refused": refused}])])
    with pytest.raises(CaseLoadError, match=r"approvals\[0\].refused.message: free text"):
        load_cases(tmp_path)


@pytest.mark.skipif(not RUST_TESTEE.is_file(), reason="the Rust testee is not built")
def test_the_rust_testee_skips_approvals_cases() -> None:
    data = approvals_case([{"file": FILE}], [{"record": {"status": "pending"}}])
    case = Case("approvals.x", data, Path("approvals.json"))
    config = RunConfig(cases=(case,), implementations=(), corpus=CORPUS, timeout=60)
    run = run_implementation(
        builtin_implementations()["rust"], [case], Expectations("rust"), config
    )
    assert [r.status for r in run.results] == [Status.SKIP]
    assert "approvals" in (run.results[0].reason or "")
