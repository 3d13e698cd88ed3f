"""Developer and CI tasks: ``nox -s tests``, ``nox -s conformance``, ``nox -s lint``.

Each session builds the Rust extension into its own virtual environment with maturin (release
profile, so what is tested is what ships) and installs the development tools it needs from the
dependency groups in ``pyproject.toml``.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
CORES = ("rust", "python")

nox.options.sessions = ["tests", "conformance", "lint"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *groups: str) -> None:
    """Build the extension into the session's environment, then add the dependency groups."""
    session.install("maturin>=1.9.4,<2")
    for group in groups:
        session.install(*nox.project.dependency_groups(PYPROJECT, group))
    env = {"VIRTUAL_ENV": session.virtualenv.location}
    session.run("maturin", "develop", "--release", "--quiet", env=env)


@nox.session
def tests(session: nox.Session) -> None:
    """cargo test for the core crate, then pytest against the Rust core and the Python core."""
    session.run("cargo", "test", "--locked", "-p", "harnessweaver-core", "--quiet", external=True)
    install(session, "test")
    for core in CORES:
        session.log(f"pytest with HARNESSWEAVER_CORE={core}")
        session.run("pytest", *session.posargs, env={"HARNESSWEAVER_CORE": core})


@nox.session
def conformance(session: nox.Session) -> None:
    """Every implementation present over the whole corpus; fails on any unexpected result.

    Extra arguments go to ``harnessweaver conformance`` (e.g. ``-- --impl python-rust``).
    """
    install(session, "conformance")
    out = ROOT / "results"
    args = session.posargs or ["--require-identical"]
    session.run("harnessweaver", "conformance", "--out", str(out), *args)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, stubtest against the compiled module, cargo fmt and clippy."""
    install(session, "lint")
    session.run("ruff", "check", "python", "noxfile.py")
    session.run("ruff", "format", "--check", "python", "noxfile.py")
    session.run("mypy")
    session.run("python", "-m", "mypy.stubtest", "harnessweaver._core")
    session.run("cargo", "fmt", "--all", "--check", external=True)
    session.run(
        "cargo",
        "clippy",
        "--locked",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
        external=True,
        env={"PYO3_PYTHON": os.path.join(session.bin, "python")},
    )
