"""The command line as a wheel user meets it: ``python -m harnessweaver`` is the
``harnessweaver`` command, and ``conformance --list-impls`` outside a clone lists only what
exists there and says how to get the rest (issue 32)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import COMPILED, PACKAGE

import harnessweaver as hw
from harnessweaver.conformance.driver import REPOSITORY

_DROPPED = (
    "PYTHONPATH",
    "HARNESSWEAVER_CORPUS",
    "HARNESSWEAVER_RUST_TESTEE",
    "HARNESSWEAVER_TS_RUNNER",
)


def _run(
    *args: str, cwd: Path, pythonpath: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED} | extra
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    command = [sys.executable, *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package laid out as a wheel installs it, ``lib/python3.X/site-packages/
    harnessweaver`` with the corpus copied in, far from any clone; returns site-packages."""
    root = tmp_path_factory.mktemp("venv")
    site = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PACKAGE, site / "harnessweaver", symlinks=False, ignore=ignore)
    return site


def test_python_m_harnessweaver_is_the_command(tmp_path: Path, installed: Path) -> None:
    done = _run("-m", "harnessweaver", "--version", cwd=tmp_path, pythonpath=installed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"harnessweaver {hw.__version__} (core ")
    usage = _run("-m", "harnessweaver", "--help", cwd=tmp_path, pythonpath=installed)
    assert usage.returncode == 0, usage.stderr
    assert usage.stdout.startswith("usage: harnessweaver ")
    wrong = _run("-m", "harnessweaver", "no-such-command", cwd=tmp_path, pythonpath=installed)
    assert wrong.returncode == 2
    assert "invalid choice: 'no-such-command'" in wrong.stderr


def test_list_impls_outside_a_clone_names_only_what_exists(tmp_path: Path, installed: Path) -> None:
    done = _run(
        "-m", "harnessweaver", "conformance", "--list-impls", cwd=tmp_path, pythonpath=installed
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    listed = dict(
        line.split(": ", 1) for line in lines if not line.startswith(" ") and ": " in line
    )
    # the pure wheel has no compiled core: python-rust is then "not available here" too
    assert set(listed) == ({"python-rust", "python-pure"} if COMPILED else {"python-pure"})
    for command in listed.values():
        program, *args = command.split()
        assert Path(program).is_file()
        assert args[:2] == ["-m", "harnessweaver.conformance.testee"]
    notes = {line.split(": ", 1)[0].strip(): line for line in lines if line.startswith("  ")}
    assert set(notes) == ({"ts", "rust"} if COMPILED else {"ts", "rust", "python-rust"})
    assert "not available here:" in lines
    if not COMPILED:
        assert "the compiled core is not installed" in notes.pop("python-rust")
    for name, note in notes.items():
        assert "not in the installed package: " in note, name
        assert str(installed.parents[2]) not in note  # no path guessed next to site-packages
    # How to get each next to an installed package, and the variable that names one.
    assert "npm install harnessweaver in an npm project and run from its folder" in notes["ts"]
    assert "HARNESSWEAVER_TS_RUNNER" in notes["ts"]
    assert "npm ci && npm run build" in notes["ts"]
    assert f"cargo install --locked --git {REPOSITORY} harnessweaver-testee" in notes["rust"]
    assert "HARNESSWEAVER_RUST_TESTEE" in notes["rust"]
    assert "cargo build --release -p harnessweaver-testee" in notes["rust"]


def test_the_rust_testee_a_variable_names_is_listed(tmp_path: Path, installed: Path) -> None:
    testee = tmp_path / "harnessweaver-testee"
    testee.write_text("#!/bin/sh\n", encoding="utf-8")
    done = _run(
        "-m", "harnessweaver", "conformance", "--list-impls", cwd=tmp_path, pythonpath=installed,
        HARNESSWEAVER_RUST_TESTEE=str(testee),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"rust: {testee}" in done.stdout.splitlines()
    gone = _run(
        "-m", "harnessweaver", "conformance", "--impl", "rust", cwd=tmp_path, pythonpath=installed,
        HARNESSWEAVER_RUST_TESTEE=str(tmp_path / "nothing"),
    )  # fmt: skip
    assert gone.returncode == 2, gone.stderr
    assert f"--impl rust: {tmp_path / 'nothing'} does not exist" in gone.stderr
