"""Strict known-failure lists (INTERPRETING.md §7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from driver_support import write_expectations

from harnessweaver.conformance.expectations import (
    CaseResult,
    Entry,
    ExpectationsError,
    Status,
    apply_expectation,
    load_expectations,
    parse_expectations,
)
from harnessweaver.conformance.matchers import Diff


def document(*entries: dict[str, Any], impl: str = "x") -> dict[str, Any]:
    return {"implementation": impl, "entries": list(entries)}


def test_no_directory_or_no_file_means_no_entries(tmp_path: Path) -> None:
    assert load_expectations(None, "x").entries == ()
    assert load_expectations(tmp_path, "x").entries == ()


def test_load_from_directory(tmp_path: Path) -> None:
    path = write_expectations(
        tmp_path, "ts", [{"id": "a.b", "status": "xfail", "reason": "r", "issue": "#1"}]
    )
    loaded = load_expectations(tmp_path, "ts")
    assert loaded.source == path
    assert loaded.entries == (Entry("a.b", Status.XFAIL, "r", "#1"),)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"id": "a.b", "status": "xfail"}, "reason is required"),
        ({"id": "a.b", "status": "xfail", "reason": "  "}, "reason is required"),
        ({"id": "a.b", "status": "fail", "reason": "r"}, 'status must be "xfail" or "skip"'),
        ({"id": "A.b", "status": "skip", "reason": "r"}, "is not a case id"),
        ({"id": "a*b", "status": "skip", "reason": "r"}, "is not a case id"),
        ({"id": "a.b", "status": "skip", "reason": "r", "isue": "#1"}, "unknown key(s): isue"),
        ({"id": "a.b", "status": "skip", "reason": "r", "issue": 7}, "issue must be a string"),
    ],
)
def test_bad_entries_are_load_errors(entry: dict[str, Any], problem: str) -> None:
    with pytest.raises(ExpectationsError) as caught:
        parse_expectations(document(entry), "x")
    assert problem in str(caught.value)
    assert "entries[0]" in str(caught.value)


def test_the_file_must_name_its_implementation(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match="'ts', expected 'x'"):
        parse_expectations(document(impl="ts"), "x")
    with pytest.raises(ExpectationsError, match="entries"):
        parse_expectations({"implementation": "x"}, "x")
    (tmp_path / "x.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(ExpectationsError, match=r"x\.json: cannot read JSON"):
        load_expectations(tmp_path, "x")


def test_duplicate_entries_are_load_errors() -> None:
    entry = {"id": "a.b", "status": "skip", "reason": "r"}
    with pytest.raises(ExpectationsError, match="listed twice"):
        parse_expectations(document(entry, entry), "x")


def test_lookup_prefers_exact_then_longest_prefix() -> None:
    loaded = parse_expectations(
        document(
            {"id": "emit.*", "status": "xfail", "reason": "broad"},
            {"id": "emit.timeout.*", "status": "xfail", "reason": "narrow"},
            {"id": "emit.timeout.fires", "status": "skip", "reason": "exact"},
        ),
        "x",
    )
    assert loaded.lookup("emit.timeout.fires").reason == "exact"  # type: ignore[union-attr]
    assert loaded.lookup("emit.timeout.other").reason == "narrow"  # type: ignore[union-attr]
    assert loaded.lookup("emit.order").reason == "broad"  # type: ignore[union-attr]
    assert loaded.lookup("declare.name") is None


def test_unmatched_entries_are_reported() -> None:
    loaded = parse_expectations(
        document(
            {"id": "emit.*", "status": "xfail", "reason": "r"},
            {"id": "gone.case", "status": "xfail", "reason": "r"},
            {"id": "gone.*", "status": "skip", "reason": "r"},
        ),
        "x",
    )
    assert [entry.id for entry in loaded.unmatched(["emit.a", "declare.b"])] == [
        "gone.case",
        "gone.*",
    ]


XFAIL = Entry("c", Status.XFAIL, "known bug")
SKIP = Entry("c", Status.SKIP, "not supported")


def test_apply_unlisted_results_are_unchanged() -> None:
    failed = CaseResult("c", Status.FAIL, {"error": None}, (Diff("/x", 1, 2),))
    assert apply_expectation(failed, None) is failed


def test_apply_xfail() -> None:
    failed = CaseResult("c", Status.FAIL, {"error": None}, (Diff("/x", 1, 2),))
    result = apply_expectation(failed, XFAIL)
    assert result.status is Status.XFAIL
    assert result.reason == "known bug"
    assert result.diff == failed.diff


def test_apply_xpass() -> None:
    result = apply_expectation(CaseResult("c", Status.PASS, {"error": None}), XFAIL)
    assert result.status is Status.XPASS
    assert "known bug" in (result.reason or "")


def test_apply_xfail_covers_crashes_and_keeps_the_cause() -> None:
    crashed = CaseResult("c", Status.CRASH, reason="runner exited with code 3")
    result = apply_expectation(crashed, XFAIL)
    assert result.status is Status.XFAIL
    assert result.reason == "known bug [crash: runner exited with code 3]"


def test_apply_skip_entry_and_runner_skips() -> None:
    failed = CaseResult("c", Status.FAIL, {"error": None}, (Diff("/x", 1, 2),))
    assert apply_expectation(failed, SKIP) == CaseResult("c", Status.SKIP, reason="not supported")
    skipped = CaseResult("c", Status.SKIP, reason="runner said so")
    assert apply_expectation(skipped, XFAIL) is skipped


def test_result_json_has_diff_only_when_failed_and_reason_when_given() -> None:
    assert CaseResult("c", Status.PASS, {"error": None}).to_json() == {
        "id": "c",
        "status": "pass",
        "actual": {"error": None},
    }
    line = CaseResult("c", Status.FAIL, {}, (Diff("/a", 1, 2),), detail="stderr").to_json()
    assert line == {
        "id": "c",
        "status": "fail",
        "actual": {},
        "diff": [{"path": "/a", "expected": 1, "actual": 2}],
    }
    assert CaseResult("c", Status.SKIP, reason="r").to_json()["reason"] == "r"
