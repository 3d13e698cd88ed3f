"""Which core runs: HARNESSWEAVER_CORE, and the fallback when the extension is missing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import harnessweaver as hw


def test_the_requested_core_is_the_one_running() -> None:
    wanted = os.environ.get("HARNESSWEAVER_CORE", "auto")
    expected = {"python": "python", "rust": "rust", "auto": "rust"}[wanted]
    assert expected == hw.CORE
    assert type(hw.Continue()).__module__ == "harnessweaver" or hw.CORE == "python"


def _run(code: str, core: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HARNESSWEAVER_CORE"}
    if core is not None:
        env["HARNESSWEAVER_CORE"] = core
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


BLOCK_EXTENSION = "import sys; sys.modules['harnessweaver._core'] = None; "


def test_missing_extension_falls_back_to_python_with_a_warning() -> None:
    done = _run(BLOCK_EXTENSION + "import harnessweaver as hw; print(hw.CORE)", None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python"
    assert "RuntimeWarning" in done.stderr and "pure-Python core" in done.stderr


def test_insisting_on_rust_without_the_extension_fails_clearly() -> None:
    done = _run(BLOCK_EXTENSION + "import harnessweaver", "rust")
    assert done.returncode != 0
    assert "HARNESSWEAVER_CORE=rust" in done.stderr


@pytest.mark.parametrize("value", ["cython", "RUSTY"])
def test_an_unknown_core_name_is_an_error(value: str) -> None:
    done = _run("import harnessweaver", value)
    assert done.returncode != 0
    assert value.lower() in done.stderr and "HARNESSWEAVER_CORE" in done.stderr
