"""mypy --strict on every example and every whole Python program the README and the
specification show.

A user copies these first, so they must type-check as they are written: each directory under
``examples/`` is checked from inside itself (its modules import one another by plain name),
and each ```python block of ``README.md`` and ``docs/spec/*.md`` (complete programs, unlike
the fragments other docs quote) is written to a file of its own and checked alone.
``nox -s lint`` runs this; it exits with mypy's status.

    python tools/typecheck_examples.py
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)


def _mypy(files: list[str], cwd: Path) -> int:
    command = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(CONFIG)]
    return subprocess.run([*command, "--no-incremental", *files], cwd=cwd, check=False).returncode


def snippets() -> list[tuple[str, str]]:
    """``(name, code)`` of every Python block of the README and the specification."""
    found: list[tuple[str, str]] = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs" / "spec").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for number, match in enumerate(_BLOCK.finditer(text), 1):
            stem = re.sub(r"\W", "_", str(page.relative_to(ROOT)).removesuffix(".md"))
            found.append((f"{stem}_{number}.py", match.group(1)))
    return found


def main() -> int:
    status = 0
    for example in sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        files = sorted(str(p.relative_to(example)) for p in example.rglob("*.py"))
        if files:
            print(f"mypy --strict examples/{example.name}", flush=True)
            status |= _mypy(files, example)
    with tempfile.TemporaryDirectory() as scratch:
        for name, code in snippets():
            (Path(scratch) / name).write_text(code, encoding="utf-8")
            print(f"mypy --strict {name} (a snippet)", flush=True)
            # One at a time: snippets repeat names (a `main`, a `bus`) that mypy would take
            # for duplicate modules or definitions if checked together.
            status |= _mypy([name], Path(scratch))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
