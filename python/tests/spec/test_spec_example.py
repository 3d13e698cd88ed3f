"""examples/refunds runs with one command and prints what its README shows; its chains print
as documented; and a mistake in it is reported the way the README says."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from checkout import require_checkout

ROOT = require_checkout()
EXAMPLE = ROOT / "examples" / "refunds"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
HOOKS = ["hooks", "examples/refunds/harness.yaml", "--task", "refund"]
ORG = ["--org-profiles", "examples/refunds/org"]


def block(after: str, lang: str) -> str:
    """The first ```lang block of the README after the text ``after``."""
    found = re.search(re.escape(after) + r".*?```" + lang + r"\n(.*?)```", README, re.DOTALL)
    assert found is not None, f"no ```{lang} block after {after!r} in examples/refunds/README.md"
    return found.group(1)


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harnessweaver.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd)


def test_run_py_prints_what_the_readme_shows_from_any_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py")], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == block("python examples/refunds/run.py\n```", "text")


def test_harnessweaver_hooks_prints_the_chains_run_py_prints() -> None:
    done = cli(*HOOKS, *ORG)
    assert done.returncode == 0, done.stderr
    shown = block("python examples/refunds/run.py\n```", "text")
    assert done.stdout == shown.split("\nSaturday")[0]
    assert "  6  pii  " in done.stdout  # the names the trace gives them
    assert "  7  small_cap  " in done.stdout


def test_the_staging_overlay_and_the_diagram_are_as_documented() -> None:
    staging = cli(*HOOKS, "--env", "staging", *ORG)
    assert block("Add\n`--env staging`", "text") in staging.stdout
    mermaid = cli(*HOOKS, *ORG, "--format", "mermaid")
    assert mermaid.stdout == block("`--format mermaid`", "mermaid")


def test_a_misspelt_setting_is_reported_as_documented(tmp_path: Path) -> None:
    copy = tmp_path / "refunds"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    spec = copy / "harness.yaml"
    spec.write_text(spec.read_text().replace("max_usd: 500", "max_usdd: 500"), encoding="utf-8")
    done = cli("hooks", "harness.yaml", "--task", "refund", "--org-profiles", "org", cwd=copy)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == block("exits with status 2:", "text")
