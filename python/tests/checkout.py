"""Where the suite finds what is not part of the package: the conformance corpus and the
source checkout (README, examples, the TypeScript package, the workflows).

The suite runs from a checkout (``nox -s tests``) and against installed wheels and sdists
(``nox -s installed``, ``tools/installed.py``), which copies it out of the tree so that
``python/`` cannot be imported. There ``HARNESSWEAVER_CORPUS`` names the corpus (the driver
reads the same variable) and ``HARNESSWEAVER_CHECKOUT`` the checkout whose files the
remaining tests read; a test whose files are absent is skipped and says why.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harnessweaver

CHECKOUT_ENV = "HARNESSWEAVER_CHECKOUT"
CORPUS_ENV = "HARNESSWEAVER_CORPUS"


def _is_checkout(path: Path) -> bool:
    return (path / "Cargo.toml").is_file() and (path / "python" / "tests").is_dir()


def _checkout() -> Path | None:
    configured = os.environ.get(CHECKOUT_ENV)
    if configured:
        path = Path(configured).resolve()
        if not _is_checkout(path):
            raise RuntimeError(f"{CHECKOUT_ENV}={configured} is not a harnessweaver checkout")
        return path
    beside = Path(__file__).resolve().parents[2]
    return beside if _is_checkout(beside) else None


def _corpus() -> Path:
    configured = os.environ.get(CORPUS_ENV)
    path = Path(configured) if configured else CHECKOUT / "conformance" if CHECKOUT else None
    if path is None or not (path / "catalogue.json").is_file():
        raise RuntimeError(
            f"no conformance corpus for the suite: set {CORPUS_ENV} (or {CHECKOUT_ENV}) when "
            f"the tests run outside a checkout (got {path})"
        )
    return path.resolve()


CHECKOUT: Path | None = _checkout()
"""The repository root, when the suite can see one."""
CORPUS: Path = _corpus()
"""The conformance corpus (``conformance/``): its cases, catalogue, schemas and expectations."""
PACKAGE: Path = Path(harnessweaver.__file__).resolve().parent
"""The ``harnessweaver`` package under test: ``python/harnessweaver`` or an installed copy."""
FROM_CHECKOUT = CHECKOUT is not None and PACKAGE == CHECKOUT / "python" / "harnessweaver"
"""Whether the package under test is the checkout's own source (not an installed copy)."""
COMPILED = importlib.util.find_spec("harnessweaver._core") is not None
"""Whether the compiled core is installed (it is not in the pure-Python wheel)."""

from_checkout = pytest.mark.skipif(
    not FROM_CHECKOUT,
    reason=f"about a package imported from a source checkout; this one is {PACKAGE}",
)
needs_compiled_core = pytest.mark.skipif(
    not COMPILED, reason="needs the compiled core, which this installation does not have"
)


def require_checkout() -> Path:
    """The checkout; or, without one, skip the calling test module."""
    if CHECKOUT is None:
        pytest.skip(
            f"needs the source checkout's files: set {CHECKOUT_ENV} to run this against an "
            "installed package",
            allow_module_level=True,
        )
    return CHECKOUT


def run_example(*parts: str) -> str:
    """Run ``examples/<parts>`` from the checkout with this interpreter (or skip without a
    checkout); its standard output, once it has exited 0."""
    root = require_checkout()
    command = [sys.executable, str(root.joinpath("examples", *parts))]
    done = subprocess.run(command, capture_output=True, text=True, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout
