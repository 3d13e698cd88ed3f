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
    sys.path.insert(0, str(ROOT / "tools"))  # its sibling, tools/by_name.py
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
        sys.path.remove(str(ROOT / "tools"))
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


def test_what_runs_elsewhere_is_test_files_each_run_once_by_a_session() -> None:
    """``ELSEWHERE``: files (or folders) the full installed run and ``nox -s tests`` leave out
    because one session runs them; each must exist, and the noxfile must run it."""
    elsewhere: tuple[str, ...] = _installed().ELSEWHERE
    assert len(set(elsewhere)) == len(elsewhere)
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert "ELSEWHERE" in noxfile
    for name in elsewhere:
        path = TESTS / name
        assert (path.is_file() and path.name.startswith("test_")) or path.is_dir(), name
        # mcp/ in `nox -s mcp`, state/ in `nox -s state` (by prefix), others by name.
        prefix = name.split("/")[0]
        assert f'name.startswith("{prefix}/")' in noxfile or f"python/tests/{name}" in noxfile, name
    smoke = set(_installed().SMOKE)
    assert not any(s == e or s.startswith(f"{e}/") for s in smoke for e in elsewhere)
