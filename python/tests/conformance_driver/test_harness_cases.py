"""Spec-level cases (``given.harness``, INTERPRETING.md §2, §6.1): the Python runner loads the
spec with scripted plugins, observes the harness or every problem, and leaves nothing behind;
the driver compares problems with their messages left to matchers."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from checkout import CORPUS
from driver_support import make_case, write_cases
from pydantic import ValidationError

from harnessweaver.conformance.canonical import pinned
from harnessweaver.conformance.cases import Case, CaseLoadError, load_cases
from harnessweaver.conformance.driver import (
    RUST_TESTEE,
    RunConfig,
    builtin_implementations,
    run_implementation,
)
from harnessweaver.conformance.expectations import Expectations, Status
from harnessweaver.conformance.harness import settings_model
from harnessweaver.conformance.matchers import compare_observation
from harnessweaver.conformance.testee import FEATURES, observe

SAMPLES: dict[str, Any] = json.loads((CORPUS / "catalogue.json").read_text())["samples"]
GUARD = {
    "name": "guard",
    "hooks": ["tool.before"],
    "fail_mode": "closed",
    "does": {"return": "block", "reason": "guarded", "code": "guarded"},
}
CAP = {
    "name": "cap",
    "hooks": ["tool.before"],
    "fail_mode": "closed",
    "settings": {
        "type": "object",
        "properties": {"max_usd": {"type": "number", "minimum": 0}},
        "required": ["max_usd"],
    },
}
WATCH = {"name": "watch", "hooks": ["tool.before", "tool.after"], "fail_mode": "open"}


def harness_case(spec: str, plugins: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "id": "harness.x",
        "description": "A harness case.",
        "rules": ["I13"],
        "features": ["harness-spec"],
        "given": {"harness": {"files": {"harness.yaml": spec, **more}, "plugins": plugins}},
        "when": [{"emit": "tool.before"}],
        "then": {"emits": []},
    }


ACME = {"namespace": "acme", "version": "1.0.0", "local": "app.plug", "middleware": [GUARD, CAP]}
BETA = {"namespace": "beta", "version": "2.0.0", "installed": "beta", "middleware": [WATCH]}


def test_the_runner_declares_harness_spec() -> None:
    assert "harness-spec" in FEATURES


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_loaded_harness_is_observed_and_its_chain_runs(backend: str) -> None:
    spec = (
        "plugins: {local: [app.plug], installed: [beta]}\n"
        "profiles: [profile://acme.base]\n"
        "middleware:\n  - {use: beta.watch}\n  - {use: acme.guard, id: second}\n"
    )
    acme = {**ACME, "profiles": {"base": "middleware:\n  - {use: acme.guard, id: first}\n"}}
    actual = observe(harness_case(spec, [acme, BETA]), SAMPLES, backend)
    assert actual["error"] is None
    harness = actual["harness"]
    assert (harness["spec"], harness["task"], harness["env"]) == ("harness.yaml", None, None)
    chain = next(h["chain"] for h in harness["hooks"] if h["hook"] == "tool.before")
    assert [(e["name"], e["layer"], e["file"], e["line"]) for e in chain] == [
        ("first", "plugin_profile", "profile://acme.base", None),
        ("beta.watch", "app", "harness.yaml", 4),
        ("second", "app", "harness.yaml", 5),
    ]
    assert actual["chains"]["tool.before"] == ["first", "beta.watch", "second"]
    # One middleware under two ids: each item's own name in ``ran``; the first blocks.
    assert actual["emits"][0]["ran"] == ["first"]
    assert actual["emits"][0]["outcome"]["code"] == "guarded"


def test_nothing_of_a_case_stays_behind() -> None:
    def cases_names() -> dict[str, object]:
        return {
            m: v for m, v in sys.modules.items() if m == "app" or m.startswith(("app.", "_hwcase_"))
        }

    # What an earlier test left under the plugin's name (a spec loaded outside a case, such as
    # examples/refunds' app package) is set aside for the case and put back as it was.
    before_path, before_modules, before_app = list(sys.path), set(sys.modules), cases_names()
    spec = "plugins: {local: [app.plug], installed: [beta]}\nmiddleware: [{use: acme.guard}]\n"
    observe(harness_case(spec, [ACME, BETA]), SAMPLES, "asyncio")
    assert sys.path == before_path
    after = cases_names()
    assert after.keys() == before_app.keys()
    assert all(after[name] is before_app[name] for name in after)
    assert set(sys.modules) - before_modules <= {
        m for m in sys.modules if m.startswith(("harnessweaver", "yaml"))
    }
    names = {ep.name for ep in importlib.metadata.entry_points(group="harnessweaver.plugins")}
    assert "beta" not in names
    # The next case cannot load what the last one had.
    gone = observe(harness_case("plugins: {installed: [beta]}\n", []), SAMPLES, "asyncio")
    assert [p["kind"] for p in gone["error"]["problems"]] == ["unknown_plugin"]


def test_a_module_already_imported_under_the_plugins_name_is_set_aside() -> None:
    stranger = types.ModuleType("app")
    sys.modules["app"] = stranger
    try:
        spec = "plugins: {local: [app.plug]}\nmiddleware: [{use: acme.guard}]\n"
        actual = observe(harness_case(spec, [ACME]), SAMPLES, "asyncio")
        assert actual["error"] is None
        assert sys.modules["app"] is stranger
    finally:
        del sys.modules["app"]


def test_a_spec_that_fails_lists_every_problem_sorted() -> None:
    spec = (
        "plugins: {local: [app.plug]}\n"
        "profiles: [profiles/a.yaml]\n"
        "middleware:\n"
        "  - {use: acme.cap, max_usd: lots}\n"
        "  - {use: acme.guard, band: baseline}\n"
        "middlewares: 1\n"
    )
    profile = "middleware:\n  - {use: acme.nope}\n  - {id: x}\n"
    actual = observe(harness_case(spec, [ACME], **{"profiles/a.yaml": profile}), SAMPLES, "asyncio")
    error = actual["error"]
    assert (error["kind"], error["rule"]) == ("invalid_spec", "spec")
    assert [(p["file"], p["line"], p["kind"], p["rule"]) for p in error["problems"]] == [
        ("harness.yaml", 4, "invalid_settings", "settings"),
        ("harness.yaml", 5, "baseline_outside_profile", "S8"),
        ("harness.yaml", 6, "unknown_key", "spec"),
        ("profiles/a.yaml", 2, "unknown_use", "plugins"),
        ("profiles/a.yaml", 3, "bad_item", "spec"),
    ]
    assert all(p["message"] for p in error["problems"])
    assert "harness" not in actual and actual["emits"] == []  # no step runs


def test_problems_without_a_line_come_first_in_their_file() -> None:
    case = harness_case("\n\nmiddleware: [{use: acme.guard}]\n", [])
    case["given"]["harness"]["env"] = "prod"  # no envs: a problem of the file, without a line
    problems = observe(case, SAMPLES, "asyncio")["error"]["problems"]
    assert [(p["line"], p["item"], p["kind"]) for p in problems] == [
        (None, "envs", "unknown_env"),
        (3, "middleware[0] (acme.guard)", "unknown_use"),
    ]


def test_settings_are_validated_as_their_json_schema_says() -> None:
    model = settings_model(
        {
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 9},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "names": {"type": "array", "items": {"type": "string"}},
                "on": {"type": "boolean"},
                "ratio": {"type": "number"},
            },
            "required": ["limit"],
        },
        "acme.x",
    )
    ok = model.model_validate({"limit": 3, "ratio": 2})
    assert (ok.limit, ok.mode, ok.names, ok.ratio) == (3, "a", None, 2)  # type: ignore[attr-defined]
    for bad in (
        {},
        {"limit": "3"},
        {"limit": 0},
        {"limit": 10},
        {"limit": 3, "mode": "c"},
        {"limit": 3, "on": "yes"},
        {"limit": 3, "names": [1]},
        {"limit": 3, "other": 1},
        {"limit": 3, "names": None},
    ):
        with pytest.raises(ValidationError):
            model.model_validate(bad)


def _problem(kind: str, message: str) -> dict[str, Any]:
    return {"file": "harness.yaml", "item": "", "line": 1, "kind": kind, "rule": "spec"} | (
        {"message": message} if message else {}
    )


def test_a_problems_message_is_compared_only_through_a_matcher() -> None:
    actual = {
        "error": {
            "kind": "invalid_spec",
            "rule": "spec",
            "message": "harness.yaml:1: ...",
            "problems": [_problem("unknown_key", "unknown key 'x' (spec)")],
        },
        "emits": [],
    }
    then: dict[str, Any] = {
        "error": {
            "kind": "invalid_spec",
            "rule": "spec",
            "message": {"$any": True},
            "problems": [_problem("unknown_key", "")],
        },
        "emits": [],
    }
    assert compare_observation(then, actual) == []
    then["error"]["problems"][0]["message"] = {"$contains": "'x'"}
    assert compare_observation(then, actual) == []
    then["error"]["problems"][0]["message"] = {"$contains": "'y'"}
    assert [d.path for d in compare_observation(then, actual)] == ["/error/problems/0/message"]
    then["error"]["problems"][0] = _problem("bad_item", "")
    assert [d.path for d in compare_observation(then, actual)] == ["/error/problems/0/kind"]
    then["error"]["problems"].append(_problem("bad_item", ""))
    assert [d.path for d in compare_observation(then, actual)] == ["/error/problems"]


def test_require_identical_leaves_out_every_problems_message() -> None:
    observed = {
        "error": {"kind": "invalid_spec", "message": "m", "problems": [_problem("x", "text")]},
        "emits": [],
    }
    assert pinned(observed) == {
        "error": {"kind": "invalid_spec", "problems": [_problem("x", "")]},
        "emits": [],
    }
    assert observed["error"]["problems"][0]["message"] == "text"  # a copy, not a change


def test_loading_refuses_a_harness_case_without_its_tag(tmp_path: Path) -> None:
    case = harness_case("", [])
    case["features"] = []
    write_cases(tmp_path, [case])
    with pytest.raises(CaseLoadError, match="carries the feature harness-spec"):
        load_cases(tmp_path)


def test_loading_refuses_a_problem_message_written_as_text(tmp_path: Path) -> None:
    case = make_case("a.b")
    case["then"]["error"] = {
        "kind": "invalid_spec",
        "rule": "spec",
        "message": {"$any": True},
        "problems": [_problem("bad_item", "exactly this")],
    }
    write_cases(tmp_path, [case])
    with pytest.raises(CaseLoadError, match=r"problems\[0\].message: free text"):
        load_cases(tmp_path)


@pytest.mark.skipif(not RUST_TESTEE.is_file(), reason="the Rust testee is not built")
def test_the_rust_testee_skips_harness_cases() -> None:
    data = harness_case("middleware: [{use: acme.guard}]\n", [ACME])
    case = Case("harness.x", data, Path("harness.json"))
    config = RunConfig(cases=(case,), implementations=(), corpus=CORPUS, timeout=60)
    run = run_implementation(
        builtin_implementations()["rust"], [case], Expectations("rust"), config
    )
    assert [r.status for r in run.results] == [Status.SKIP]
    assert "harness-spec" in (run.results[0].reason or "")


def test_the_case_schema_knows_every_spec_level_kind_and_its_rule() -> None:
    from jsonschema import Draft202012Validator

    from harnessweaver.spec.errors import RULES

    schema = json.loads((CORPUS / "schema" / "case.schema.json").read_text(encoding="utf-8"))
    assert set(RULES) <= set(schema["$defs"]["problemKind"]["enum"])
    check = Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/problemExpected"})
    for kind, rule in RULES.items():
        problem = {"file": "harness.yaml", "item": "", "line": None, "kind": kind, "rule": rule}
        assert check.is_valid(problem), kind
        assert not check.is_valid({**problem, "rule": "I99"}), kind
