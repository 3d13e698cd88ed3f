"""The smoke subset that ``nox -s installed`` runs on the extra CPython wheels and the sdist
(``SMOKE`` in tools/installed.py, docs/packaging.md): every file it names is a test file of
this suite, so a renamed or removed one is found here rather than late in ``nox -s wheels``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from checkout import require_checkout

ROOT = require_checkout()
TESTS = Path(__file__).resolve().parent


def _installed() -> ModuleType:
    """tools/installed.py as a module (registered while it runs: its dataclasses need that)."""
    name = "harnessweaver_tools_installed"
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "installed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def test_the_smoke_subset_names_test_files_of_this_suite() -> None:
    smoke: tuple[str, ...] = _installed().SMOKE
    assert smoke
    assert len(set(smoke)) == len(smoke)
    for name in smoke:
        path = TESTS / name
        assert path.is_file() and path.name.startswith("test_"), name


def test_the_smoke_subset_covers_the_binding_the_packaging_and_the_hook_command() -> None:
    smoke = set(_installed().SMOKE)
    assert {"test_core_selection.py", "test_emit.py", "test_packaging.py"} <= smoke
    assert any(name.startswith("hookcmd/") for name in smoke)
