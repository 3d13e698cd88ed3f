"""The end of a conformance report says what the run covered: the implementations run, the
built-in ones not run here with how to get them, every skip with its reason and the install
that runs it; and a run without jsonschema says, in one line, what it does not check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from driver_support import OBSERVATION, fake_impl, make_case, nothing_found, write_cases

from harnessweaver import cli
from harnessweaver.cli import main
from harnessweaver.conformance import driver, protocol

THEN: dict[str, Any] = {
    "chains": {"tool.before": ["guard"]},
    "emits": [
        {"ran": ["guard"], "outcome": {"kind": "block", "reason": "refund over cap", "code": "cap"}}
    ],
}


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *impls: str) -> tuple[int, str, str]:
    write_cases(
        tmp_path / "cases",
        [
            make_case("a.plain", THEN, {"actual": OBSERVATION}),
            make_case("b.cedar", THEN, {"actual": OBSERVATION}, features=["cedar"]),
        ],
    )
    args = [a for impl in impls for a in ("--impl", impl)]
    out = str(tmp_path / "out")
    code = main(["conformance", "--cases", str(tmp_path / "cases"), "--out", out, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_skips_are_listed_with_what_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(tmp_path, capsys, fake_impl("python-fake"), fake_impl("other"))
    assert code == 0
    lines = out.splitlines()
    assert "implementations run: python-fake, other" in lines
    assert "cases skipped (not judged):" in lines
    skipped = "1 skipped: feature(s) not declared by the runner: cedar"
    # A Python implementation is told the extra that runs them; another gets no Python advice.
    assert (
        f"  python-fake: {skipped} -> pip install 'harnessweaver[cedar]' runs them "
        "(Cedar's engine, cedarpy)"
    ) in lines
    assert f"  other: {skipped}" in lines
    assert lines[-2] == "CONFORMANCE PASSED"


def test_a_run_without_jsonschema_says_what_it_does_not_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain ``pip install`` has no jsonschema: the run judges every case all the same,
    holding messages to the framing alone, and says so once."""
    monkeypatch.setattr(protocol, "schema_checks_available", lambda: False)
    monkeypatch.setattr(driver, "schema_checks_available", lambda: False)
    code, out, err = run(tmp_path, capsys, fake_impl("fake"))
    assert code == 0, out
    notes = [line for line in err.splitlines() if "jsonschema" in line]
    assert notes == [
        "harnessweaver conformance: jsonschema is not installed, so what the runners send is "
        "held to the protocol's framing only, not checked against its schema (pip install "
        "'harnessweaver[conformance]' checks it)"
    ]
    monkeypatch.undo()
    _, _, err = run(tmp_path, capsys, fake_impl("fake"))
    assert "jsonschema" not in err


def test_a_default_run_names_the_implementations_it_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nothing_found(tmp_path, monkeypatch)
    chosen = driver.default_implementations()
    not_run = cli._not_run(chosen)
    assert set(not_run) == {"ts", "rust"}
    assert not_run["rust"] == driver.unavailable("rust")
    assert cli._not_run([*chosen, *driver.builtin_implementations().values()]) == {}
