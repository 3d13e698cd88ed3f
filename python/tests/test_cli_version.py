"""``harnessweaver --version``: the package, the core it selected and the corpus it finds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import CORPUS

import harnessweaver as hw
from harnessweaver.cli import main


def test_version_names_the_package_the_core_and_the_corpus(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    version = (CORPUS / "VERSION").read_text(encoding="utf-8").strip()
    expected = f"harnessweaver {hw.__version__} (core {hw.CORE}, corpus {version})"
    assert capsys.readouterr().out == expected + "\n"


def test_version_says_when_no_corpus_is_found(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    env = {**os.environ, "HARNESSWEAVER_CORPUS": str(missing)}
    ran = subprocess.run(
        [sys.executable, "-m", "harnessweaver.cli", "--version"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"harnessweaver {hw.__version__} (core ")
    assert ran.stdout.rstrip().endswith("no corpus found)")
