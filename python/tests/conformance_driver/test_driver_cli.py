"""`harnessweaver conformance` end to end, with scripted fake testees."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from checkout import COMPILED, CORPUS, FROM_CHECKOUT, PACKAGE
from driver_support import (
    OBSERVATION,
    copy_schemas,
    fake_command,
    fake_impl,
    make_case,
    nothing_found,
    read_results,
    write_cases,
    write_expectations,
)

from harnessweaver.cli import main
from harnessweaver.conformance import driver
from harnessweaver.conformance.canonical import canonical_json
from harnessweaver.conformance.cases import CORPUS_ENV

PYTHON_ROOT = PACKAGE.parent  # python/ in a checkout, site-packages when installed

PASSING_THEN: dict[str, Any] = {
    "chains": {"tool.before": ["guard"]},
    "emits": [
        {"ran": ["guard"], "outcome": {"kind": "block", "reason": "refund over cap", "code": "cap"}}
    ],
}


class Run:
    def __init__(self, code: int, out: str, err: str, results: Path) -> None:
        self.code, self.out, self.err, self.results = code, out, err, results

    def lines(self, impl: str = "fake") -> list[dict[str, Any]]:
        return read_results(self.results / f"{impl}.jsonl")

    def statuses(self, impl: str = "fake") -> dict[str, str]:
        return {line["id"]: line["status"] for line in self.lines(impl)[1:]}

    def line(self, case_id: str, impl: str = "fake") -> dict[str, Any]:
        return next(line for line in self.lines(impl)[1:] if line["id"] == case_id)


@pytest.fixture
def conformance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(*args: str, impls: tuple[str, ...] | None = None) -> Run:
        out = tmp_path / "out"
        impl_args = [a for impl in (impls or (fake_impl("fake"),)) for a in ("--impl", impl)]
        code = main(["conformance", "--out", str(out), "--timeout", "5", *impl_args, *args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err, out)

    return run


def test_pass_and_fail_with_diff(tmp_path: Path, conformance: Any) -> None:
    failing_then = copy.deepcopy(PASSING_THEN)
    failing_then["emits"][0]["outcome"]["code"] = "limit"
    write_cases(
        tmp_path / "cases",
        [
            make_case("b.fails", failing_then, {"actual": OBSERVATION}),
            make_case("a.passes", PASSING_THEN, {"actual": OBSERVATION}),
        ],
    )
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 1
    assert run.statuses() == {"a.passes": "pass", "b.fails": "fail"}
    assert run.line("b.fails")["diff"] == [
        {"path": "/emits/0/outcome/code", "expected": "limit", "actual": "cap"}
    ]
    assert "diff" not in run.line("a.passes")
    assert '/emits/0/outcome/code: expected "limit", actual "cap"' in run.out
    assert "fake: 1 passed, 1 failed, 0 skipped, 0 xfail, 0 xpass, 0 errors" in run.out
    assert run.out.rstrip().splitlines()[-2] == "CONFORMANCE FAILED: fake: 1 failed"


def test_results_file_is_canonical_sorted_and_without_timings(
    tmp_path: Path, conformance: Any
) -> None:
    write_cases(
        tmp_path / "cases",
        [make_case(f"case.{name}", PASSING_THEN, {"actual": OBSERVATION}) for name in "dcab"],
    )
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 0
    text = (run.results / "fake.jsonl").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert text.endswith("\n")
    assert all(canonical_json(json.loads(line)) == line for line in lines)
    header = json.loads(lines[0])
    assert header == {
        "run": {
            "impl": "fake",
            "implementation": {
                "name": "fake",
                "language": "python",
                "version": "0.0.1",
                "core": "fake",
            },
            "protocol": 1,
            "corpus_version": None,
        }
    }
    ids = [json.loads(line)["id"] for line in lines[1:]]
    assert ids == ["case.a", "case.b", "case.c", "case.d"]
    assert "t_ns" not in text and "duration_ns" not in text
    first = json.loads(lines[1])
    assert first["actual"]["traces"]["main"][0] == {
        "emit": 1,
        "hook": "tool.before",
        "kind": "outcome",
        "middleware": "guard",
        "band": "app",
        "outcome": "block",
        "modified": False,
        "code": "cap",
    }
    # 150.0 in the observation is written as 150: byte-stable across languages.
    assert '"amount":150}' in lines[1]
    again = conformance("--cases", str(tmp_path / "cases"))
    assert (again.results / "fake.jsonl").read_text(encoding="utf-8") == text


def test_matcher_semantics_end_to_end(tmp_path: Path, conformance: Any) -> None:
    observation = copy.deepcopy(OBSERVATION)
    observation["error"] = {
        "kind": "invalid_band",
        "rule": "rule-1",
        "message": "band 'core' is not a band (rule-1)",
    }
    matching: dict[str, Any] = {
        "error": {"rule": "rule-1", "kind": "invalid_band", "message": {"$contains": "'core'"}},
        "emits": [
            {
                "ran": ["guard"],
                "outcome": {"kind": "block", "code": {"$regex": "^c.p$"}, "reason": {"$any": True}},
                "event": {"call": {"arguments": {"amount": 150}, "name": "refund", "id": "c1"}},
            }
        ],
        "excludes": ["Traceback", "password"],
    }
    leaking = {**matching, "excludes": ["refund over"]}
    boolean = copy.deepcopy(matching)
    boolean["emits"][0]["event"]["call"]["arguments"]["amount"] = True
    write_cases(
        tmp_path / "cases",
        [
            make_case("m.matches", matching, {"actual": observation}),
            make_case("m.leaks", leaking, {"actual": observation}),
            make_case("m.bool", boolean, {"actual": observation}),
        ],
    )
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.statuses() == {"m.bool": "fail", "m.leaks": "fail", "m.matches": "pass"}
    assert run.line("m.leaks")["diff"] == [
        {
            "path": "/emits/0/outcome/reason",
            "expected": {"$excludes": "refund over"},
            "actual": "refund over cap",
        }
    ]
    assert [d["path"] for d in run.line("m.bool")["diff"]] == [
        "/emits/0/event/call/arguments/amount"
    ]


def test_skip_by_feature_does_not_run_the_case(tmp_path: Path, conformance: Any) -> None:
    write_cases(
        tmp_path / "cases",
        [
            make_case("f.concurrent", fake={"crash": 9}, features=["concurrency", "timeouts"]),
            make_case("f.plain"),
        ],
    )
    impl = fake_impl("fake", "--features", "timeouts")
    run = conformance("--cases", str(tmp_path / "cases"), impls=(impl,))
    assert run.code == 0
    assert run.statuses() == {"f.concurrent": "skip", "f.plain": "pass"}
    assert run.line("f.concurrent")["reason"] == (
        "feature(s) not declared by the runner: concurrency"
    )
    assert run.line("f.concurrent")["actual"] is None


def test_a_required_feature_an_implementation_lacks_fails_the_run(
    tmp_path: Path, conformance: Any
) -> None:
    write_cases(
        tmp_path / "cases",
        [
            make_case("f.cedar", features=["cedar"]),
            make_case("f.both", features=["cedar", "concurrency"]),
            make_case("f.plain"),
        ],
    )
    lacking = fake_impl("fake", "--features", "concurrency")
    run = conformance(
        "--cases", str(tmp_path / "cases"), "--require-feature", "cedar", impls=(lacking,)
    )
    assert run.code == 1
    assert run.statuses() == {"f.cedar": "skip", "f.both": "skip", "f.plain": "pass"}
    assert "fake does not declare the required feature 'cedar': 2 case(s) skipped" in run.out
    # Declared, the same cases run and the run passes; a tag no case skips for is no problem.
    declaring = fake_impl("fake", "--features", "cedar,concurrency")
    args = ("--require-feature", "cedar", "--require-feature", "timeouts")
    run = conformance("--cases", str(tmp_path / "cases"), *args, impls=(declaring,))
    assert run.code == 0, run.out + run.err
    assert set(run.statuses().values()) == {"pass"}


def test_runner_skip_is_a_skip(tmp_path: Path, conformance: Any) -> None:
    write_cases(tmp_path / "cases", [make_case("s.one", fake={"skipped": "trio only"})])
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 0
    assert run.line("s.one")["status"] == "skip"
    assert run.line("s.one")["reason"] == "trio only"


def failing_corpus(tmp_path: Path) -> Path:
    then = {"emits": [{"ran": ["other"], "outcome": {"$any": True}}]}
    write_cases(
        tmp_path / "cases",
        [
            make_case("x.broken", then, {"actual": OBSERVATION}),
            make_case("x.fine", PASSING_THEN, {"actual": OBSERVATION}),
            make_case("y.never", fake={"crash": 5}),
        ],
    )
    return tmp_path / "cases"


def test_xfail_and_listed_skip(tmp_path: Path, conformance: Any) -> None:
    cases = failing_corpus(tmp_path)
    expectations = tmp_path / "expectations"
    write_expectations(
        expectations,
        "fake",
        [
            {"id": "x.broken", "status": "xfail", "reason": "ran order bug", "issue": "#12"},
            {"id": "y.*", "status": "skip", "reason": "crashes the runner"},
        ],
    )
    run = conformance("--cases", str(cases), "--expectations", str(expectations))
    assert run.code == 0, run.out
    assert run.statuses() == {"x.broken": "xfail", "x.fine": "pass", "y.never": "skip"}
    assert run.line("x.broken")["reason"] == "ran order bug"
    assert run.line("x.broken")["diff"][0]["path"] == "/emits/0/ran/0"
    assert run.line("y.never")["reason"] == "crashes the runner"
    assert "fake: 1 passed, 0 failed, 1 skipped, 1 xfail, 0 xpass" in run.out
    assert "CONFORMANCE PASSED" in run.out


def test_xpass_fails_the_run(tmp_path: Path, conformance: Any) -> None:
    cases = failing_corpus(tmp_path)
    expectations = tmp_path / "expectations"
    write_expectations(
        expectations,
        "fake",
        [
            {"id": "x.broken", "status": "xfail", "reason": "bug"},
            {"id": "x.fine", "status": "xfail", "reason": "was broken"},
            {"id": "y.never", "status": "skip", "reason": "crashes"},
        ],
    )
    run = conformance("--cases", str(cases), "--expectations", str(expectations))
    assert run.code == 1
    assert run.statuses()["x.fine"] == "xpass"
    assert "CONFORMANCE FAILED: fake: 1 xpass" in run.out


def test_unmatched_expectation_fails_the_run(tmp_path: Path, conformance: Any) -> None:
    cases = failing_corpus(tmp_path)
    expectations = tmp_path / "expectations"
    write_expectations(
        expectations,
        "fake",
        [
            {"id": "x.broken", "status": "xfail", "reason": "bug"},
            {"id": "y.never", "status": "skip", "reason": "crashes"},
            {"id": "gone.*", "status": "xfail", "reason": "deleted cases"},
        ],
    )
    run = conformance("--cases", str(cases), "--expectations", str(expectations))
    assert run.code == 1
    assert "fake: expectation 'gone.*' (xfail) matches no case" in run.out
    assert "CONFORMANCE FAILED: fake: expectation 'gone.*' matches no case" in run.out


def test_missing_reason_is_a_load_error(tmp_path: Path, conformance: Any) -> None:
    cases = failing_corpus(tmp_path)
    expectations = tmp_path / "expectations"
    write_expectations(expectations, "fake", [{"id": "x.broken", "status": "xfail"}])
    run = conformance("--cases", str(cases), "--expectations", str(expectations))
    assert run.code == 2
    assert "reason is required" in run.err and "fake.json" in run.err
    assert not (run.results / "fake.jsonl").exists()


@pytest.mark.parametrize("depth", [129, 100_000])
def test_an_expectations_file_nested_too_deeply_is_a_load_error(
    tmp_path: Path, conformance: Any, depth: int
) -> None:
    """Not the parser's RecursionError (100,000) nor a walk's (129: parsed, then refused
    before anything recursive reads it)."""
    cases = failing_corpus(tmp_path)
    expectations = tmp_path / "expectations"
    expectations.mkdir()
    (expectations / "fake.json").write_text(
        '{"implementation": "fake", "entries": ' + "[" * depth + "]" * depth + "}",
        encoding="utf-8",
    )
    run = conformance("--cases", str(cases), "--expectations", str(expectations))
    assert run.code == 2
    assert "fake.json: cannot read JSON: arrays and objects nest more than 128 deep" in run.err
    assert "Traceback" not in run.err


def test_crash_mid_case_restarts_and_later_cases_run(tmp_path: Path, conformance: Any) -> None:
    log = tmp_path / "hello.log"
    write_cases(
        tmp_path / "cases",
        [
            make_case("c.1-before"),
            make_case("c.2-crash", fake={"crash": 11}),
            make_case("c.3-after", PASSING_THEN, {"actual": OBSERVATION}),
        ],
    )
    impl = fake_impl("fake", "--log", str(log))
    run = conformance("--cases", str(tmp_path / "cases"), impls=(impl,))
    assert run.code == 1
    assert run.statuses() == {"c.1-before": "pass", "c.2-crash": "crash", "c.3-after": "pass"}
    assert "code 11" in run.line("c.2-crash")["reason"]
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2
    assert "fatal: crashing on c.2-crash" in run.out  # stderr tail on the console...
    assert "fatal" not in (run.results / "fake.jsonl").read_text(encoding="utf-8")  # not in file
    assert "CONFORMANCE FAILED: fake: 1 crashed" in run.out


def test_hang_is_a_timeout(tmp_path: Path, conformance: Any) -> None:
    write_cases(
        tmp_path / "cases",
        [
            make_case("h.hangs", fake={"hang": 60}),
            make_case("h.next"),
        ],
    )
    run = conformance("--cases", str(tmp_path / "cases"), "--timeout", "0.5")
    assert run.code == 1
    assert run.statuses() == {"h.hangs": "timeout", "h.next": "pass"}
    assert run.line("h.hangs")["reason"] == "no answer within 0.5 s"
    assert "fake: 1 timed out" in run.out


def test_errored_answer_is_an_error(tmp_path: Path, conformance: Any) -> None:
    write_cases(tmp_path / "cases", [make_case("e.one", fake={"errored": "unknown behaviour"})])
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 1
    assert run.line("e.one") == {
        "id": "e.one",
        "status": "error",
        "actual": None,
        "reason": "unknown behaviour",
    }
    assert "CONFORMANCE FAILED: fake: 1 errors" in run.out


def test_runner_that_cannot_start(tmp_path: Path, conformance: Any) -> None:
    write_cases(tmp_path / "cases", [make_case("a"), make_case("b")])
    impl = fake_impl("fake", "--hello", "exit")
    run = conformance("--cases", str(tmp_path / "cases"), impls=(impl,))
    assert run.code == 1
    assert run.statuses() == {"a": "crash", "b": "crash"}
    assert run.lines()[0]["run"]["implementation"] is None
    assert "cannot start: missing core" in run.out
    assert "fake: runner failed to start" in run.out


def test_an_answer_that_breaks_the_protocol_schema_is_a_crash(
    tmp_path: Path, conformance: Any
) -> None:
    odd = copy.deepcopy(OBSERVATION)
    odd["traces"]["main"][0]["verdict"] = "blocked"
    write_cases(
        tmp_path / "cases",
        [
            make_case("s.odd", PASSING_THEN, {"actual": odd}),
            make_case("s.plain", PASSING_THEN, {"actual": OBSERVATION}),
        ],
    )
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 1
    assert run.statuses() == {"s.odd": "crash", "s.plain": "pass"}
    assert run.line("s.odd")["reason"] == (
        "protocol violation: answer breaks the protocol schema at $.actual.traces.main[0]: "
        "Additional properties are not allowed ('verdict' was unexpected)"
    )
    assert "CONFORMANCE FAILED: fake: 1 crashed" in run.out


def test_a_hello_that_breaks_the_protocol_schema_does_not_start(
    tmp_path: Path, conformance: Any
) -> None:
    write_cases(tmp_path / "cases", [make_case("a")])
    run = conformance(
        "--cases", str(tmp_path / "cases"), impls=(fake_impl("fake", "--hello", "nocore"),)
    )
    assert run.code == 1
    assert run.statuses() == {"a": "crash"}
    assert run.line("a")["reason"] == (
        "hello failed: hello answer breaks the protocol schema at $.implementation: "
        "'core' is a required property"
    )
    assert "fake: runner failed to start" in run.out


def identical_cases(tmp_path: Path) -> Path:
    changed = copy.deepcopy(OBSERVATION)
    changed["traces"]["main"][0]["band"] = "task"
    then = {"emits": [{"ran": ["guard"], "outcome": {"$any": True}}]}
    write_cases(
        tmp_path / "cases",
        [
            make_case(
                "i.differs", then, {"actual": OBSERVATION, "variants": {"b": {"actual": changed}}}
            ),
            make_case("i.same", then, {"actual": OBSERVATION}),
            make_case(
                "i.fails-in-b",
                then,
                {"actual": OBSERVATION, "variants": {"b": {"errored": "nope"}}},
            ),
        ],
    )
    return tmp_path / "cases"


def test_require_identical_catches_differences(tmp_path: Path, conformance: Any) -> None:
    cases = identical_cases(tmp_path)
    impls = (fake_impl("left"), fake_impl("right", "--variant", "b"))
    run = conformance("--cases", str(cases), "--require-identical", impls=impls)
    assert run.code == 1
    assert run.statuses("left") == {"i.differs": "pass", "i.fails-in-b": "pass", "i.same": "pass"}
    assert run.statuses("right")["i.differs"] == "pass"
    assert "not identical: i.differs: left and right differ at /traces/main/0/band" in run.out
    assert "not identical: i.same" not in run.out
    assert "1 case(s) not identical across implementations" in run.out
    left = (run.results / "left.jsonl").read_text(encoding="utf-8").splitlines()
    right = (run.results / "right.jsonl").read_text(encoding="utf-8").splitlines()
    same = [line for line in left[1:] if '"id":"i.same"' in line]
    assert same and same[0] in right


def test_a_difference_under_a_lone_surrogate_key_is_reported(
    tmp_path: Path, conformance: Any
) -> None:
    # An event may hold such a key (I16, I27); the report must print it, not crash.
    left, right = copy.deepcopy(OBSERVATION), copy.deepcopy(OBSERVATION)
    left["emits"][0]["event"] = {"\udc00": 1}
    right["emits"][0]["event"] = {"\udc00": 2}
    then = {"emits": [{"ran": ["guard"], "outcome": {"$any": True}}]}
    variants = {"b": {"actual": right}}
    write_cases(
        tmp_path / "cases", [make_case("i.key", then, {"actual": left, "variants": variants})]
    )
    impls = (fake_impl("left"), fake_impl("right", "--variant", "b"))
    run = conformance("--cases", str(tmp_path / "cases"), "--require-identical", impls=impls)
    assert run.code == 1
    assert "not identical: i.key: left and right differ at /emits/0/event/\\udc00" in run.out


def test_without_require_identical_differences_are_allowed(
    tmp_path: Path, conformance: Any
) -> None:
    cases = identical_cases(tmp_path)
    expectations = tmp_path / "exp"
    write_expectations(
        expectations, "right", [{"id": "i.fails-in-b", "status": "xfail", "reason": "errors"}]
    )
    impls = (fake_impl("left"), fake_impl("right", "--variant", "b"))
    run = conformance("--cases", str(cases), "--expectations", str(expectations), impls=impls)
    assert run.code == 0, run.out
    assert "not identical" not in run.out
    assert "left: 3 passed" in run.out and "right: 2 passed" in run.out


def make_corpus(root: Path) -> Path:
    corpus = root / "conformance"
    copy_schemas(corpus)
    (corpus / "VERSION").write_text("9.9.9\n", encoding="utf-8")
    (corpus / "catalogue.json").write_text('{"hooks": []}', encoding="utf-8")
    failing_corpus(corpus)
    write_expectations(
        corpus / "expectations",
        "fake",
        [
            {"id": "x.broken", "status": "xfail", "reason": "bug"},
            {"id": "y.never", "status": "skip", "reason": "crashes"},
        ],
    )
    return corpus


def test_default_corpus_is_found_from_cwd_with_its_expectations(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = make_corpus(tmp_path / "project")
    nested = tmp_path / "project" / "src" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    run = conformance()
    assert run.code == 0, run.out
    assert run.lines()[0]["run"]["corpus_version"] == "9.9.9"
    assert run.statuses() == {"x.broken": "xfail", "x.fine": "pass", "y.never": "skip"}
    # --cases on the same directory: the corpus's known-failure lists no longer apply.
    explicit = conformance("--cases", str(corpus / "cases"))
    assert explicit.code == 1
    assert explicit.statuses() == {"x.broken": "fail", "x.fine": "pass", "y.never": "crash"}
    assert explicit.lines()[0]["run"]["corpus_version"] == "9.9.9"


def test_corpus_from_environment_variable(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = make_corpus(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CORPUS_ENV, str(corpus))
    run = conformance()
    assert run.code == 0, run.out
    assert run.lines()[0]["run"]["corpus_version"] == "9.9.9"


def test_empty_corpus_is_an_error(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "conformance"
    (corpus / "cases").mkdir(parents=True)
    (corpus / "VERSION").write_text("1.0.0", encoding="utf-8")
    (corpus / "catalogue.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    run = conformance()
    assert run.code == 2
    assert "no case files" in run.err


@pytest.mark.parametrize(
    ("impl", "message"),
    [
        ("nonesuch", "--impl 'nonesuch': unknown"),
        ("bad name=python x.py", "the name must use"),
        ("empty=", "empty command"),
    ],
)
def test_bad_impl_arguments(tmp_path: Path, conformance: Any, impl: str, message: str) -> None:
    write_cases(tmp_path / "cases", [make_case("a")])
    run = conformance("--cases", str(tmp_path / "cases"), impls=(impl,))
    assert run.code == 2
    assert message in run.err


def test_impl_given_twice(tmp_path: Path, conformance: Any) -> None:
    write_cases(tmp_path / "cases", [make_case("a")])
    run = conformance("--cases", str(tmp_path / "cases"), impls=(fake_impl("x"), fake_impl("x")))
    assert run.code == 2
    assert "given twice" in run.err


def test_ts_is_only_selectable_when_built(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    nothing_found(tmp_path, monkeypatch)
    write_cases(tmp_path / "cases", [make_case("a")])
    run = conformance("--cases", str(tmp_path / "cases"), impls=("ts",))
    assert run.code == 2
    assert "--impl ts: not " in run.err
    assert [impl.name for impl in driver.default_implementations()] == [
        "python-rust",
        "python-pure",
    ]
    built = tmp_path / "runner.js"
    built.write_text("", encoding="utf-8")
    monkeypatch.setattr(driver, "TS_RUNNER", built)
    assert [impl.name for impl in driver.default_implementations()] == [
        "python-rust",
        "python-pure",
        "ts",
    ]


def test_ts_from_an_installed_npm_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An npm project that installed the package: its runner is found from the project's
    folder or any folder below it, as node resolves packages; the variable wins over it."""
    nothing_found(tmp_path, monkeypatch)
    project = tmp_path / "project"
    runner = project / "node_modules" / "harnessweaver" / "dist" / "runner.js"
    runner.parent.mkdir(parents=True)
    runner.write_text("", encoding="utf-8")
    (project / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(project / "src" / "deep")
    assert driver.ts_runner() == runner
    ts = driver.resolve_implementations(["ts"])[0]
    assert ts.command == ("node", str(runner))
    named = tmp_path / "elsewhere.js"
    monkeypatch.setenv(driver.TS_RUNNER_ENV, str(named))
    with pytest.raises(driver.ImplementationError, match="named by HARNESSWEAVER_TS_RUNNER"):
        driver.resolve_implementations(["ts"])
    named.write_text("", encoding="utf-8")
    assert driver.resolve_implementations(["ts"])[0].command == ("node", str(named))


def test_rust_from_cargo_install_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cargo install`` puts harnessweaver-testee in a folder on PATH: found there."""
    nothing_found(tmp_path, monkeypatch)
    bin_dir = tmp_path / "cargo" / "bin"
    bin_dir.mkdir(parents=True)
    testee = bin_dir / driver.RUST_TESTEE_NAME
    testee.write_text("#!/bin/sh\n", encoding="utf-8")
    testee.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert driver.rust_testee() == testee
    rust = driver.resolve_implementations(["rust"])[0]
    assert rust.command == (str(testee),)
    assert [impl.name for impl in driver.default_implementations()][-1] == "rust"


def test_how_to_get_them_from_an_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a clone, the notes say how to get each testee next to an installed package."""
    nothing_found(tmp_path, monkeypatch)
    monkeypatch.setattr(driver, "SOURCE_TREE", tmp_path / "site")
    ts = driver.unavailable("ts")
    rust = driver.unavailable("rust")
    assert ts is not None
    assert ts.startswith("not in the installed package: npm install harnessweaver")
    assert "HARNESSWEAVER_TS_RUNNER" in ts
    assert rust is not None and "cargo install --locked --git" in rust
    assert "HARNESSWEAVER_RUST_TESTEE" in rust


def test_rust_is_only_selectable_when_built(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    nothing_found(tmp_path, monkeypatch)
    write_cases(tmp_path / "cases", [make_case("a")])
    run = conformance("--cases", str(tmp_path / "cases"), impls=("rust",))
    assert run.code == 2
    assert "--impl rust: not " in run.err
    assert "cargo build --release -p harnessweaver-testee" in run.err
    assert [impl.name for impl in driver.default_implementations()] == [
        "python-rust",
        "python-pure",
    ]
    built = tmp_path / "harnessweaver-testee"
    built.write_text("", encoding="utf-8")
    monkeypatch.setattr(driver, "RUST_TESTEE", built)
    assert [impl.name for impl in driver.default_implementations()] == [
        "python-rust",
        "python-pure",
        "rust",
    ]
    monkeypatch.setattr(driver, "TS_RUNNER", built)
    assert [impl.name for impl in driver.default_implementations()] == [
        "python-rust",
        "python-pure",
        "ts",
        "rust",
    ]
    rust = driver.resolve_implementations(["rust"])[0]
    assert rust.command == (str(built),)
    assert rust.core == "rust"  # its hello must say it runs the Rust core


def test_builtin_commands() -> None:
    builtins = driver.builtin_implementations()
    assert builtins["python-rust"].command == (
        sys.executable,
        "-m",
        "harnessweaver.conformance.testee",
        "--core",
        "rust",
    )
    assert builtins["python-pure"].command[-2:] == ("--core", "python")
    assert builtins["ts"].command == ("node", str(driver.ts_runner()))
    assert builtins["rust"].command == (str(driver.rust_testee()),)
    assert driver.RUST_TESTEE.parts[-3:-1] == ("target", "release")
    env = builtins["python-pure"].environment()
    assert env is not None and env["PYTHONPATH"].split(":")[0] == str(PYTHON_ROOT)
    assert builtins["ts"].environment() is None
    custom = driver.resolve_implementations(["mine=node 'my runner.js' --fast"])
    assert custom[0].command == ("node", "my runner.js", "--fast")


def test_list_impls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--list-impls"]) == 0
    out = capsys.readouterr().out.splitlines()
    # Listed: what can run here, with its command; under "not available here": the rest, with
    # how to get it (built in this clone, or cloned for an installed package): never a path
    # that does not exist.
    listed = dict(line.split(": ", 1) for line in out if not line.startswith(" ") and ": " in line)
    notes = {
        line.strip().split(": ", 1)[0]: line.strip().split(": ", 1)[1]
        for line in out
        if line.startswith("  ")
    }
    testee = f"{sys.executable} -m harnessweaver.conformance.testee --core"
    assert listed["python-pure"] == f"{testee} python"
    if COMPILED:
        assert out[0] == f"python-rust: {testee} rust"
    else:  # the pure wheel
        assert "python-rust" not in listed
        assert notes["python-rust"].startswith("the compiled core is not installed")
    in_clone = FROM_CHECKOUT  # the package is the clone's own source
    builds = {
        "ts": (
            driver.ts_runner(),
            f"node {driver.ts_runner()}",
            "cd ts-runner && npm ci && npm run build",
        ),
        "rust": (
            driver.rust_testee(),
            str(driver.rust_testee()),
            "cargo build --release -p harnessweaver-testee",
        ),
    }
    for name, (built, command, build) in builds.items():
        if built.is_file():
            assert listed[name] == command
        else:
            assert name not in listed
            if in_clone:
                assert notes[name] == f"not built in this clone: {build}"
            else:
                assert notes[name].startswith("not in the installed package: "), notes[name]
                assert build in notes[name]
    # every implementation appears once; the heading only when something is not available
    assert set(listed) | set(notes) == {"python-rust", "python-pure", "ts", "rust"}
    assert (out[len(listed) :][:1] == ["not available here:"]) == bool(notes)
    assert len(out) == len(listed) + (1 + len(notes) if notes else 0)


def test_bad_timeout_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["conformance", "--timeout", "0"])
    assert caught.value.code == 2
    assert "must be more than 0 seconds" in capsys.readouterr().err


def test_output_is_plain_when_not_a_terminal(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    write_cases(
        tmp_path / "cases",
        [make_case("p.pass"), make_case("p.fail", {"emits": [{"ran": ["x"], "outcome": {}}]})],
    )
    run = conformance("--cases", str(tmp_path / "cases"))
    assert "\x1b[" not in run.out
    rows = {line.split()[0]: line.split()[1:] for line in run.out.splitlines() if line.strip()}
    assert rows["p.pass"] == ["pass"] and rows["p.fail"] == ["fail"]


def test_python_dash_m_entry_point(tmp_path: Path) -> None:
    write_cases(tmp_path / "cases", [make_case("m.one")])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "harnessweaver.conformance",
            "--cases",
            str(tmp_path / "cases"),
            "--impl",
            fake_impl("fake"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**_env(), "PYTHONPATH": str(PYTHON_ROOT)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().splitlines()[-2] == "CONFORMANCE PASSED"
    assert (tmp_path / "out" / "fake.jsonl").is_file()


def _env() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if key != CORPUS_ENV}


def test_driver_modules_import_no_other_harnessweaver_module() -> None:
    """The driver judges implementations without loading one: with the package's own
    ``__init__`` bypassed, importing the CLI loads only the driver's modules."""
    probe = (
        "import sys, types\n"
        "package = types.ModuleType('harnessweaver')\n"
        f"package.__path__ = [{str(PYTHON_ROOT / 'harnessweaver')!r}]\n"
        "sys.modules['harnessweaver'] = package\n"
        # the CLI imports each subcommand's modules when it runs it: import fuzz's too
        "import harnessweaver.cli, harnessweaver.conformance.report\n"
        "import harnessweaver.conformance.fuzz\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('harnessweaver'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(result.stdout.split())
    allowed = {"harnessweaver", "harnessweaver.cli", "harnessweaver.conformance"} | {
        f"harnessweaver.conformance.{name}"
        for name in (
            "canonical",
            "cases",
            "matchers",
            "protocol",
            "expectations",
            "driver",
            "report",
            "console",
            "coverage",
            "fuzz",
        )
    }
    assert loaded == allowed


def test_the_corpus_is_named_to_the_testee(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "conformance"
    copy_schemas(corpus)
    (corpus / "VERSION").write_text("1.0.0", encoding="utf-8")
    (corpus / "catalogue.json").write_text("{}", encoding="utf-8")
    # The fake answers the variable's value as the only name of task.start's chain.
    then = {"chains": {"task.start": [str(corpus.resolve())]}}
    write_cases(corpus / "cases", [make_case("env.corpus", then, {"env": CORPUS_ENV})])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    run = conformance()
    assert run.code == 0, run.out
    assert run.line("env.corpus")["actual"]["chains"]["task.start"] == [str(corpus.resolve())]
    # A loose directory of cases belongs to no corpus: the variable is left alone.
    loose = tmp_path / "loose"
    unset = {"chains": {"task.start": []}}
    write_cases(loose, [make_case("env.loose", unset, {"env": CORPUS_ENV})])
    assert conformance("--cases", str(loose)).code == 0


def test_report_heads_a_traceback_with_its_last_line_and_names_the_runner(
    tmp_path: Path, conformance: Any
) -> None:
    traceback = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'juggle'\n"
    write_cases(tmp_path / "cases", [make_case("t.one", fake={"errored": traceback})])
    run = conformance("--cases", str(tmp_path / "cases"))
    lines = run.out.splitlines()
    assert lines[0] == "fake: core fake, language python, name fake, version 0.0.1"
    assert "fake t.one: error (KeyError: 'juggle')" in lines
    assert '      File "x.py", line 1' in lines
    assert run.line("t.one")["reason"] == traceback


def test_a_builtin_runner_reporting_another_core_fails_the_run(tmp_path: Path) -> None:
    # python-pure once ran the Rust core because the core was chosen before --core was read;
    # the driver now refuses a built-in runner whose hello names another core.
    from harnessweaver.conformance.cases import load_cases
    from harnessweaver.conformance.expectations import Expectations

    write_cases(tmp_path / "cases", [make_case("a")])
    cases = tuple(load_cases(tmp_path / "cases"))
    impl = driver.Implementation("python-rust", tuple(fake_command()), core="rust")
    config = driver.RunConfig(cases=cases, implementations=(impl,))
    run = driver.run_implementation(impl, cases, Expectations("python-rust"), config)
    assert [r.status for r in run.results] == ["crash"]
    assert run.startup_error == "runner reports core 'fake', expected 'rust'"
    assert "runner failed to start" in run.problems()[0]


def test_loose_cases_without_a_corpus_run_and_say_messages_are_unchecked(
    tmp_path: Path, conformance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package without its corpus (a build that did not ship one), outside a checkout, finds
    no corpus for a loose ``--cases`` directory: the run goes on, held to the protocol's
    framing only, and says so."""
    from harnessweaver.conformance import cases as case_module

    monkeypatch.delenv(CORPUS_ENV, raising=False)
    monkeypatch.setattr(case_module, "CHECKOUT_CORPUS", tmp_path / "no-checkout")
    monkeypatch.setattr(case_module, "PACKAGE_CORPUS", tmp_path / "no-shipped-corpus")
    monkeypatch.chdir(tmp_path)
    write_cases(tmp_path / "cases", [make_case("l.one", PASSING_THEN, {"actual": OBSERVATION})])
    run = conformance("--cases", str(tmp_path / "cases"))
    assert run.code == 0, run.err
    assert run.statuses() == {"l.one": "pass"}
    assert "not checked against its protocol schema" in run.err
    assert CORPUS_ENV in run.err
    # With a corpus found, nothing is said about it.
    monkeypatch.setenv(CORPUS_ENV, str(CORPUS))
    again = conformance("--cases", str(tmp_path / "cases"))
    assert again.code == 0 and "not checked" not in again.err


def _report_of(tmp_path: Path, *, without_rich: bool) -> list[str]:
    """The report of a run with a passing and a failing case, from a child interpreter in
    which ``rich`` is installed, or cannot be imported (as without the ``conformance`` extra)."""
    cases = tmp_path / "cases"
    write_cases(
        cases,
        [make_case("p.pass"), make_case("p.fail", {"emits": [{"ran": ["x"], "outcome": {}}]})],
    )
    hide = "sys.modules['rich'] = None  # import rich raises ImportError\n" if without_rich else ""
    probe = (
        f"import sys\n{hide}"
        "from harnessweaver.cli import main\n"
        f"code = main(['conformance', '--cases', {str(cases)!r}, '--impl', {fake_impl('fake')!r},"
        f" '--out', {str(tmp_path / 'out')!r}])\n"
        "assert ('rich' in sys.modules and sys.modules['rich'] is not None) is "
        f"{not without_rich!r}, 'rich loaded or not as asked'\n"
        "raise SystemExit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**_env(), "PYTHONPATH": str(PYTHON_ROOT)},
    )
    assert result.returncode == 1, result.stdout + result.stderr  # p.fail fails
    return result.stdout.splitlines()


def test_the_report_is_plain_text_without_rich(tmp_path: Path) -> None:
    """rich is the `conformance` extra: without it the same report prints as plain text."""
    plain = _report_of(tmp_path / "plain", without_rich=True)
    assert "\x1b[" not in "\n".join(plain)
    start = plain.index("conformance")
    assert plain[start + 1].split() == ["case", "fake"]
    assert set(plain[start + 2]) <= {"-", " "}
    assert plain[start + 3].split() == ["p.fail", "fail"]
    assert plain[start + 4].split() == ["p.pass", "pass"]
    assert "fake p.fail: fail" in plain
    assert (
        "fake: 1 passed, 1 failed, 0 skipped, 0 xfail, 0 xpass, 0 errors, 0 crashed, 0 timed out"
        in plain
    )
    assert plain[-2].startswith("CONFORMANCE FAILED: ")
    assert plain[-1].startswith("results: ")


def test_the_report_says_the_same_with_and_without_rich(tmp_path: Path) -> None:
    """Line for line the same words; only the table's drawing differs."""
    plain = _report_of(tmp_path / "plain", without_rich=True)
    fancy = _report_of(tmp_path / "fancy", without_rich=False)

    def words(lines: list[str]) -> list[list[str]]:
        return [line.split() for line in lines if line.strip() and set(line.strip()) - set("-─ ")]

    def out_dir(line: list[str]) -> list[str]:
        return [word.replace("/fancy/", "/plain/") for word in line]

    assert [out_dir(line) for line in words(fancy)] == words(plain)
