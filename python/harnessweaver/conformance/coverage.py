"""What a run covered: which implementations ran, which could not and how to get them, and
what each one skipped and why, with the install that runs the skipped cases.

A run from a plain ``pip install`` passes with cases skipped (the Cedar cases need the
``cedar`` extra): these lines say so at the end of the report, so a pass is never read as
more than it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from harnessweaver.conformance.driver import NOT_DECLARED, ImplRun, RunOutcome
from harnessweaver.conformance.expectations import Status

__all__ = ["coverage_lines"]

# What runs the cases of a feature tag, by the family of the implementation that skipped them.
_FEATURE_HINTS = {
    ("python", "cedar"): "pip install 'harnessweaver[cedar]' runs them (Cedar's engine, cedarpy)",
    ("ts", "cedar"): "npm install @cedar-policy/cedar-wasm@4.12.0 beside the package runs them",
    ("rust", "harness-spec"): "the Rust testee runs the core alone: specs load in Python and TS",
    ("rust", "approvals"): "the Rust testee runs the core alone: approvals are Python's and TS's",
    ("python", "throw-values"): "TypeScript's alone: JavaScript throws values that are not errors",
}


def _family(name: str) -> str:
    return "python" if name.startswith("python-") else name


def _skips(run: ImplRun) -> list[str]:
    """``N skipped: why`` for each reason this implementation skipped cases for."""
    reasons = Counter(
        result.reason or "no reason given" for result in run.results if result.status is Status.SKIP
    )
    lines = []
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        hints = []
        if reason.startswith(NOT_DECLARED):
            for feature in reason.removeprefix(NOT_DECLARED).split(", "):
                hint = _FEATURE_HINTS.get((_family(run.impl.name), feature))
                if hint is not None:
                    hints.append(hint)
        shown = f"{count} skipped: {reason}"
        lines.append(f"  {run.impl.name}: {shown}" + "".join(f" -> {hint}" for hint in hints))
    return lines


def coverage_lines(outcome: RunOutcome, not_run: Mapping[str, str]) -> list[str]:
    """The lines that close a report: the implementations run, those not run here with how to
    get them (``not_run``: name -> why), and each implementation's skips with their reasons."""
    ran = ", ".join(run.impl.name for run in outcome.runs) or "none"
    lines = [f"implementations run: {ran}"]
    for name, why in not_run.items():
        lines.append(f"  not run: {name}: {why}")
    skips = [line for run in outcome.runs for line in _skips(run)]
    if skips:
        lines.append("cases skipped (not judged):")
        lines.extend(skips)
    return lines
