"""A plugin whose import raises, whatever it raises: a ``plugin_import_error`` naming the
plugin and the exception's type, never its message (R9), never an escape from ``hw.load``
(issue 28: a plugin calling ``sys.exit()`` at import ended the program). ``KeyboardInterrupt``
is the one kind that propagates, so that Ctrl-C stops a load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from spec_support import problems, write

import harnessweaver as hw

SECRET = "sk-ant-api03-plugin-secret-0123456789"

RAISES = {
    "sys_exit": f"import sys\nsys.exit({SECRET!r})\n",
    "system_exit_code": "raise SystemExit(3)\n",
    "generator_exit": f"raise GeneratorExit({SECRET!r})\n",
    "base_exception": f"raise BaseException({SECRET!r})\n",
    "subclass": f"class Halt(BaseException):\n    pass\n\nraise Halt({SECRET!r})\n",
    "exception": f"raise ValueError({SECRET!r})\n",
}
TYPES = {
    "sys_exit": "SystemExit",
    "system_exit_code": "SystemExit",
    "generator_exit": "GeneratorExit",
    "base_exception": "BaseException",
    "subclass": "Halt",
    "exception": "ValueError",
}


@pytest.fixture(autouse=True)
def _forget_the_modules() -> object:
    """Each test writes its plugin modules anew: none stays imported between tests."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("hw_import_"):
            del sys.modules[name]


@pytest.mark.parametrize("kind", sorted(RAISES))
def test_a_local_plugin_whose_import_raises_is_a_problem_naming_it(
    tmp_path: Path, kind: str
) -> None:
    module = f"hw_import_{kind}"
    write(tmp_path, RAISES[kind], f"{module}.py")
    (problem,) = problems(write(tmp_path, f"plugins: {{local: [{module}]}}\n"))
    assert (problem.kind, problem.rule, problem.item) == (
        "plugin_import_error",
        "plugins",
        "plugins.local[0]",
    )
    assert (
        problem.message
        == f"cannot import {module}: {TYPES[kind]} (its message is not shown) (plugins)"
    )
    assert SECRET not in str(problem)


def test_a_plugin_module_whose_getattr_raises_is_a_problem(tmp_path: Path) -> None:
    """Reading ``plugin`` off the module is part of loading it (PEP 562 ``__getattr__``)."""
    code = f"def __getattr__(name):\n    raise SystemExit({SECRET!r})\n"
    write(tmp_path, code, "hw_import_getattr.py")
    (problem,) = problems(write(tmp_path, "plugins: {local: [hw_import_getattr]}\n"))
    assert (
        problem.message
        == "cannot import hw_import_getattr: SystemExit (its message is not shown) (plugins)"
    )


def test_an_unnamable_exception_type_is_not_shown(tmp_path: Path) -> None:
    code = f"class E(Exception):\n    pass\n\nE.__name__ = 'E\\n{SECRET}'\nraise E('m')\n"
    write(tmp_path, code, "hw_import_odd_name.py")
    (problem,) = problems(write(tmp_path, "plugins: {local: [hw_import_odd_name]}\n"))
    assert problem.message == (
        "cannot import hw_import_odd_name: UnnamedException (its message is not shown) (plugins)"
    )


def test_a_missing_module_is_named(tmp_path: Path) -> None:
    write(tmp_path, "import hw_import_nowhere_to_be_found\n", "hw_import_needs.py")
    (problem,) = problems(write(tmp_path, "plugins: {local: [hw_import_needs]}\n"))
    assert problem.message == (
        "cannot import hw_import_needs: ModuleNotFoundError: No module named "
        "'hw_import_nowhere_to_be_found' (plugins)"
    )


def test_keyboard_interrupt_propagates_so_that_ctrl_c_stops_a_load(tmp_path: Path) -> None:
    write(tmp_path, "raise KeyboardInterrupt\n", "hw_import_ctrl_c.py")
    with pytest.raises(KeyboardInterrupt):
        hw.load(write(tmp_path, "plugins: {local: [hw_import_ctrl_c]}\n"))


def test_an_entry_point_that_exits_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "hw_import_test_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hw-import-test-plugins\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[harnessweaver.plugins]\n"
        "exits = hw_import_entry:plugin\n"
        "factory = hw_import_entry_factory:make\n",
        encoding="utf-8",
    )
    write(site, f"raise SystemExit({SECRET!r})\n", "hw_import_entry.py")
    write(site, f"def make():\n    raise GeneratorExit({SECRET!r})\n", "hw_import_entry_factory.py")
    monkeypatch.syspath_prepend(str(site))
    found = problems(write(tmp_path, "plugins: {installed: [exits, factory]}\n"))
    assert [(p.kind, p.item) for p in found] == [
        ("plugin_import_error", "plugins.installed[0]"),
        ("plugin_import_error", "plugins.installed[1]"),
    ]
    assert found[0].message == (
        "entry point exits (hw_import_entry:plugin): SystemExit (its message is not shown) "
        "(plugins)"
    )
    assert found[1].message == (
        "entry point factory (hw_import_entry_factory:make): GeneratorExit (its message is not "
        "shown) (plugins)"
    )
    assert all(SECRET not in str(p) for p in found)
