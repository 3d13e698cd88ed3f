"""Differential testing: the case generator and the divergence hunt."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from checkout import CORPUS, needs_compiled_core
from hypothesis import Phase, find, given, settings

import harnessweaver as hw
from harnessweaver.conformance.driver import Implementation, builtin_implementations
from harnessweaver.conformance.fuzz import case_file, fuzz, report
from harnessweaver.conformance.generate import EMIT_ARGUMENTS, ODD_VALUES, cases

_SEARCH = settings(max_examples=2000, database=None, phases=[Phase.generate], derandomize=True)
"""For ``find``: a search for a rare draw, made the same way on every run (derandomized), so
that a draw the generator can make is found or missed by the code, never by the seed."""

SCHEMA = jsonschema.Draft202012Validator(
    json.loads((CORPUS / "schema" / "case.schema.json").read_text())
)
# The Python testee on one backend: quick enough to shrink with.
REFERENCE = Implementation(
    "python-pure",
    (
        sys.executable,
        "-m",
        "harnessweaver.conformance.testee",
        "--core",
        "python",
        "--backend",
        "asyncio",
    ),
)
MUTANT = Implementation(
    "mutant", (sys.executable, str(Path(__file__).with_name("mutant_testee.py")))
)


def _validate(case: dict[str, Any]) -> None:
    document = {"topic": "fuzz", "description": "Generated.", "cases": [{**case, "id": "fuzz.x"}]}
    SCHEMA.validate(document)


@settings(max_examples=150, deadline=None, database=None)
@given(cases())
def test_generated_cases_are_valid_corpus_cases(case: dict[str, Any]) -> None:
    _validate(case)
    for decl in case["given"]["middleware"]:
        timeout, does = decl.get("timeout"), decl["does"]
        if timeout == "1ms":  # must fire: it sleeps or blocks far longer than 1 ms
            assert does.get("sleep") == 30 or does.get("busy") == 0.01
        elif timeout in ODD_VALUES["timeout"]:  # invalid (I17): refused, so nothing runs
            with pytest.raises(hw.DeclarationError):
                hw.parse_duration(timeout)
        elif timeout is not None:  # must not fire: nothing slow behind a 30 s timeout
            assert "busy" not in json.dumps(does) and '"sleep": 30' not in json.dumps(does)


def test_a_divergence_is_found_shrunk_and_printed_as_a_case_file(tmp_path: Path) -> None:
    run = fuzz([REFERENCE, MUTANT], count=300, seed=7, corpus=CORPUS)
    assert run.divergence is not None
    minimal = run.divergence.case
    # The mutant differs only when an emit runs two middleware: shrinking gets down to that.
    assert len(minimal["given"]["middleware"]) == 2
    assert [step for step in minimal["when"] if "emit" in step] == minimal["when"][:1]
    assert "/emits/0/ran" in run.divergence.problem
    out, written = io.StringIO(), tmp_path / "divergence.json"
    assert report(run, out, written) == 1
    assert "FUZZ FAILED" in out.getvalue() and f"seed {run.seed}" in out.getvalue()
    document = json.loads(written.read_text())
    assert document == case_file(run.divergence)
    SCHEMA.validate(document)
    assert document["cases"][0]["id"].startswith("fuzz.divergence-")
    # The expectation is the first implementation's (the reference's) observation.
    reference_obs = json.loads(run.divergence.answers["python-pure"])
    assert document["cases"][0]["then"]["emits"] == reference_obs["emits"]


@needs_compiled_core
def test_agreeing_implementations_pass(tmp_path: Path) -> None:
    pure = builtin_implementations()["python-pure"]
    rust = builtin_implementations()["python-rust"]
    run = fuzz([pure, rust], count=40, seed=3, corpus=CORPUS)
    assert run.divergence is None and run.count == 40
    out = io.StringIO()
    assert report(run, out) == 0
    assert out.getvalue() == "FUZZ PASSED: 40 generated cases agreed (seed 3)\n"


def _warnings_given(case: dict[str, Any]) -> list[Any]:
    """Every ``warnings`` value a case's behaviours carry (I24), at any depth."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "return" in node and "warnings" in node:
                found.append(node["warnings"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(case["given"])
    return found


@pytest.mark.parametrize(
    "wanted",
    [
        lambda w: isinstance(w, list) and len(w) > 8,  # past the count bound
        lambda w: isinstance(w, list) and any(isinstance(t, str) and len(t) > 256 for t in w),
        lambda w: not isinstance(w, list),  # an invalid value
        lambda w: isinstance(w, list) and any(not isinstance(t, str) for t in w),
    ],
    ids=["many", "long", "not-a-list", "bad-item"],
)
def test_the_generator_draws_warnings_of_every_kind(wanted: Any) -> None:
    found = find(
        cases(),
        lambda case: any(wanted(w) for w in _warnings_given(case)),
        # Found is enough: shrinking the case is what made this test take minutes.
        settings=_SEARCH,
    )
    _validate(found)


def _arguments_emitted(case: dict[str, Any]) -> list[Any]:
    steps = [s for s in case["when"] if "emit" in s]
    steps += [s for group in case["when"] if "concurrent" in group for s in group["concurrent"]]
    return [s["event"]["call"]["arguments"] for s in steps if "call" in s.get("event", {})]


@pytest.mark.parametrize("arguments", EMIT_ARGUMENTS, ids=ascii)
def test_the_generator_emits_every_identity_edge(arguments: Any) -> None:
    found = find(
        cases(),
        lambda case: arguments in _arguments_emitted(case),
        settings=_SEARCH,
    )
    _validate(found)


def test_the_generator_builds_buses_with_identities_over_odd_arguments() -> None:
    found = find(
        cases(),
        lambda case: (
            case["given"].get("identity") == "jcs-sha256"
            and any(arguments for arguments in _arguments_emitted(case))
        ),
        settings=_SEARCH,
    )
    _validate(found)
