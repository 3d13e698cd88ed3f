"""examples/rollout (I25): the same harness audited, then enforced with --env prod; run.py
prints what its README shows, and `harnessweaver hooks` shows the modes as documented."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from checkout import require_checkout

ROOT = require_checkout()
EXAMPLE = ROOT / "examples" / "rollout"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
HOOKS = ["hooks", "examples/rollout/harness.yaml", "--org-profiles", "examples/rollout/org"]


def block(after: str, lang: str) -> str:
    """The first ```lang block of the README after the text ``after``."""
    found = re.search(re.escape(after) + r".*?```" + lang + r"\n(.*?)```", README, re.DOTALL)
    assert found is not None, f"no ```{lang} block after {after!r} in examples/rollout/README.md"
    return found.group(1)


def cli(*args: str) -> str:
    command = [sys.executable, "-m", "harnessweaver.cli", *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def section(out: str, hook: str) -> str:
    return out.split(f"\n{hook}  (")[1].split("\n\n")[0]


def test_run_py_audits_then_enforces_as_the_readme_shows(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py")], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == block("python examples/rollout/run.py\n```", "text")


def test_hooks_shows_the_modes_audited_then_enforced() -> None:
    audited = cli(*HOOKS)
    assert "(task: none, env: none, mode: audit)" in audited
    shown = block("--org-profiles examples/rollout/org\n```", "text")
    assert section("\n" + shown, "tool.before").rstrip() == section(audited, "tool.before")
    enforced = cli(*HOOKS, "--env", "prod")
    assert "(task: none, env: prod, mode: enforce)" in enforced
    assert "audit" not in section(enforced, "tool.before")
