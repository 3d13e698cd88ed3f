"""Fixtures of the driver's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessweaver.conformance import driver


@pytest.fixture
def nothing_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ts or rust testee anywhere: not built, not named, not on PATH, no npm project."""
    monkeypatch.setattr(driver, "TS_RUNNER", tmp_path / "missing" / "runner.js")
    monkeypatch.setattr(driver, "RUST_TESTEE", tmp_path / "missing" / "harnessweaver-testee")
    monkeypatch.delenv(driver.TS_RUNNER_ENV, raising=False)
    monkeypatch.delenv(driver.RUST_TESTEE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
