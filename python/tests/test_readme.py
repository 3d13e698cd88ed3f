"""The README's examples run as written and print what the README says they print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import require_checkout

ROOT = require_checkout()
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAIRS = re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", README, flags=re.DOTALL)


def test_the_readme_has_examples_with_output() -> None:
    assert PAIRS, "no ```python block followed by its ```text output in README.md"


@pytest.mark.parametrize(("code", "output"), PAIRS)
def test_an_example_prints_what_the_readme_shows(code: str, output: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == output


def test_ci_runs_the_readme_test_command() -> None:
    command = re.search(r"^(.*?)\s+# the test command", README, flags=re.MULTILINE)
    assert command is not None
    for ci in (ROOT / ".ci" / "run", ROOT / ".github" / "workflows" / "ci.yml"):
        assert command.group(1).strip() in ci.read_text(encoding="utf-8"), ci
