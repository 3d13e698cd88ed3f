"""Canonical JSON and timing removal."""

from __future__ import annotations

import math
from typing import Any

import pytest

from harnessweaver.conformance.canonical import (
    canonical_json,
    normalize,
    parse_json,
    strip_timings,
)


def test_sorted_keys_compact_separators_and_unicode_kept() -> None:
    value = {"b": [1, {"z": "é", "a": None}], "a": "→"}
    assert canonical_json(value) == '{"a":"→","b":[1,{"a":null,"z":"é"}]}'


def test_integral_floats_serialise_like_ints() -> None:
    assert canonical_json({"x": 0.0, "y": 2.0, "z": -3.0}) == canonical_json(
        {"x": 0, "y": 2, "z": -3}
    )
    assert canonical_json(0.5) == "0.5"
    assert canonical_json(1e20) == "100000000000000000000"


def test_booleans_are_not_numbers() -> None:
    assert canonical_json([True, False, 1, 0]) == "[true,false,1,0]"
    assert normalize(True) is True


def test_non_finite_numbers_are_rejected() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})
    with pytest.raises(ValueError):
        parse_json('{"x": NaN}')
    with pytest.raises(ValueError):
        parse_json("[Infinity]")


def test_canonical_json_is_independent_of_key_order() -> None:
    assert canonical_json({"a": 1, "b": {"c": 2, "d": 3}}) == canonical_json(
        {"b": {"d": 3, "c": 2}, "a": 1.0}
    )


def test_strip_timings_removes_only_trace_timing_fields() -> None:
    observation: dict[str, Any] = {
        "error": None,
        "emits": [{"hook": "task.start", "t_ns": 7}],
        "traces": {
            "main": [{"emit": 1, "t_ns": 10, "duration_ns": 2, "kind": "hook"}],
            "other": [{"emit": 1, "kind": "hook", "duration_ns": 5}],
        },
    }
    stripped = strip_timings(observation)
    assert stripped["traces"] == {
        "main": [{"emit": 1, "kind": "hook"}],
        "other": [{"emit": 1, "kind": "hook"}],
    }
    # Outside trace records nothing is touched, and the input is not mutated.
    assert stripped["emits"] == [{"hook": "task.start", "t_ns": 7}]
    assert observation["traces"]["main"][0]["t_ns"] == 10


def test_strip_timings_leaves_odd_shapes_alone() -> None:
    assert strip_timings(["not", "an", "observation"]) == ["not", "an", "observation"]
    assert strip_timings({"traces": None}) == {"traces": None}
    assert strip_timings({"traces": {"main": "x"}}) == {"traces": {"main": "x"}}
