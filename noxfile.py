"""Developer and CI tasks.

``nox -s tests``        cargo test for the core, pytest against the Rust core and the Python core
``nox -s ts``           the TypeScript package: npm ci, type check, build, node tests, npm pack
``nox -s lint``         ruff, mypy --strict, stubtest, cargo fmt and clippy
``nox -s conformance``  every implementation over the corpus, results identical across them
``nox -s fuzz``         differential testing on generated cases (``-- --seed N`` to reproduce)

Each Python session builds the Rust extension into its own virtual environment with maturin
(release profile, so what is tested is what ships) and installs the tools it needs from the
dependency groups in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

ROOT = Path(__file__).parent
TS = ROOT / "ts-runner"
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
CORES = ("rust", "python")

nox.options.sessions = ["tests", "ts", "lint", "conformance", "fuzz"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *groups: str) -> None:
    """Build the extension into the session's environment, then add the dependency groups."""
    session.install("maturin>=1.9.4,<2")
    for group in groups:
        session.install(*nox.project.dependency_groups(PYPROJECT, group))
    env = {"VIRTUAL_ENV": session.virtualenv.location}
    session.run("maturin", "develop", "--release", "--quiet", env=env)


def build_ts(session: nox.Session) -> None:
    """Install the TypeScript package's locked dependencies and compile it (for its runner)."""
    if shutil.which("npm") is None:
        session.warn("npm not found: the TypeScript implementation is left out")
        return
    with session.chdir(TS):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True, silent=True)
        session.run("npm", "run", "build", external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """cargo test for the core crate, then pytest against the Rust core and the Python core."""
    session.run("cargo", "test", "--locked", "-p", "harnessweaver-core", "--quiet", external=True)
    install(session, "test")
    for core in CORES:
        session.log(f"pytest with HARNESSWEAVER_CORE={core}")
        session.run("pytest", *session.posargs, env={"HARNESSWEAVER_CORE": core})


@nox.session(python=False)
def ts(session: nox.Session) -> None:
    """The TypeScript package from a clean install: type check, tests, and what npm would pack."""
    with session.chdir(TS):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
        session.run("npm", "run", "lint", external=True)
        session.run("npm", "test", external=True)
        session.run("npm", "pack", "--dry-run", external=True)


@nox.session
def conformance(session: nox.Session) -> None:
    """Every implementation present over the whole corpus; fails on any unexpected result.

    Extra arguments go to ``harnessweaver conformance`` (e.g. ``-- --impl python-rust``).
    """
    install(session, "conformance")
    build_ts(session)
    args = session.posargs or ["--require-identical"]
    session.run("harnessweaver", "conformance", "--out", str(ROOT / "results"), *args)


@nox.session
def fuzz(session: nox.Session) -> None:
    """2,000 generated cases through every implementation; ``-- --seed N`` reproduces a run."""
    install(session, "fuzz")
    build_ts(session)
    session.run("harnessweaver", "fuzz", "--count", "2000", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, stubtest against the compiled module, cargo fmt and clippy."""
    install(session, "lint")
    session.run("ruff", "check", "python", "examples", "noxfile.py")
    session.run("ruff", "format", "--check", "python", "examples", "noxfile.py")
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
