"""``--require-identical`` compares what the corpus pins (INTERPRETING.md §6.4, §7).

An error's ``message`` is free text that ``then`` compares through matchers alone: two
implementations may word it differently and still observe identically. Every other field
(the error's ``kind`` and ``rule`` included) is pinned, and a difference there fails the run,
reported with the path and both values.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from driver_support import OBSERVATION, fake_impl, make_case, write_cases

from harnessweaver.cli import main
from harnessweaver.conformance.canonical import pinned
from harnessweaver.conformance.driver import Implementation, ImplRun, check_identical
from harnessweaver.conformance.expectations import CaseResult, Status

ERROR = {
    "kind": "invalid_fail_mode",
    "rule": "ruling-14",
    "message": "invalid fail_mode 'shut': fail_mode is 'closed' or 'open' (ruling 14)",
}
THEN: dict[str, Any] = {
    "error": {"kind": "invalid_fail_mode", "rule": "ruling-14", "message": {"$contains": "'shut'"}}
}


def errored(**changes: str) -> dict[str, Any]:
    observation = copy.deepcopy(OBSERVATION)
    observation["emits"], observation["traces"] = [], {}
    observation["error"] = {**ERROR, **changes}
    return observation


def run_two(
    tmp_path: Path, capsys: Any, right: dict[str, Any], then: dict[str, Any] = THEN
) -> tuple[int, str]:
    """Run one case on two fake testees, ``left`` observing :func:`errored` and ``right``
    observing ``right``, with ``--require-identical``."""
    fake = {"actual": errored(), "variants": {"b": {"actual": right}}}
    write_cases(tmp_path / "cases", [make_case("e.case", then, fake)])
    impls = [fake_impl("left"), fake_impl("right", "--variant", "b")]
    args = ["conformance", "--cases", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]
    args += ["--timeout", "5", "--require-identical"]
    code = main([*args, *(a for impl in impls for a in ("--impl", impl))])
    return code, capsys.readouterr().out


def test_observations_differing_only_in_a_message_are_identical(
    tmp_path: Path, capsys: Any
) -> None:
    code, out = run_two(tmp_path, capsys, errored(message="'shut' is no fail mode (ruling 14)"))
    assert "left: 1 passed" in out and "right: 1 passed" in out
    assert "not identical" not in out
    assert code == 0, out


def test_a_pinned_field_that_differs_is_reported_with_both_values(
    tmp_path: Path, capsys: Any
) -> None:
    # The case lets either kind of ruling 14 pass, so both implementations pass; the kind is
    # still pinned (it is not free text), so the two observations are not identical.
    then = {"kind": {"$regex": "fail_mode$"}, "rule": "ruling-14", "message": {"$any": True}}
    loose = {"error": then}
    right = errored(kind="missing_fail_mode", message="other")
    code, out = run_two(tmp_path, capsys, right, loose)
    assert "left: 1 passed" in out and "right: 1 passed" in out
    assert (
        'not identical: e.case: left and right differ at /error/kind: left "invalid_fail_mode", '
        'right "missing_fail_mode"'
    ) in out
    assert "1 case(s) not identical across implementations" in out
    assert code == 1


def _run(name: str, actual: dict[str, Any]) -> ImplRun:
    impl = Implementation(name, ("true",))
    return ImplRun(impl, {}, (CaseResult("c", Status.PASS, actual),))


def test_check_identical_leaves_the_message_out_and_nothing_else() -> None:
    same = check_identical([_run("a", errored()), _run("b", errored(message="other words"))])
    assert same == []
    (rule,) = check_identical([_run("a", errored()), _run("b", errored(rule="I3"))])
    assert (rule.path, rule.left_value, rule.right_value) == ("/error/rule", "ruling-14", "I3")
    chains = copy.deepcopy(OBSERVATION)
    chains["chains"]["task.start"] = ["late"]
    (chain,) = check_identical([_run("a", OBSERVATION), _run("b", chains)])
    assert (chain.path, chain.left_value, chain.right_value) == ("/chains/task.start", [], ["late"])


def test_pinned_drops_only_an_errors_message() -> None:
    observation = errored()
    kept = {"kind": "invalid_fail_mode", "rule": "ruling-14"}
    assert pinned(observation) == {**observation, "error": kept}
    assert observation["error"]["message"] == ERROR["message"]  # the original is untouched
    assert pinned(OBSERVATION) == OBSERVATION
    assert pinned([1]) == [1]
