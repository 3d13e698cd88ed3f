"""docs/integrations/langchain.md's own blocks, run exactly as written inside real LangChain
(issue 32): the ``harness.yaml`` with the first run, and the paused call; each prints what
the page says it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import PACKAGE, require_checkout

pytest.importorskip("langchain")

PAGE = require_checkout() / "docs" / "integrations" / "langchain.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def section(title: str) -> list[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return FENCE.findall(text[start : end if end != -1 else len(text)])


def run_blocks(title: str, tmp_path: Path) -> tuple[str, str]:
    blocks = section(title)
    for kind, body in blocks:
        if kind == "yaml":
            (tmp_path / "harness.yaml").write_text(body, encoding="utf-8")
    [code] = [body for kind, body in blocks if kind == "python"]
    [expected] = [body for kind, body in blocks if kind == "text"]
    (tmp_path / "first_run.py").write_text(code, encoding="utf-8")
    # the package under test (the clone's python/, or an installed one), as a reader has it
    env = {"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "first_run.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, expected


def test_the_first_run_prints_what_the_page_says(tmp_path: Path) -> None:
    printed, expected = run_blocks("A first run, offline", tmp_path)
    assert (tmp_path / "harness.yaml").read_text(encoding="utf-8").startswith("profiles:")
    assert printed == expected


def test_the_paused_call_prints_what_the_page_says(tmp_path: Path) -> None:
    printed, expected = run_blocks("A call that waits for a person", tmp_path)
    assert printed == expected
