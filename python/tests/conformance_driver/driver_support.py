"""Helpers shared by the driver's tests: fake testee commands and tiny case files."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from checkout import CORPUS
from fake_testee import HOOKS

from harnessweaver.conformance import driver

FAKE = Path(__file__).with_name("fake_testee.py")

TRACE_MAIN = [
    {
        "emit": 1,
        "hook": "tool.before",
        "kind": "outcome",
        "middleware": "guard",
        "band": "app",
        "outcome": "block",
        "modified": False,
        "code": "cap",
        "t_ns": 1234,
        "duration_ns": 56,
    },
    {
        "emit": 1,
        "hook": "tool.before",
        "kind": "hook",
        "outcome": "block",
        "modified": False,
        "code": "cap",
        "t_ns": 1200,
        "duration_ns": 99,
    },
]

# A whole observation (INTERPRETING.md §6.1), as schema/protocol.schema.json wants it; its
# records keep their timings, which the driver strips.
OBSERVATION: dict[str, Any] = {
    "error": None,
    "chains": {hook: ["guard"] if hook == "tool.before" else [] for hook in HOOKS},
    "emits": [
        {
            "hook": "tool.before",
            "outcome": {"kind": "block", "reason": "refund over cap", "code": "cap"},
            "event": {"call": {"id": "c1", "name": "refund", "arguments": {"amount": 150.0}}},
            "ran": ["guard"],
            "warnings": [],
        }
    ],
    "traces": {"main": TRACE_MAIN},
}


def fake_command(*args: str) -> list[str]:
    return [sys.executable, str(FAKE), *args]


def fake_impl(name: str, *args: str) -> str:
    """An ``--impl NAME=COMMAND`` value running the fake testee."""
    return f"{name}={shlex.join(fake_command(*args))}"


def make_case(
    case_id: str,
    then: dict[str, Any] | None = None,
    fake: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": case_id,
        "description": f"case {case_id}",
        "given": {"middleware": []},
        "when": [],
        "then": {} if then is None else then,
        **extra,
    }
    if fake is not None:
        case["x-fake"] = fake
    return case


def copy_schemas(corpus: Path) -> None:
    """Give a corpus made by a test the real schemas: the driver checks messages with them."""
    (corpus / "schema").mkdir(parents=True, exist_ok=True)
    for name in ("case.schema.json", "protocol.schema.json"):
        shutil.copyfile(CORPUS / "schema" / name, corpus / "schema" / name)


def write_cases(directory: Path, cases: list[dict[str, Any]], name: str = "topic.json") -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"topic": path.stem, "description": "test cases", "cases": cases}
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def write_expectations(directory: Path, impl: str, entries: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{impl}.json"
    path.write_text(json.dumps({"implementation": impl, "entries": entries}), encoding="utf-8")
    return path


def read_results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def nothing_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ts or rust testee anywhere: not built, not named, not on PATH, no npm project;
    ``tmp_path`` becomes the working directory. Returns it."""
    monkeypatch.setattr(driver, "TS_RUNNER", tmp_path / "missing" / "runner.js")
    monkeypatch.setattr(driver, "RUST_TESTEE", tmp_path / "missing" / "harnessweaver-testee")
    monkeypatch.delenv(driver.TS_RUNNER_ENV, raising=False)
    monkeypatch.delenv(driver.RUST_TESTEE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
