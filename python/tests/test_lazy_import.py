"""``import harnessweaver`` loads only what is used (``_lazy.py``): a hook command started per
tool call, or a program that only needs the bus, pays for what it touches. Module lists and
identities, not times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import ModuleType

import pytest

import harnessweaver as hw


def _fresh(code: str) -> object:
    """What ``code`` prints (JSON) in a fresh interpreter on this test's core."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_package_loads_no_model_and_no_run_loop() -> None:
    loaded = _fresh("import json, sys, harnessweaver; print(json.dumps(sorted(sys.modules)))")
    assert isinstance(loaded, list)
    heavy = ("pydantic", "asyncio", "anyio", "yaml", "harnessweaver.events", "harnessweaver.agent")
    assert not [m for m in loaded if m.startswith(heavy)]
    if hw.CORE == "rust":  # the pure core is only loaded when it runs
        assert not [m for m in loaded if m.startswith("harnessweaver._pycore")]


@pytest.mark.parametrize("name", sorted(hw.__all__))
def test_every_public_name_resolves_in_a_fresh_interpreter(name: str) -> None:
    kind = _fresh(
        f"import json, harnessweaver as hw; v = hw.{name}; "
        "print(json.dumps([type(v).__module__, type(v).__name__]))"
    )
    assert kind != ["builtins", "module"]
    assert name in dir(hw)


@pytest.mark.parametrize("first", ["harnessweaver.middleware", "harnessweaver"])
def test_hw_middleware_is_the_decorator_whichever_module_loads_first(first: str) -> None:
    shown = _fresh(
        f"import json, sys, importlib; importlib.import_module({first!r}); "
        "import harnessweaver as hw, harnessweaver.spec.loader; "
        "module = sys.modules['harnessweaver.middleware']; "
        "print(json.dumps([hw.middleware is module.middleware, callable(hw.middleware)]))"
    )
    assert shown == [True, True]
    assert not isinstance(hw.middleware, ModuleType)


def test_a_submodule_is_still_an_attribute_once_used() -> None:
    assert _fresh("import json, harnessweaver as hw; print(json.dumps(hw.events.__name__))") == (
        "harnessweaver.events"
    )


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        hw.no_such_thing  # noqa: B018
