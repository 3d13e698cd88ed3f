"""The package ships the conformance corpus (``harnessweaver/corpus``): an installed wheel or
sdist runs ``harnessweaver conformance`` and says ``--version`` with no checkout and no
``HARNESSWEAVER_CORPUS``. From a checkout the package's corpus is a symlink to
``conformance/``; installed, it is the copy the build made (docs/packaging.md, "The corpus")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import CORPUS, PACKAGE

from harnessweaver.conformance import cases
from harnessweaver.conformance.cases import CORPUS_ENV, PACKAGE_CORPUS, find_corpus


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_the_package_ships_the_corpus_it_was_built_from() -> None:
    """Every file of the corpus, byte for byte: its cases, catalogue, schemas, known-failure
    lists, VERSION and the texts that say what a case means."""
    assert PACKAGE_CORPUS == PACKAGE / "corpus"
    shipped = _files(PACKAGE_CORPUS)
    assert shipped == _files(CORPUS)
    assert {"VERSION", "catalogue.json", "INTERPRETING.md"} <= set(shipped)


def test_without_a_checkout_the_shipped_corpus_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_corpus(tmp_path, {}).resolve() == PACKAGE_CORPUS.resolve()
    monkeypatch.setattr(cases, "CHECKOUT_CORPUS", tmp_path / "no-checkout")
    assert find_corpus(tmp_path, {}) == PACKAGE_CORPUS
    # What is given or found near the caller still comes first.
    assert find_corpus(tmp_path, {CORPUS_ENV: str(CORPUS)}) == CORPUS


def test_version_names_the_shipped_corpus_outside_a_checkout(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != CORPUS_ENV}
    command = [sys.executable, "-m", "harnessweaver.cli", "--version"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    version = (PACKAGE_CORPUS / "VERSION").read_text(encoding="utf-8").strip()
    assert f"corpus {version})" in done.stdout
