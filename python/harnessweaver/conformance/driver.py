"""Run every selected implementation over every case and judge the observations.

The driver is the only comparator (INTERPRETING.md §6.4): testees report observations, the
driver checks every message against the corpus's protocol schema (§9), strips timings,
compares with ``then``, applies the strict known-failure lists (§7) and, on request, checks
that the implementations observed byte-identical things wherever the corpus pins them (every
field but an error's free-text ``message``, :func:`~harnessweaver.conformance.canonical.pinned`).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harnessweaver.conformance.canonical import canonical_json, normalize, pinned, strip_timings
from harnessweaver.conformance.cases import CORPUS_ENV, Case, CorpusNotFound, find_corpus
from harnessweaver.conformance.expectations import (
    FAILING,
    CaseResult,
    Entry,
    Expectations,
    Status,
    apply_expectation,
    load_expectations,
)
from harnessweaver.conformance.matchers import ABSENT, compare_observation, compare_value
from harnessweaver.conformance.protocol import (
    PROTOCOL,
    Answer,
    Crashed,
    Errored,
    Hello,
    Observed,
    ProtocolSchema,
    Skipped,
    Testee,
    TesteeError,
    TimedOut,
    schema_checks_available,
)

__all__ = [
    "IMPL_NAME_HELP",
    "NOT_DECLARED",
    "REPOSITORY",
    "RUST_TESTEE",
    "RUST_TESTEE_ENV",
    "RUST_TESTEE_NAME",
    "SOURCE_TREE",
    "TS_PACKAGE_RUNNER",
    "TS_RUNNER",
    "TS_RUNNER_ENV",
    "ImplRun",
    "Implementation",
    "ImplementationError",
    "Mismatch",
    "RunConfig",
    "RunOutcome",
    "builtin_implementations",
    "check_identical",
    "default_implementations",
    "judge",
    "protocol_schema",
    "resolve_implementations",
    "run_conformance",
    "run_implementation",
    "rust_testee",
    "ts_runner",
    "unavailable",
]

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
SOURCE_TREE = Path(__file__).resolve().parents[3]
"""The repository root when the package runs from a clone (``python/harnessweaver``); for an
installed package, some directory above ``site-packages`` holding none of the files below."""
TS_RUNNER = SOURCE_TREE / "ts-runner" / "dist" / "runner.js"
"""The TypeScript testee of a clone, built (``cd ts-runner && npm ci && npm run build``)."""
TS_RUNNER_ENV = "HARNESSWEAVER_TS_RUNNER"
TS_PACKAGE_RUNNER = Path("node_modules") / "harnessweaver" / "dist" / "runner.js"
"""The testee the npm package ships, as an npm project that installed it holds it."""
RUST_TESTEE_ENV = "HARNESSWEAVER_RUST_TESTEE"
RUST_TESTEE_NAME = "harnessweaver-testee.exe" if os.name == "nt" else "harnessweaver-testee"
RUST_TESTEE = Path(
    os.environ.get(RUST_TESTEE_ENV) or SOURCE_TREE / "target" / "release" / RUST_TESTEE_NAME
)
"""The testee over the Rust core alone (``cargo build --release -p harnessweaver-testee``), or
the binary ``HARNESSWEAVER_RUST_TESTEE`` names: ``nox`` runs a debug build, whose dependencies
``cargo test`` has already compiled (a release build links the Cedar engine under fat LTO, some
five minutes of CI for a testee whose speed nothing measures)."""


def ts_runner() -> Path:
    """The ``ts`` testee: the file ``HARNESSWEAVER_TS_RUNNER`` names; else a clone's build
    (:data:`TS_RUNNER`); else the npm package installed in the npm project of the working
    directory (``node_modules/harnessweaver/dist/runner.js`` there or in a folder above it,
    where node would find it); else :data:`TS_RUNNER`, not built."""
    given = os.environ.get(TS_RUNNER_ENV)
    if given:
        return Path(given)
    if TS_RUNNER.is_file():
        return TS_RUNNER
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / TS_PACKAGE_RUNNER).is_file():
            return folder / TS_PACKAGE_RUNNER
    return TS_RUNNER


def rust_testee() -> Path:
    """The ``rust`` testee: :data:`RUST_TESTEE` (``HARNESSWEAVER_RUST_TESTEE``, else a clone's
    release build) when it is there or named; else ``harnessweaver-testee`` on ``PATH``, where
    ``cargo install`` puts it; else :data:`RUST_TESTEE`, not built."""
    if RUST_TESTEE.is_file() or os.environ.get(RUST_TESTEE_ENV):
        return RUST_TESTEE
    found = shutil.which(RUST_TESTEE_NAME)
    return Path(found) if found else RUST_TESTEE


IMPL_NAME_HELP = "letters, digits, '.', '_' and '-', starting with a letter or digit"


_LABELS = {
    Status.FAIL: "failed",
    Status.XPASS: "xpass",
    Status.ERROR: "errors",
    Status.CRASH: "crashed",
    Status.TIMEOUT: "timed out",
}
assert set(_LABELS) == FAILING


class ImplementationError(ValueError):
    """An ``--impl`` that names no implementation or cannot be used."""


@dataclass(frozen=True, slots=True)
class Implementation:
    """A named testee command. ``pythonpath`` is put first on the child's ``PYTHONPATH`` so
    the built-in Python testees import the same ``harnessweaver`` as the driver."""

    name: str
    command: tuple[str, ...]
    pythonpath: Path | None = None
    core: str | None = None  # the core a built-in Python testee must report in its hello

    def environment(self, corpus: Path | None = None) -> dict[str, str] | None:
        """The child's environment: inherited, plus ``PYTHONPATH`` (built-in Python testees)
        and ``HARNESSWEAVER_CORPUS`` naming the corpus being run, when there is one."""
        if self.pythonpath is None and corpus is None:
            return None
        env = dict(os.environ)
        if self.pythonpath is not None:
            parts = [str(self.pythonpath), *filter(None, [env.get("PYTHONPATH")])]
            env["PYTHONPATH"] = os.pathsep.join(parts)
        if corpus is not None:
            env[CORPUS_ENV] = str(corpus.resolve())
        return env


def _python_testee(name: str, core: str) -> Implementation:
    module = "harnessweaver.conformance.testee"
    command = (sys.executable, "-m", module, "--core", core)
    return Implementation(name, command, _PACKAGE_PARENT, core)


def builtin_implementations() -> dict[str, Implementation]:
    """The implementations of this repository, by name (``ts`` and ``rust`` even when not
    built)."""
    return {
        "python-rust": _python_testee("python-rust", "rust"),
        "python-pure": _python_testee("python-pure", "python"),
        "ts": Implementation("ts", ("node", str(ts_runner()))),
        "rust": Implementation("rust", (str(rust_testee()),), core="rust"),
    }


REPOSITORY = "https://github.com/harnessweaver/harnessweaver"

# How to get each implementation that is not in the package: (the file that marks a clone,
# how to build it there, how to get it next to an installed package, the variable naming it).
_GET = {
    "ts": (
        "ts-runner/package.json",
        "cd ts-runner && npm ci && npm run build",
        "npm install harnessweaver in an npm project and run from its folder (the runner is "
        f"{TS_PACKAGE_RUNNER.as_posix()})",
        TS_RUNNER_ENV,
    ),
    "rust": (
        "crates/harnessweaver-testee/Cargo.toml",
        "cargo build --release -p harnessweaver-testee",
        f"cargo install --locked --git {REPOSITORY} harnessweaver-testee (it puts "
        "harnessweaver-testee on PATH)",
        RUST_TESTEE_ENV,
    ),
}


def unavailable(name: str) -> str | None:
    """Why the built-in implementation ``name`` cannot run here and how to get it, or ``None``
    when it can. ``ts`` comes from a clone's build or an installed npm package, ``rust`` from a
    clone's build or ``cargo install``; the Python testees need only this package
    (``python-rust`` its compiled core)."""
    if name == "python-rust":
        if importlib.util.find_spec("harnessweaver._core") is None:
            return "the compiled core is not installed (no wheel for this platform)"
        return None
    built = _built(name)
    if built is None or built.is_file():
        return None
    marker, build, install, variable = _GET[name]
    if os.environ.get(variable):
        return f"{built} does not exist (named by {variable})"
    if (SOURCE_TREE / marker).is_file():
        return f"not built in this clone: {build}"
    return f"not in the installed package: {install}, or set {variable} to one (a clone's: {build})"


def _built(name: str) -> Path | None:
    """What must exist before ``name`` can run: a build's output, or ``None`` (nothing)."""
    if name == "ts":
        return ts_runner()
    return rust_testee() if name == "rust" else None


def default_implementations() -> list[Implementation]:
    """``python-rust`` and ``python-pure``, plus ``ts`` and ``rust`` when they have been built."""
    builtins = builtin_implementations()
    return [
        impl
        for name, impl in builtins.items()
        if (built := _built(name)) is None or built.is_file()
    ]


def _valid_name(name: str) -> bool:
    return bool(name) and name[0].isalnum() and all(c.isalnum() or c in "._-" for c in name)


def resolve_implementations(specs: Sequence[str]) -> list[Implementation]:
    """Turn ``--impl`` values (built-in ``NAME`` or ``NAME=COMMAND``) into implementations."""
    if not specs:
        return default_implementations()
    builtins = builtin_implementations()
    chosen: dict[str, Implementation] = {}
    for spec in specs:
        name, has_command, command = spec.partition("=")
        name = name.strip()
        if not _valid_name(name):
            raise ImplementationError(f"--impl {spec!r}: the name must use {IMPL_NAME_HELP}")
        if name in chosen:
            raise ImplementationError(f"--impl {name!r} is given twice")
        if has_command:
            argv = tuple(shlex.split(command))
            if not argv:
                raise ImplementationError(f"--impl {spec!r}: empty command")
            chosen[name] = Implementation(name, argv)
        elif name not in builtins:
            known = ", ".join(builtins)
            raise ImplementationError(f"--impl {name!r}: unknown (known: {known}; or NAME=CMD)")
        elif (why := unavailable(name)) is not None:
            raise ImplementationError(f"--impl {name}: {why}")
        else:
            chosen[name] = builtins[name]
    return list(chosen.values())


@dataclass(frozen=True, slots=True)
class RunConfig:
    cases: tuple[Case, ...]
    implementations: tuple[Implementation, ...]
    expectations_dir: Path | None = None
    corpus_version: str | None = None
    corpus: Path | None = None
    timeout: float = 60.0
    startup_timeout: float | None = None
    require_identical: bool = False
    # Feature tags every implementation must declare: a case one of them skips for lack of one
    # is a problem, not a quiet skip (``--require-feature cedar``: all four engines decide).
    required_features: tuple[str, ...] = ()
    schema: ProtocolSchema | None = None  # None: the corpus's, read once per run


def protocol_schema(config: RunConfig) -> ProtocolSchema | None:
    """The schema the testees' messages are checked against: ``config.schema``, else the one
    of the corpus being run, else of the corpus ``find_corpus`` finds (a loose ``--cases``).
    ``None`` for a loose ``--cases`` directory run where no corpus is found (an installed
    package without a checkout), or where jsonschema is not installed (a plain ``pip install``):
    messages are then held to the protocol's framing alone, and the command line says so
    (``cli.py``)."""
    if config.schema is not None:
        return config.schema
    if not schema_checks_available():
        return None
    try:
        corpus = config.corpus if config.corpus is not None else find_corpus()
    except CorpusNotFound:
        return None
    return ProtocolSchema.load(corpus)


@dataclass(frozen=True, slots=True)
class ImplRun:
    """One implementation's results, in case-id order."""

    impl: Implementation
    implementation: dict[str, Any] | None
    results: tuple[CaseResult, ...]
    unmatched: tuple[Entry, ...] = ()
    startup_error: str | None = None

    def counts(self) -> Counter[Status]:
        return Counter(result.status for result in self.results)

    def header(self, corpus_version: str | None) -> dict[str, Any]:
        run = {
            "impl": self.impl.name,
            "implementation": self.implementation,
            "protocol": PROTOCOL,
            "corpus_version": corpus_version,
        }
        return {"run": run}

    def problems(self) -> list[str]:
        """Why this implementation fails the run (empty when it does not)."""
        counts = self.counts()
        found = [f"{counts[status]} {_LABELS[status]}" for status in _LABELS if counts[status]]
        if self.startup_error is not None:
            found.insert(0, "runner failed to start")
        problems = [", ".join(found)] if found else []
        problems.extend(f"expectation {entry.id!r} matches no case" for entry in self.unmatched)
        return [f"{self.impl.name}: {text}" for text in problems]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A case that passed everywhere but was observed differently by two implementations:
    the first pinned value (JSON pointer ``path``) that differs, as each of them observed it
    (:data:`~harnessweaver.conformance.matchers.ABSENT` where one has no value there)."""

    case_id: str
    left: str
    right: str
    path: str
    left_value: Any = ABSENT
    right_value: Any = ABSENT


@dataclass(frozen=True, slots=True)
class RunOutcome:
    runs: tuple[ImplRun, ...]
    mismatches: tuple[Mismatch, ...] = ()
    corpus_version: str | None = None
    required_features: tuple[str, ...] = ()

    def problems(self) -> list[str]:
        found = [problem for run in self.runs for problem in run.problems()]
        found += unmet_features(self.runs, self.required_features)
        if self.mismatches:
            cases = len({mismatch.case_id for mismatch in self.mismatches})
            found.append(f"{cases} case(s) not identical across implementations")
        return found

    @property
    def passed(self) -> bool:
        return not self.problems()


NOT_DECLARED = "feature(s) not declared by the runner: "
"""How a skip for a feature tag the runner does not declare begins (its tags follow)."""


def unmet_features(runs: Sequence[ImplRun], required: Sequence[str]) -> list[str]:
    """One problem per implementation and required tag it skipped cases for."""
    found = []
    for run in runs:
        for tag in required:
            skipped = sum(
                1
                for result in run.results
                if result.status is Status.SKIP
                and (result.reason or "").startswith(NOT_DECLARED)
                and tag in (result.reason or "")[len(NOT_DECLARED) :].split(", ")
            )
            if skipped:
                found.append(
                    f"{run.impl.name} does not declare the required feature {tag!r}: "
                    f"{skipped} case(s) skipped"
                )
    return found


def judge(case: Case, answer: Answer) -> CaseResult:
    """The raw verdict on one answer, before the known-failure list is applied."""
    if isinstance(answer, Observed):
        actual = normalize(strip_timings(answer.actual))
        diffs = tuple(compare_observation(case.then, actual))
        return CaseResult(case.id, Status.FAIL if diffs else Status.PASS, actual, diffs)
    if isinstance(answer, Skipped):
        return CaseResult(case.id, Status.SKIP, reason=answer.reason)
    if isinstance(answer, Errored):
        return CaseResult(case.id, Status.ERROR, reason=answer.message)
    status = Status.CRASH if isinstance(answer, Crashed) else Status.TIMEOUT
    assert isinstance(answer, Crashed | TimedOut)
    return CaseResult(case.id, status, reason=answer.reason, detail=answer.stderr or None)


def _run_case(testee: Testee, hello: Hello, case: Case, entry: Entry | None) -> CaseResult:
    if entry is not None and entry.status is Status.SKIP:
        return CaseResult(case.id, Status.SKIP, reason=entry.reason)
    missing = sorted(set(case.features) - hello.features)
    if missing:
        reason = f"{NOT_DECLARED}{', '.join(missing)}"
        return CaseResult(case.id, Status.SKIP, reason=reason)
    return apply_expectation(judge(case, testee.run(case.data)), entry)


Progress = Callable[[Implementation, CaseResult], None]


def run_implementation(
    impl: Implementation,
    cases: Sequence[Case],
    expectations: Expectations,
    config: RunConfig,
    progress: Progress | None = None,
) -> ImplRun:
    """Run one implementation over ``cases`` (sorted by id) with its known-failure list."""
    unmatched = tuple(expectations.unmatched(case.id for case in cases))
    results: list[CaseResult] = []
    testee = Testee(
        impl.command,
        timeout=config.timeout,
        startup_timeout=config.startup_timeout,
        env=impl.environment(config.corpus),
        schema=protocol_schema(config),
    )
    with testee:
        try:
            hello = testee.start()
        except TesteeError as exc:
            return _not_started(impl, cases, expectations, unmatched, str(exc))
        reported = (hello.implementation or {}).get("core")
        if impl.core is not None and reported != impl.core:
            wrong = f"runner reports core {reported!r}, expected {impl.core!r}"
            return _not_started(impl, cases, expectations, unmatched, wrong)
        for case in cases:
            result = _run_case(testee, hello, case, expectations.lookup(case.id))
            results.append(result)
            if progress is not None:
                progress(impl, result)
    return ImplRun(impl, hello.implementation, tuple(results), unmatched)


def _not_started(
    impl: Implementation,
    cases: Sequence[Case],
    expectations: Expectations,
    unmatched: tuple[Entry, ...],
    error: str,
) -> ImplRun:
    reason = error.splitlines()[0] if error else "runner failed to start"
    crashed = (CaseResult(case.id, Status.CRASH, reason=reason) for case in cases)
    results = tuple(apply_expectation(r, expectations.lookup(r.id)) for r in crashed)
    return ImplRun(impl, None, results, unmatched, startup_error=error)


def check_identical(runs: Sequence[ImplRun]) -> list[Mismatch]:
    """Cases that passed in every run must have byte-identical canonical observations once
    the free text the corpus does not pin (an error's ``message``, §6.4) is left out."""
    if len(runs) < 2:
        return []
    tables = [{result.id: result for result in run.results} for run in runs]
    mismatches: list[Mismatch] = []
    for case_id in sorted(tables[0]):
        results = [table.get(case_id) for table in tables]
        passed = [r for r in results if r is not None and r.status is Status.PASS]
        if len(passed) != len(runs):
            continue
        first = pinned(passed[0].actual)
        reference = canonical_json(first)
        for run, result in zip(runs[1:], passed[1:], strict=True):
            other = pinned(result.actual)
            if canonical_json(other) == reference:
                continue
            diffs = compare_value(first, other, matchers=False)
            diff = diffs[0] if diffs else None  # none: equal as JSON, not as canonical bytes
            path = (diff.path if diff else "") or "/"
            left, right = (diff.expected, diff.actual) if diff else (ABSENT, ABSENT)
            mismatches.append(
                Mismatch(case_id, runs[0].impl.name, run.impl.name, path, left, right)
            )
    return mismatches


def run_conformance(config: RunConfig, progress: Progress | None = None) -> RunOutcome:
    """Run every implementation of ``config``; known-failure lists are loaded (and checked)
    for all implementations, and the protocol schema compiled, before anything runs."""
    lists: Mapping[str, Expectations] = {
        impl.name: load_expectations(config.expectations_dir, impl.name)
        for impl in config.implementations
    }
    config = replace(config, schema=protocol_schema(config))
    cases = sorted(config.cases, key=lambda case: case.id)
    runs = tuple(
        run_implementation(impl, cases, lists[impl.name], config, progress)
        for impl in config.implementations
    )
    mismatches = tuple(check_identical(runs)) if config.require_identical else ()
    return RunOutcome(runs, mismatches, config.corpus_version, config.required_features)
