"""What a run leaves behind: the results files and the console report.

Results files (INTERPRETING.md §7) hold one canonical JSON line per case after a header, so
``diff results/python-rust.jsonl results/ts.jsonl`` compares implementations line by line.
The console report is a case-by-implementation table, the differences of what failed, where
two implementations' pinned observations differ (``--require-identical``), one summary line
per implementation and a final ``CONFORMANCE PASSED``/``FAILED`` line. When the
output is not a terminal, or ``rich`` is not installed, the report is plain text: no colour,
no escape sequences (``console.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harnessweaver.conformance.canonical import canonical_json
from harnessweaver.conformance.console import Console, make_console
from harnessweaver.conformance.coverage import coverage_lines
from harnessweaver.conformance.driver import ImplRun, Mismatch, RunOutcome
from harnessweaver.conformance.expectations import FAILING, CaseResult, Status
from harnessweaver.conformance.matchers import ABSENT, Diff

__all__ = [
    "STYLES",
    "final_line",
    "make_console",
    "print_report",
    "result_lines",
    "summary_line",
    "write_results",
]

STYLES: dict[Status, str] = {
    Status.PASS: "green",
    Status.FAIL: "bold red",
    Status.XFAIL: "yellow",
    Status.XPASS: "bold magenta",
    Status.SKIP: "dim",
    Status.ERROR: "red",
    Status.CRASH: "bold red",
    Status.TIMEOUT: "red",
}
_SUMMARY = (
    (Status.PASS, "passed"),
    (Status.FAIL, "failed"),
    (Status.SKIP, "skipped"),
    (Status.XFAIL, "xfail"),
    (Status.XPASS, "xpass"),
    (Status.ERROR, "errors"),
    (Status.CRASH, "crashed"),
    (Status.TIMEOUT, "timed out"),
)
_VALUE_LIMIT = 300
_STDERR_LINES = 20


def result_lines(run: ImplRun, corpus_version: str | None) -> list[str]:
    """The lines of one implementation's results file: header, then cases by id."""
    lines = [canonical_json(run.header(corpus_version))]
    ordered = sorted(run.results, key=lambda result: result.id)
    lines.extend(canonical_json(result.to_json()) for result in ordered)
    return lines


def write_results(outcome: RunOutcome, out_dir: Path) -> list[Path]:
    """Write ``out_dir/<impl>.jsonl`` for every implementation; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for run in outcome.runs:
        path = out_dir / f"{run.impl.name}.jsonl"
        text = "".join(f"{line}\n" for line in result_lines(run, outcome.corpus_version))
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


def summary_line(run: ImplRun) -> str:
    counts = run.counts()
    parts = ", ".join(f"{counts[status]} {label}" for status, label in _SUMMARY)
    return f"{run.impl.name}: {parts}"


def final_line(outcome: RunOutcome) -> str:
    problems = outcome.problems()
    if not problems:
        return "CONFORMANCE PASSED"
    return "CONFORMANCE FAILED: " + "; ".join(problems)


def print_report(
    outcome: RunOutcome, console: Console, not_run: Mapping[str, str] | None = None
) -> None:
    """The table, what failed and differed, the summary lines, what the run covered (``not_run``:
    the built-in implementations that could not run here, with why), the final line."""
    for run in outcome.runs:
        about = "not started" if run.implementation is None else _about(run.implementation)
        console.text((f"{run.impl.name}: {about}", None))
    _table(outcome, console)
    for run in outcome.runs:
        _print_problems(run, console)
    for mismatch in outcome.mismatches:
        console.text((_mismatch_text(mismatch), None), style="bold red")
    for run in outcome.runs:
        console.text((summary_line(run), None))
    for line in coverage_lines(outcome, not_run or {}):
        console.text((line, None))
    style = "bold green" if outcome.passed else "bold red"
    console.text((final_line(outcome), None), style=style)


def _table(outcome: RunOutcome, console: Console) -> None:
    rows: dict[str, list[tuple[str, str | None]]] = {}
    for index, run in enumerate(outcome.runs):
        for result in run.results:
            cells = rows.setdefault(result.id, [("-", None)] * len(outcome.runs))
            cells[index] = (str(result.status), STYLES[result.status])
    columns = ["case", *(run.impl.name for run in outcome.runs)]
    table = [[(case_id, None), *rows[case_id]] for case_id in sorted(rows)]
    console.table("conformance", columns, table)


def _print_problems(run: ImplRun, console: Console) -> None:
    if run.startup_error is not None:
        console.text((f"{run.impl.name}: runner failed to start:", None), style="bold red")
        console.text((_indent(run.startup_error), None))
    for entry in run.unmatched:
        console.text(
            (f"{run.impl.name}: expectation {entry.id!r} ({entry.status}) matches no case", None),
            style="bold red",
        )
    for result in run.results:
        if result.status in FAILING:
            _print_result(run.impl.name, result, console)


def _print_result(impl: str, result: CaseResult, console: Console) -> None:
    heading: list[tuple[str, str | None]] = [
        (f"{impl} {result.id}: ", None),
        (str(result.status), STYLES[result.status]),
    ]
    reason = (result.reason or "").rstrip().splitlines()
    if reason:
        # A multi-line reason (a runner's traceback) is headed by its last line.
        heading.append((f" ({reason[-1].strip()})", None))
    console.text(*heading)
    for diff in result.diff:
        console.text((_diff_text(diff), None))
    if len(reason) > 1:
        console.text((_indent(_tail(reason)), None), style="dim")
    if result.detail:
        lines = result.detail.rstrip().splitlines()
        console.text((_indent("stderr:\n" + _tail(lines)), None), style="dim")


def _mismatch_text(mismatch: Mismatch) -> str:
    """Where two implementations' pinned observations differ and what each observed there."""
    text = (
        f"not identical: {mismatch.case_id}: {mismatch.left} and {mismatch.right} "
        f"differ at {mismatch.path}: {mismatch.left} {_show(mismatch.left_value)}, "
        f"{mismatch.right} {_show(mismatch.right_value)}"
    )
    return _printable(text)


def _diff_text(diff: Diff) -> str:
    text = f"    {diff.path or '/'}: expected {_show(diff.expected)}, actual {_show(diff.actual)}"
    return _printable(text)


def _printable(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\udXXX``: a path or a value of a
    case may hold one (I16, I27), and no terminal or file encodes it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _show(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _VALUE_LIMIT else text[: _VALUE_LIMIT - 3] + "..."


def _about(implementation: dict[str, Any]) -> str:
    return ", ".join(
        f"{key} {value if isinstance(value, str) else _show(value)}"
        for key, value in sorted(implementation.items())
    )


def _tail(lines: list[str]) -> str:
    return "\n".join(lines[-_STDERR_LINES:])


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())
