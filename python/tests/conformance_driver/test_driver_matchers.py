"""The comparison of INTERPRETING.md §6.4."""

from __future__ import annotations

import copy
from typing import Any

from driver_support import OBSERVATION

from harnessweaver.conformance.canonical import strip_timings
from harnessweaver.conformance.matchers import (
    ABSENT,
    Diff,
    compare_observation,
    compare_value,
    first_difference,
    matcher_problems,
)


def observed() -> dict[str, Any]:
    return strip_timings(copy.deepcopy(OBSERVATION))  # type: ignore[no-any-return]


def paths(diffs: list[Diff]) -> list[str]:
    return [diff.path for diff in diffs]


def test_equal_observation_matches() -> None:
    actual = observed()
    assert compare_observation(copy.deepcopy(actual), actual) == []


def test_key_order_never_matters_and_integral_numbers_are_equal() -> None:
    then = {
        "emits": [
            {
                "ran": ["guard"],
                "outcome": {"code": "cap", "kind": "block", "reason": "refund over cap"},
                "event": {"call": {"arguments": {"amount": 150}, "name": "refund", "id": "c1"}},
            }
        ]
    }
    assert compare_observation(then, observed()) == []


def test_true_is_not_one_and_one_is_not_a_string() -> None:
    assert compare_value(True, 1) == [Diff("", True, 1)]
    assert compare_value(1, True) == [Diff("", 1, True)]
    assert compare_value(1, "1") == [Diff("", 1, "1")]
    assert compare_value(None, False) == [Diff("", None, False)]
    assert compare_value(1.5, 1.5) == []
    assert compare_value(1, 1.0) == []


def test_then_error_absent_requires_null_error() -> None:
    actual = observed()
    actual["error"] = {"kind": "duplicate_name", "rule": "I2", "message": "guard twice"}
    diffs = compare_observation({}, actual)
    assert diffs == [Diff("/error", None, actual["error"])]


def test_then_error_with_message_matcher() -> None:
    actual = observed()
    actual["error"] = {"kind": "invalid_band", "rule": "rule-1", "message": "band 'core' (rule-1)"}
    good = {"kind": "invalid_band", "rule": "rule-1", "message": {"$contains": "'core'"}}
    assert compare_observation({"error": good}, actual) == []
    bad = {**good, "message": {"$contains": "'kernel'"}}
    diffs = compare_observation({"error": bad}, actual)
    assert diffs == [Diff("/error/message", {"$contains": "'kernel'"}, "band 'core' (rule-1)")]


def test_any_matches_anything_including_absence() -> None:
    assert compare_value({"$any": True}, {"deep": [1, 2]}) == []
    assert compare_value({"x": {"$any": True}}, {}) == []
    assert compare_value({"x": 1}, {}) == [Diff("/x", 1, ABSENT)]


def test_contains_and_regex_match_only_strings() -> None:
    assert compare_value({"$contains": "ell"}, "hello") == []
    assert compare_value({"$contains": "1"}, 1) == [Diff("", {"$contains": "1"}, 1)]
    # re.search, not fullmatch
    assert compare_value({"$regex": "l+o"}, "hello world") == []
    assert compare_value({"$regex": "^world"}, "hello world") != []
    assert compare_value({"$regex": "."}, None) != []


def test_a_dict_with_other_keys_is_data_not_a_matcher() -> None:
    value = {"$any": True, "other": 1}
    assert compare_value(value, {"$any": True, "other": 1}) == []
    assert compare_value(value, "x") == [Diff("", value, "x")]


def test_emits_must_have_the_same_length() -> None:
    actual = observed()
    diffs = compare_observation({"emits": []}, actual)
    assert diffs == [Diff("/emits", [], actual["emits"])]


def test_emits_compare_only_written_keys() -> None:
    actual = observed()
    then = {"emits": [{"ran": ["guard"], "outcome": {"$any": True}}]}
    assert compare_observation(then, actual) == []
    then = {"emits": [{"ran": ["other"], "outcome": {"$any": True}, "hook": "tool.before"}]}
    assert paths(compare_observation(then, actual)) == ["/emits/0/ran/0"]


def test_written_emit_outcome_is_compared_whole() -> None:
    actual = observed()
    then = {
        "emits": [{"ran": ["guard"], "outcome": {"kind": "block", "reason": "refund over cap"}}]
    }
    diffs = compare_observation(then, actual)
    assert diffs == [Diff("/emits/0/outcome/code", ABSENT, "cap")]
    assert diffs[0].to_json() == {"path": "/emits/0/outcome/code", "actual": "cap"}


def test_traces_are_compared_as_whole_lists_of_exact_records() -> None:
    actual = observed()
    expected = copy.deepcopy(actual["traces"])
    assert compare_observation({"traces": expected}, actual) == []
    fewer = {"main": expected["main"][:1]}
    assert paths(compare_observation({"traces": fewer}, actual)) == ["/traces/main"]
    partial = copy.deepcopy(expected)
    del partial["main"][0]["band"]
    diffs = compare_observation({"traces": partial}, actual)
    assert diffs == [Diff("/traces/main/0/band", ABSENT, "app")]


def test_traces_compare_every_context() -> None:
    actual = observed()
    actual["traces"]["side"] = []
    expected = {"main": copy.deepcopy(actual["traces"]["main"])}
    assert compare_observation({"traces": expected}, actual) == [Diff("/traces/side", ABSENT, [])]


def test_chains_compare_only_listed_hooks() -> None:
    actual = observed()
    assert compare_observation({"chains": {"tool.before": ["guard"]}}, actual) == []
    diffs = compare_observation({"chains": {"tool.after": ["guard"]}}, actual)
    assert diffs == [Diff("/chains/tool.after", ["guard"], [])]
    del actual["chains"]["model.before"]  # the schema refuses it; the comparison reports it
    diffs = compare_observation({"chains": {"model.before": []}}, actual)
    assert diffs == [Diff("/chains/model.before", [], ABSENT)]


def test_excludes_searches_the_whole_canonical_observation() -> None:
    actual = observed()
    assert compare_observation({"excludes": ["secret"]}, actual) == []
    actual["emits"][0]["outcome"]["reason"] = "middleware guard failed: secret=42"
    diffs = compare_observation({"excludes": ["secret", "absent-word"]}, actual)
    assert diffs == [
        Diff(
            "/emits/0/outcome/reason", {"$excludes": "secret"}, "middleware guard failed: secret=42"
        )
    ]


def test_excludes_finds_keys_and_numbers_too() -> None:
    actual = observed()
    actual["traces"]["main"][0]["leak"] = 31337
    diffs = compare_observation({"excludes": ["31337"]}, actual)
    assert paths(diffs) == ["/traces/main/0/leak"]


def test_json_pointer_escaping() -> None:
    diffs = compare_value({"a/b": {"c~d": 1}}, {"a/b": {"c~d": 2}})
    assert paths(diffs) == ["/a~1b/c~0d"]


def test_unknown_then_keys_are_compared_by_equality() -> None:
    actual = observed()
    actual["extra"] = {"n": 1}
    assert compare_observation({"extra": {"n": 1.0}}, actual) == []
    assert paths(compare_observation({"extra": {"n": 2}}, actual)) == ["/extra/n"]


def test_non_object_observation_is_one_root_diff() -> None:
    assert compare_observation({}, ["nope"]) == [Diff("", {}, ["nope"])]


def test_first_difference_ignores_matchers() -> None:
    assert first_difference({"a": 1}, {"a": 1.0}) is None
    assert first_difference({"$any": True}, {"x": 1}) == "/$any"
    assert first_difference([1, 2], [1, 3]) == "/1"


def test_matcher_problems_are_reported_with_paths() -> None:
    then = {
        "emits": [{"outcome": {"$absent": True}}],
        "error": {"message": {"$regex": "("}},
        "chains": {"x": [{"$any": False}, {"$contains": 3}]},
    }
    problems = dict(matcher_problems(then))
    assert set(problems) == {"/emits/0/outcome", "/error/message", "/chains/x/0", "/chains/x/1"}
    assert "unknown matcher '$absent'" in problems["/emits/0/outcome"]
    assert "does not compile" in problems["/error/message"]
    assert list(matcher_problems({"a": {"$any": True}, "b": {"$regex": "^x$"}})) == []
