"""The local package index ``nox -s installed`` installs from by name (tools/local_index.py)
and the by-name checks of tools/by_name.py: pip itself finds and downloads a wheel from it,
with its hash; a view leaves out what it should; the arguments refuse what cannot work."""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from checkout import require_checkout

ROOT = require_checkout()


@pytest.fixture(scope="module")
def tools() -> Iterator[tuple[ModuleType, ModuleType]]:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import by_name
        import local_index

        yield local_index, by_name
    finally:
        sys.path.remove(str(ROOT / "tools"))


def wheel(folder: Path, version: str) -> Path:
    """A real (tiny) wheel of a project named harnessweaver: pip reads its metadata."""
    path = folder / f"harnessweaver-{version}-py3-none-any.whl"
    info = f"harnessweaver-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: harnessweaver\nVersion: {version}\n"
        )
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    return path


def test_pip_downloads_by_name_from_the_index_with_its_hash(
    tools: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    local_index, _ = tools
    old, new = wheel(tmp_path, "9.9.8"), wheel(tmp_path, "9.9.9")
    root = local_index.build_index({"full": [old, new], "only-old": [old]}, tmp_path / "index")
    with local_index.serve(root) as base:
        assert base.startswith("http://127.0.0.1:")
        page = urllib.request.urlopen(f"{base}full/simple/harnessweaver/").read().decode()
        digest = hashlib.sha256(new.read_bytes()).hexdigest()
        assert f"{new.name}#sha256={digest}" in page
        view = urllib.request.urlopen(f"{base}only-old/simple/harnessweaver/").read().decode()
        assert old.name in view and new.name not in view
        for index, chosen in (("full", new), ("only-old", old)):
            out = tmp_path / f"got-{index}"
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                       "--disable-pip-version-check", "--index-url", f"{base}{index}/simple/",
                       "--dest", str(out), "harnessweaver"]  # fmt: skip
            subprocess.run(command, check=True, capture_output=True, timeout=120)
            assert [path.name for path in out.iterdir()] == [chosen.name]
            assert (out / chosen.name).read_bytes() == chosen.read_bytes()


def test_the_by_name_arguments(tools: tuple[ModuleType, ModuleType]) -> None:
    _, by_name = tools
    parser = argparse.ArgumentParser()
    by_name.by_name_arguments(parser)
    assert by_name.by_name_of(parser.parse_args([])) is None
    with pytest.raises(SystemExit, match="need --index"):
        by_name.by_name_of(parser.parse_args(["--extra", "langchain"]))
    given = by_name.by_name_of(
        parser.parse_args(["--index", "http://127.0.0.1:1/simple/", "--plain-impls", "a,b"])
    )
    assert given.plain.impls == ("a", "b") and given.extra is None
    assert (
        by_name.version_of(Path("harnessweaver-0.1.0-cp311-cp311-manylinux_2_17_x86_64.whl"))
        == "0.1.0"
    )
    assert by_name.version_of(Path("harnessweaver-0.1.0.tar.gz")) == "0.1.0"
