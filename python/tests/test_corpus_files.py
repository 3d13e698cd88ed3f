"""Checks of the conformance corpus itself (conformance/INTERPRETING.md), not of a bus."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from checkout import CORPUS
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

CONFORMANCE = CORPUS
CASE_FILES = sorted((CONFORMANCE / "cases").glob("*/*.json"))
CATALOGUE: dict[str, Any] = json.loads((CONFORMANCE / "catalogue.json").read_text())
HOOK_TYPES: dict[str, str] = {h["name"]: h["event"] for h in CATALOGUE["hooks"]}
ID_RE = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
KNOWN_RULES = (
    [f"rule-{i}" for i in range(1, 5)]
    + ["detail-none", "detail-modified", "detail-invalid", "detail-closed-codes", "detail-trace"]
    + [f"ruling-{i}" for i in range(1, 22)]
    + ["R2", "R9", "R13", "S8"]
    + [f"I{i}" for i in range(1, 23)]
    + ["I24"]
    + ["I25"]  # audit mode
    + ["I26"]
    + ["I27"]  # content identity
    + ["I28"]  # bounded type names and outcome texts
    + ["I29"]  # hostile answers and events
    + ["I31"]  # odd names at emit and unregister
    + ["I33"]  # state stores: scripted stores, scopes, outages
    + ["I34"]  # durable approvals: binding, decide, claim, expiry, filing
    + ["I35"]  # every mistake of a spec item
    + ["I36"]  # reading a shell command (shell_guard)
    + ["I38"]  # Cedar policies (harnessweaver.cedar)
)
# No step can express I12 (cancellation from outside), nor read a trace back (I19) or fill one
# to its limit (I20); the test suites pin those.
REQUIRED_RULES = [r for r in KNOWN_RULES if r not in ("I12", "I19", "I20")]
FEATURES = {"timeouts", "concurrency", "throw-values", "harness-spec", "approvals", "cedar"}
ERROR_NAMES = {
    "timeout": "MiddlewareTimeout",
    "invalid_return": "InvalidReturn",
    "wrong_event_type": "WrongEventType",
    "contract_violation": "ContractViolation",
    "cancelled": "MiddlewareCancelled",
    "deadline": "ChainDeadline",
    "skipped": "ChainDeadline",
}
CLOSED_CODES = {
    "timeout": "middleware_timeout",
    "contract_violation": "contract_violation",
    "deadline": "chain_deadline",
    "skipped": "chain_deadline",
}
MAX_UNTIMED = 0.1  # seconds a middleware without a timeout may sleep or busy per call
MAX_CASE = 0.5  # seconds of sleeping and busying per case
Case = dict[str, Any]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


CASES: list[Case] = [case for path in CASE_FILES for case in load(path)["cases"]]
BY_CASE = pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in CASES])
EXPECTATIONS = sorted(
    {CONFORMANCE / "expectations" / f"{name}.json" for name in ("python-rust", "python-pure")}
    | set((CONFORMANCE / "expectations").glob("*.json"))
)


def is_matcher(value: Any) -> bool:
    return isinstance(value, dict) and set(value) in ({"$any"}, {"$contains"}, {"$regex"})


def behaviours(b: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A behaviour and every behaviour nested in it."""
    yield b
    for key in ("then", "else"):
        if isinstance(b.get(key), dict):
            yield from behaviours(b[key])
    for item in b.get("sequence", []):
        yield from behaviours(item)


def declarations(case: Case) -> Iterator[dict[str, Any]]:
    """Every declaration of a case: given (or its harness's plugins), register steps and
    register behaviours."""
    plugins = case["given"].get("harness", {}).get("plugins", [])
    pending = list(case["given"].get("middleware", []))
    pending += [decl for plugin in plugins for decl in plugin.get("middleware", [])]
    pending += [step["register"] for step in case["when"] if "register" in step]
    while pending:
        decl = pending.pop(0)
        yield decl
        for b in behaviours(decl.get("does", {"return": "none"})):
            if "register" in b:
                pending.append(b["register"])


def emit_steps(case: Case) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for step in case["when"]:
        steps.extend(step.get("concurrent", [step] if "emit" in step else []))
    return steps


def seconds(value: Any) -> float | None:
    """A valid timeout in seconds (ruling 15), or None for no timeout or an invalid one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if value > 0 else None
    text = value if isinstance(value, str) else ""
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m)", text)
    if not match:
        return None
    return float(match.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[match.group(2)] or None


def call_paths(b: dict[str, Any]) -> list[tuple[float, float]]:
    """(sleep, busy) seconds along every way one call of the behaviour can go."""
    if "sequence" in b:
        return [p for item in b["sequence"] for p in call_paths(item)]
    if "if" in b:
        return call_paths(b["then"]) + call_paths(b.get("else", {"return": "none"}))
    if "sleep" in b:
        return [(s + b["sleep"], u) for s, u in call_paths(b["then"])]
    if "busy" in b:
        return [(s, u + b["busy"]) for s, u in call_paths(b["then"])]
    if "register" in b:
        return call_paths(b["then"])
    return [(0.0, 0.0)]


def effective_timeout(decl: dict[str, Any]) -> Any:
    overrides = decl.get("register", {})
    return overrides["timeout"] if "timeout" in overrides else decl.get("timeout")


def chain_deadline(case: Case) -> float | None:
    """The earliest chain deadline a case sets (I26), in seconds: 0 when an emit's own is 0
    (nothing is called), None when it sets none."""
    given = [seconds(v) for v in case["given"].get("deadlines", {}).values()]
    own = [s.get("deadline") for s in emit_steps(case) if "deadline" in s]
    found = [g for g in given if g is not None]
    found += [0.0 if d in (0, "0s", "0ms") else seconds(d) or 0.0 for d in own]
    return min(found) if found else None


def hook_names(case: Case) -> Iterator[str]:
    for decl in declarations(case):
        for hooks in (decl.get("hooks"), decl.get("register", {}).get("hooks")):
            if isinstance(hooks, str):
                yield hooks
            elif isinstance(hooks, list) and all(isinstance(h, str) for h in hooks):
                # A list holding a non-string is no list of hook names: nothing in it is looked
                # up (invalid_hooks comes first, I17).
                yield from hooks
        for b in behaviours(decl.get("does", {"return": "none"})):
            if "modified_as" in b:
                yield b["modified_as"]
    for step in emit_steps(case):
        yield step["emit"]
        if "event_as" in step:
            yield step["event_as"]
    then = case["then"]
    yield from then.get("chains", {})
    yield from (e["hook"] for e in then["emits"] if isinstance(e.get("hook"), str))
    yield from (
        r["hook"]
        for records in then.get("traces", {}).values()
        for r in records
        if isinstance(r["hook"], str)
    )


def shape_errors(type_name: str, value: Any, where: str) -> list[str]:
    """Differences between a JSON value and a catalogue type (all fields present, no extra)."""
    if type_name in ("string", "string?", "integer", "number", "boolean", "object", "json"):
        ok = {
            "string": isinstance(value, str),
            "string?": value is None or isinstance(value, str),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
            "object": isinstance(value, dict),
            "json": True,
        }
        return [] if ok[type_name] else [f"{where}: not {type_name}: {value!r}"]
    fields: dict[str, Any] = CATALOGUE["types"][type_name]
    if not isinstance(value, dict):
        return [f"{where}: not a {type_name} object"]
    errors = [f"{where}: missing {k}" for k in fields if k not in value]
    errors += [f"{where}: extra {k}" for k in value if k not in fields]
    for key, spec in fields.items():
        if key not in value:
            continue
        if spec["type"] == "enum":
            if value[key] not in spec["values"]:
                errors.append(f"{where}.{key}: not in {spec['values']}")
        elif spec["type"] == "list":
            if not isinstance(value[key], list):
                errors.append(f"{where}.{key}: not a list")
            else:
                for i, item in enumerate(value[key]):
                    errors += shape_errors(spec["items"], item, f"{where}.{key}[{i}]")
        else:
            errors += shape_errors(spec["type"], value[key], f"{where}.{key}")
    return errors


_HOOK = {"emit": 1, "hook": "tool.before", "kind": "hook", "outcome": "continue", "modified": False}
_FAILED = {
    **_HOOK,
    **{"kind": "failure", "middleware": "m", "band": "app", "failure": "exception"},
    **{"error": "E", "fail_mode": "open"},
}
_ANSWERED = {**_HOOK, "kind": "outcome", "middleware": "m", "band": "app"}


@pytest.mark.parametrize(
    ("record", "valid"),
    [
        (_HOOK, True),
        ({**_HOOK, "warnings": ["w"]}, False),  # a hook record has no answer to warn with
        ({**_HOOK, "audit": True}, False),  # nor a middleware to audit
        (_FAILED, True),
        ({**_FAILED, "audit": True}, True),
        ({**_FAILED, "warnings": ["w"]}, False),  # a failure gave no answer (I24)
        ({**_ANSWERED, "warnings": ["w"], "audit": True}, True),
    ],
)
def test_the_schema_puts_warnings_and_audit_only_where_they_can_be(
    record: dict[str, Any], valid: bool
) -> None:
    schema = load(CONFORMANCE / "schema" / "case.schema.json")
    validator = Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/record"})
    assert validator.is_valid(record) is valid


@pytest.mark.parametrize(
    "path", CASE_FILES, ids=lambda p: str(p.relative_to(CONFORMANCE / "cases"))
)
def test_file_validates_against_case_schema(path: Path) -> None:
    schema = load(CONFORMANCE / "schema" / "case.schema.json")
    Draft202012Validator.check_schema(schema)
    errors = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in Draft202012Validator(schema).iter_errors(load(path))
    ]
    assert not errors, "\n".join(errors[:10])


def test_file_topics_prefix_their_case_ids() -> None:
    for path in CASE_FILES:
        doc = load(path)
        assert doc["$schema"] == "../../schema/case.schema.json"
        assert all(c["id"].startswith(doc["topic"] + ".") for c in doc["cases"]), path


def test_ids_are_unique_and_well_formed() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert all(ID_RE.match(i) for i in ids)
    assert len(ids) >= 90


def test_rules_are_known_and_required_ones_covered() -> None:
    used = {r for c in CASES for r in c["rules"]}
    assert used <= set(KNOWN_RULES), used - set(KNOWN_RULES)
    assert not [r for r in REQUIRED_RULES if r not in used]


@BY_CASE
def test_description_is_one_plain_sentence(case: Case) -> None:
    text = case["description"]
    assert text.endswith(".") and ". " not in text.rstrip(".")
    assert not re.search(r"\bshould\b|\btest that\b", text, re.IGNORECASE)


@BY_CASE
def test_hooks_are_in_catalogue(case: Case) -> None:
    unknown = {h for h in hook_names(case) if h not in HOOK_TYPES}
    error = case["then"].get("error") or {}
    if error.get("kind") == "unknown_hook":
        # Shown as messages show it: lone surrogates escaped (I17).
        shown = next(iter(unknown)).encode("utf-8", "backslashreplace").decode("utf-8")
        assert len(unknown) == 1 and error["message"] == {"$contains": shown}
    else:
        assert not unknown


@BY_CASE
def test_features_match_steps(case: Case) -> None:
    features = set(case.get("features", []))
    assert features <= FEATURES
    assert ("harness" in case["given"]) == ("harness-spec" in features)
    assert ("approvals" in case["given"]) == ("approvals" in features)
    assert ("approvals" in case["given"]) == ("approvals" in case["then"])
    if "approvals" in case["given"]:  # one answer per step (§4)
        assert len(case["then"]["approvals"]) == len(case["when"])
    groups = [step["concurrent"] for step in case["when"] if "concurrent" in step]
    assert bool(groups) == ("concurrency" in features)
    for group in groups:
        contexts = [s.get("context", "main") for s in group]
        assert len(contexts) == len(set(contexts)), "concurrent emits need distinct contexts"
    every = [b for decl in declarations(case) for b in behaviours(decl.get("does", {}))]
    if groups:  # INTERPRETING.md §4: nothing may depend on the scheduler's order
        assert not any({"sequence", "register", "unregister"} & b.keys() for b in every)
    assert any("throw" in b for b in every) == ("throw-values" in features)
    files = case["given"].get("harness", {}).get("files", {}).values()
    uses_cedar = any("cedar" in b for b in every) or any("harnessweaver.cedar" in f for f in files)
    assert uses_cedar == ("cedar" in features), "the cedar tag marks the cases that use Cedar (§8)"


@BY_CASE
def test_timeout_margins(case: Case) -> None:
    """A timeout fires with a margin of 10x or more, or is 10x or more above what may happen."""
    fires, cost = False, 0.0
    emits_on = [s["emit"] for s in emit_steps(case)]
    deadline = chain_deadline(case)  # I26: a limit on every middleware, next to its own
    for decl in declarations(case):
        timeout = seconds(effective_timeout(decl))
        if deadline == 0:
            continue  # a spent budget: nothing is called
        if deadline is not None:
            timeout = deadline if timeout is None else min(timeout, deadline)
        paths = call_paths(decl.get("does", {"return": "none"}))
        for sleep, busy in paths:
            spent = sleep + busy
            if timeout is None:
                assert spent <= MAX_UNTIMED, f"{decl['name']} has no timeout but takes {spent}s"
            elif spent >= 10 * timeout:
                fires = True
            else:
                assert timeout >= 10 * spent, (
                    f"{decl['name']}: {spent}s against a {timeout}s timeout"
                )
        hooks = decl.get("register", {}).get("hooks", decl["hooks"])
        calls = sum(1 for h in emits_on if isinstance(hooks, list) and h in hooks)
        worst = max(u + min(s, timeout if timeout is not None else s) for s, u in paths)
        cost += calls * worst
    assert fires == ("timeouts" in case.get("features", [])), (
        "the timeouts tag marks cases where one fires"
    )
    assert cost <= MAX_CASE


@BY_CASE
def test_events_have_the_catalogue_shape(case: Case) -> None:
    errors: list[str] = []
    for step in emit_steps(case):
        if "event" in step and step["emit"] in HOOK_TYPES:
            errors += shape_errors(
                HOOK_TYPES[step["emit"]], step["event"], f"event of {step['emit']}"
            )
    for i, emit in enumerate(case["then"]["emits"]):
        if "event" in emit and not is_matcher(emit["event"]):
            errors += shape_errors(HOOK_TYPES[emit["hook"]], emit["event"], f"emits[{i}].event")
    assert not errors, errors


@BY_CASE
def test_expected_records_and_emits_are_consistent(case: Case) -> None:
    then = case["then"]
    if "error" not in then:
        assert [e.get("hook") for e in then["emits"]] == [s["emit"] for s in emit_steps(case)]
    for records in then.get("traces", {}).values():
        for r in records:
            if r["kind"] == "failure":
                closed = r["fail_mode"] == "closed"
                assert r["error"] == ERROR_NAMES.get(r["failure"], r["error"])
                assert r["outcome"] == ("block" if closed else "continue")
                code = CLOSED_CODES.get(r["failure"], "middleware_error")
                assert r.get("code") == (code if closed else None)
            assert r["modified"] is False or r["outcome"] == "continue"
        hook_records = [r for r in records if r["kind"] == "hook"]
        assert [r["emit"] for r in hook_records] == sorted({r["emit"] for r in records})


def test_protocol_schema_accepts_every_case_in_a_run_request() -> None:
    case_schema = load(CONFORMANCE / "schema" / "case.schema.json")
    protocol = load(CONFORMANCE / "schema" / "protocol.schema.json")
    Draft202012Validator.check_schema(protocol)
    registry: Registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (case_schema, protocol)]
    )
    validator = Draft202012Validator(protocol, registry=registry)
    for seq, case in enumerate(CASES):
        validator.validate({"cmd": "run", "seq": seq, "case": case})
    validator.validate({"cmd": "hello", "protocol": 1})
    validator.validate({"seq": 1, "skipped": True, "reason": "feature"})


@pytest.mark.parametrize("path", EXPECTATIONS, ids=lambda p: p.name)
def test_expectations_are_well_formed(path: Path) -> None:
    doc = load(path)
    assert set(doc) == {"implementation", "entries"} and doc["implementation"] == path.stem
    ids = [c["id"] for c in CASES]
    for entry in doc["entries"]:
        assert set(entry) <= {"id", "status", "reason", "issue"}
        assert entry["status"] in ("xfail", "skip")
        assert isinstance(entry["reason"], str) and entry["reason"]
        pattern = entry["id"]
        if pattern.endswith("*"):
            assert any(i.startswith(pattern[:-1]) for i in ids), f"{pattern} matches no case"
        else:
            assert pattern in ids, f"{pattern} matches no case"
