"""``schema/protocol.schema.json`` (INTERPRETING.md §9): generated from the case schema, and
valid for every message every implementation sends over the whole corpus (issue 17)."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from checkout import COMPILED, CORPUS, require_checkout
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

import harnessweaver as hw
from harnessweaver.conformance.cases import load_cases
from harnessweaver.conformance.driver import (
    RUST_TESTEE,
    TS_RUNNER,
    RunConfig,
    builtin_implementations,
    run_implementation,
)
from harnessweaver.conformance.expectations import Status, load_expectations
from harnessweaver.conformance.protocol import ProtocolSchema

CRASH, TIMEOUT = Status.CRASH, Status.TIMEOUT


def load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((CORPUS / "schema" / name).read_text(encoding="utf-8"))
    return schema


CASE_SCHEMA = load("case.schema.json")
PROTOCOL = load("protocol.schema.json")
# Independent of the driver's own checking: the whole schema, its root oneOf included.
VALIDATOR = Draft202012Validator(
    PROTOCOL,
    registry=Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (CASE_SCHEMA, PROTOCOL)]
    ),
)


DRIVER = ProtocolSchema.load(CORPUS)


def errors(message: Any) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(message)]


def test_the_committed_protocol_schema_is_the_generated_one() -> None:
    path = require_checkout() / "tools" / "protocol_schema.py"
    spec = importlib.util.spec_from_file_location("protocol_schema", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    generated = tool.generated_text(CORPUS / "schema" / "case.schema.json")
    committed = (CORPUS / "schema" / "protocol.schema.json").read_text(encoding="utf-8")
    assert committed == generated, "run: python tools/protocol_schema.py"


def test_both_schemas_are_draft_2020_12_schemas() -> None:
    Draft202012Validator.check_schema(CASE_SCHEMA)
    Draft202012Validator.check_schema(PROTOCOL)


HELLO = {
    "protocol": 1,
    "implementation": {"name": "x", "language": "python", "version": "1", "core": "rust"},
    "features": ["timeouts"],
}
ANSWER = {
    "seq": 3,
    "actual": {
        "error": None,
        "chains": {hook: [] for hook in CASE_SCHEMA["$defs"]["knownHook"]["enum"]},
        "emits": [
            {
                "hook": "tool.before",
                "outcome": {"kind": "continue", "modified": False},
                "event": {},
                "ran": ["m"],
                "warnings": [{"middleware": "m", "text": "careful"}],
            }
        ],
        "traces": {
            "main": [
                {"emit": 1, "hook": "tool.before", "run": "main", "kind": "outcome"}
                | {"middleware": "m", "band": "app", "outcome": "continue", "modified": False}
                | {"warnings": ["careful"]},
                {"emit": 1, "hook": "tool.before", "run": "main", "kind": "hook"}
                | {"outcome": "continue", "modified": False, "t_ns": 5, "duration_ns": 1},
            ]
        },
    },
}


def changed(message: Mapping[str, Any], path: tuple[str | int, ...], value: Any) -> Any:
    """A copy of ``message`` with ``value`` at ``path``; ``...`` deletes the key."""
    copied = copy.deepcopy(dict(message))
    target: Any = copied
    for step in path[:-1]:
        target = target[step]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copied


RECORD = ("actual", "traces", "main", 0)
VALID = [HELLO, ANSWER, {"seq": 1, "skipped": True, "reason": "r"}]
INVALID = {
    "hello without core": changed(HELLO, ("implementation", "core"), ...),
    "hello with an extra key": changed(HELLO, ("backends",), ["asyncio"]),
    "hello of protocol 2": changed(HELLO, ("protocol",), 2),
    "hello with an unknown feature": changed(HELLO, ("features",), ["telepathy"]),
    "record with an unknown key": changed(ANSWER, (*RECORD, "verdict"), "no"),
    "record of an unknown kind": changed(ANSWER, (*RECORD, "kind"), "verdict"),
    "hook record with a middleware key": changed(
        ANSWER, ("actual", "traces", "main", 1, "band"), "app"
    ),
    "observation with an unknown key": changed(ANSWER, ("actual", "env"), None),
    "observation lacking a chain": changed(ANSWER, ("actual", "chains", "step.end"), ...),
    "emit lacking its warnings": changed(ANSWER, ("actual", "emits", 0, "warnings"), ...),
    "a matcher where a value goes": changed(ANSWER, ("actual", "emits", 0, "ran"), {"$any": True}),
    "an error of the wrong rule": changed(
        ANSWER, ("actual", "error"), {"kind": "invalid_band", "rule": "I1", "message": "m"}
    ),
    "answer without seq": changed(ANSWER, ("seq",), ...),
}


@pytest.mark.parametrize("message", VALID, ids=["hello", "actual", "skipped"])
def test_well_formed_messages_pass(message: dict[str, Any]) -> None:
    assert errors(message) == []


@pytest.mark.parametrize("message", INVALID.values(), ids=INVALID.keys())
def test_malformed_messages_fail(message: dict[str, Any]) -> None:
    assert errors(message)
    definition = "helloAnswer" if "protocol" in message else "runActual"
    assert DRIVER.problem(message, definition) is not None  # and the driver refuses it too


class Recording(ProtocolSchema):
    """The driver's schema, keeping every message it is asked about."""

    def __init__(self, protocol: Mapping[str, Any], case: Mapping[str, Any]) -> None:
        super().__init__(protocol, case)
        self.messages: list[tuple[str, Mapping[str, Any]]] = []

    def problem(self, message: Mapping[str, Any], definition: str) -> str | None:
        self.messages.append((definition, copy.deepcopy(message)))
        return super().problem(message, definition)


def _unbuilt(name: str) -> str | None:
    if name == "python-rust" and not COMPILED:
        return "python-rust needs the compiled core, which this installation does not have"
    if name == "ts" and not (TS_RUNNER.is_file() and shutil.which("node")):
        return f"ts needs node and its runner built at {TS_RUNNER} (npm run build in ts-runner)"
    if name == "rust" and not RUST_TESTEE.is_file():
        return f"rust needs its testee built at {RUST_TESTEE} (cargo build --release)"
    return None


# The suite runs once per core: each run checks its own core's testee, and the Rust core's run
# checks TypeScript and the Rust testee too, so every implementation is covered once without
# tripling the time.
OWN = ["python-rust", "ts", "rust"] if hw.CORE == "rust" else ["python-pure"]


@pytest.mark.parametrize("name", OWN)
def test_every_message_of_an_implementation_over_the_corpus_is_valid(name: str) -> None:
    reason = _unbuilt(name)
    if reason is not None:
        pytest.skip(reason)
    impl = builtin_implementations()[name]
    cases = load_cases(CORPUS / "cases")
    schema = Recording.load(CORPUS)
    assert isinstance(schema, Recording)
    config = RunConfig(tuple(cases), (impl,), corpus=CORPUS, schema=schema)
    run = run_implementation(impl, cases, load_expectations(CORPUS / "expectations", name), config)
    assert run.startup_error is None
    # A message that breaks the schema would be a crash (a protocol violation) of its case.
    crashed = [f"{r.id}: {r.reason}" for r in run.results if r.status in (CRASH, TIMEOUT)]
    assert not crashed, crashed[:5]
    kinds = Counter(definition for definition, _ in schema.messages)
    assert kinds["helloAnswer"] == 1
    assert kinds["runActual"] == len([r for r in run.results if r.actual is not None])
    invalid = {f"{m.get('seq')}: {e}" for _, m in schema.messages for e in errors(m)}
    assert not invalid, sorted(invalid)[:5]
    print(f"{name}: {len(schema.messages)} messages valid ({dict(kinds)})")
