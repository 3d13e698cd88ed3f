"""The public API: three namespaces, each name spelled once, and only the selected core loaded.

``hw`` holds the bus; ``hw.agent`` the run loop and ``hw.spec`` the harness-spec loader, whose
names the top level re-exports from their own ``__all__`` (it spells none of them). Each package
lists a name in three views that must agree: ``__all__`` (what a type checker and ``import *``
read), the lazy table (where the name is imported from on first use) and the type checker's
imports; these tests hold them together, since only one of them runs.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import harnessweaver as hw
from harnessweaver import _lazy

PACKAGES = ("harnessweaver", "harnessweaver.agent", "harnessweaver.spec")
SUBPACKAGES = ("agent", "spec")


def _source(package: str) -> ast.Module:
    module = import_module(package)
    return ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))


def _type_view(tree: ast.Module) -> dict[str, str]:
    """``{name: module}`` of the imports a type checker reads (``if TYPE_CHECKING:``)."""
    view: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                    for alias in stmt.names:
                        if alias.name != "*":  # the run loop and the spec loader, re-exported
                            view[alias.asname or alias.name] = f".{stmt.module}"
    return view


def _fresh(program: str, core: str | None = None) -> Any:
    """What ``program`` leaves in ``result`` (as JSON), run in a fresh interpreter."""
    script = f"import json\n{program}\nprint(json.dumps(result))"
    env = {**os.environ, **({"HARNESSWEAVER_CORE": core} if core else {})}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


_PYCORE = "result = sorted(m for m in sys.modules if m.startswith('harnessweaver._pycore'))"


def _rust_core_present() -> bool:
    try:
        import_module("harnessweaver._core")
    except ImportError:
        return False
    return True


needs_rust = pytest.mark.skipif(not _rust_core_present(), reason="the compiled core is absent")


# ``import harnessweaver`` alone under the Rust core: test_lazy_import.py.


def test_importing_under_the_pure_core_loads_it() -> None:
    assert "harnessweaver._pycore" in _fresh(f"import sys, harnessweaver\n{_PYCORE}", "python")


_BUS = """
import anyio
import harnessweaver as hw

@hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="1s")
async def deny(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    return hw.Block(reason="no")

async def main() -> None:
    bus = hw.HookBus()
    bus.register(deny)
    ctx = hw.RunContext(envelope=hw.Envelope(clock=hw.FixedClock("2026-01-01T00:00:00+00:00")))
    event = hw.ToolCallEvent(step=1, tool=hw.ToolSpec(name="t"), call=hw.ToolCall(name="t"))
    result = await bus.emit("tool.before", event, ctx)
    assert isinstance(result.outcome, hw.Block), result
    assert len(ctx.trace.records()) == 2

anyio.run(main)
"""


@needs_rust
def test_a_bus_and_the_run_loop_under_the_rust_core_load_no_pure_core_module() -> None:
    """An emit, and every name of the run loop: the pure core stays unloaded."""
    program = f"import sys\n{_BUS}\nfor name in hw.agent.__all__:\n    getattr(hw.agent, name)"
    assert _fresh(f"{program}\n{_PYCORE}", "rust") == []


def test_the_namespaces_load_when_used_and_their_modules_when_a_name_is() -> None:
    loaded = (
        "import sys, harnessweaver as hw\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if m.startswith(('harnessweaver.agent', "
        "'harnessweaver.spec')))\n"
        "result = [loaded()]\n"
        "hw.__all__\n"
        "result.append(loaded())\n"
        "hw.load\n"
        "result.append('harnessweaver.spec.loader' in loaded())"
    )
    assert _fresh(loaded) == [[], ["harnessweaver.agent", "harnessweaver.spec"], True]


@pytest.mark.parametrize("package", PACKAGES)
def test_dir_lists_every_public_name_before_it_is_loaded(package: str) -> None:
    program = f"import {package} as p\nresult = sorted(set(p.__all__) - set(dir(p)))"
    assert _fresh(program) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package: str) -> None:
    module = import_module(package)
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice"
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_the_lazy_table_the_type_view_and_all_agree(package: str) -> None:
    """A name is in ``__all__``, in the lazy table and in the type checker's imports, each
    with the same home; only the top level also has names taken from the selected core or
    computed on first use."""
    module = import_module(package)
    table = _lazy.homes(module._HOMES)
    assert _type_view(_source(package)) == table
    own = set(module.__all__) - _re_exported(module)
    assert own == set(table) | (_NOT_LAZY if module is hw else set())


_NOT_LAZY = {"CORE", "Declaration", "LAYERS", "__version__", "declare_in", "parse_duration"}


def _re_exported(module: ModuleType) -> set[str]:
    return {n for sub in SUBPACKAGES for n in getattr(hw, sub).__all__} if module is hw else set()


def test_the_top_level_re_exports_the_run_loop_and_the_spec_loader_without_naming_them() -> None:
    sub_names = {name for sub in SUBPACKAGES for name in getattr(hw, sub).__all__}
    assert sub_names <= set(hw.__all__)
    spelled = {
        node.value
        for node in ast.walk(_source("harnessweaver"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    } | {
        alias.asname or alias.name
        for node in ast.walk(_source("harnessweaver"))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert sorted(spelled & sub_names) == []
    for sub in SUBPACKAGES:
        for name in getattr(hw, sub).__all__:
            assert getattr(hw, name) is getattr(getattr(hw, sub), name), name


def test_the_run_loop_and_the_spec_loader_are_namespaces() -> None:
    assert hw.agent.Decision is hw.Decision
    assert hw.spec.load is hw.load
    assert "Decision" in dir(hw.agent)
    assert "HookBus" not in hw.agent.__all__
