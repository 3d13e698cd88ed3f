"""Check built artifacts before anyone installs them: names, tags, contents, metadata.

For every wheel: the file name's tags are the ones in its ``WHEEL`` file; a platform wheel
holds exactly one compiled core, built for its own interpreter tag (no stale extension of
another Python picked up from the source tree), and a ``py3-none-any`` wheel holds none;
every file of ``python/harnessweaver`` (modules, ``_core.pyi``, ``py.typed``, the profiles)
is in it, byte for byte, and no tests are; ``RECORD`` matches; the metadata carries the
version of ``Cargo.toml``. For the sdist: what a build from scratch needs, and no tests.

    python tools/wheelcheck.py dist/            # everything in dist/
    python tools/wheelcheck.py dist/ --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64         # ... and the platform tags of every wheel
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import re
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

from version import cargo_version, pep440

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "harnessweaver"
EXTENSION = re.compile(r"^harnessweaver/_core\.(?P<suffix>[^/]*)\.(so|pyd)$")
SDIST_NEEDS = (
    "pyproject.toml",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "LICENSE",
    "crates/harnessweaver-core/Cargo.toml",
    "crates/harnessweaver-core/src/lib.rs",
    "crates/harnessweaver-py/Cargo.toml",
    "crates/harnessweaver-py/build.rs",
    "crates/harnessweaver-py/src/lib.rs",
    "python/harnessweaver/__init__.py",
)


class Problems(list[str]):
    def check(self, ok: bool, problem: str) -> None:
        if not ok:
            self.append(problem)


def source_files() -> dict[str, bytes]:
    """``python/harnessweaver`` as a wheel would hold it, without compiled modules."""
    return {
        "harnessweaver/" + path.relative_to(PACKAGE).as_posix(): path.read_bytes()
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix not in (".so", ".pyd", ".pyc")
    }


def expand_tags(tag_part: str) -> set[str]:
    python, abi, platform = tag_part.split("-")
    return {
        f"{p}-{a}-{x}"
        for p in python.split(".")
        for a in abi.split(".")
        for x in platform.split(".")
    }


def extension_fits(suffix: str, python: str, abi: str) -> bool:
    """Whether ``_core.<suffix>.so|pyd`` is the module of this interpreter tag."""
    if abi == "abi3":
        return suffix == "abi3" or suffix.startswith("abi3")
    version = python.removeprefix("cp")  # "311", and a free-threaded abi "cp314t"
    threaded = "t" if abi.endswith("t") else ""
    return suffix.startswith(f"cpython-{version}{threaded}-") or suffix.startswith(
        f"cp{version}{threaded}-"
    )


def check_wheel(path: Path, version: str, platforms: set[str]) -> tuple[Problems, str]:
    problems = Problems()
    name, file_version, *rest = path.name.removesuffix(".whl").split("-")
    tag_part = "-".join(rest)
    problems.check(name == "harnessweaver", f"distribution name {name!r}")
    problems.check(file_version == version, f"version {file_version}, Cargo.toml says {version}")
    dist_info = f"harnessweaver-{file_version}.dist-info"
    with zipfile.ZipFile(path) as wheel:
        names = [n for n in wheel.namelist() if not n.endswith("/")]
        contents = {n: wheel.read(n) for n in names}
    wheel_file = Parser().parsestr(contents[f"{dist_info}/WHEEL"].decode())
    declared = set(wheel_file.get_all("Tag") or [])
    problems.check(
        declared == expand_tags(tag_part), f"WHEEL tags {sorted(declared)} != name {tag_part}"
    )
    python, abi, platform = tag_part.split("-")
    pure = tag_part == "py3-none-any"
    extensions = [m for m in map(EXTENSION.match, names) if m]
    if pure:
        problems.check(not extensions, f"a pure wheel with a compiled core: {extensions}")
        problems.check(wheel_file["Root-Is-Purelib"] == "true", "pure wheel not purelib")
    else:
        problems.check(len(extensions) == 1, f"{len(extensions)} compiled cores: {extensions}")
        for match in extensions:
            problems.check(
                extension_fits(match["suffix"], python, abi),
                f"{match.group(0)} is not a module for {python}-{abi}",
            )
        if platforms:
            problems.check(
                set(platform.split(".")) == platforms,
                f"platform tags {platform}, expected {'.'.join(sorted(platforms))}",
            )
    for file, data in source_files().items():
        problems.check(contents.get(file) == data, f"{file} missing or not the source's")
    problems.check(
        not [n for n in names if "/tests/" in n or n.startswith("tests/")], "tests in the wheel"
    )
    license = contents.get(f"{dist_info}/licenses/LICENSE")
    problems.check(
        license == (ROOT / "LICENSE").read_bytes(),
        "LICENSE missing from .dist-info/licenses or not the repository's",
    )
    # RECORD: every file, with its hash and size.
    rows = list(csv.reader(io.StringIO(contents[f"{dist_info}/RECORD"].decode())))
    recorded = {row[0]: row for row in rows}
    problems.check(set(recorded) == set(names), "RECORD does not list exactly the files")
    for file, data in contents.items():
        row = recorded.get(file)
        if row is None or not row[1]:
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        problems.check(row[1] == f"sha256={digest}", f"RECORD hash of {file}")
    metadata = Parser().parsestr(contents[f"{dist_info}/METADATA"].decode())
    check_metadata(problems, metadata, version)
    entry_points = contents.get(f"{dist_info}/entry_points.txt", b"").decode()
    problems.check(
        re.search(r"^harnessweaver\s*=\s*harnessweaver\.cli:main$", entry_points, re.M) is not None,
        "no harnessweaver command",
    )
    core = "none (pure Python)" if pure else extensions[0].group(0) if extensions else "?"
    return problems, f"{len(names)} files, compiled core: {core}"


def check_metadata(problems: Problems, metadata: Message, version: str) -> None:
    get = metadata.get
    problems.check(get("Name") == "harnessweaver", f"Name {get('Name')}")
    problems.check(get("Version") == version, f"Version {get('Version')}")
    problems.check(get("Requires-Python") == ">=3.11", f"Requires-Python {get('Requires-Python')}")
    problems.check(get("License-Expression") == "MIT", "no License-Expression")
    problems.check(metadata.get_all("License-File") == ["LICENSE"], "no License-File: LICENSE")


def check_sdist(path: Path, version: str) -> tuple[Problems, str]:
    problems = Problems()
    prefix = f"harnessweaver-{version}/"
    problems.check(path.name == f"harnessweaver-{version}.tar.gz", f"sdist name {path.name}")
    with tarfile.open(path) as sdist:
        names = [m.name for m in sdist.getmembers() if m.isfile()]
        pkg_info = sdist.extractfile(prefix + "PKG-INFO")
        metadata = Parser().parsestr(pkg_info.read().decode()) if pkg_info else None
    relative = {n.removeprefix(prefix) for n in names}
    for needed in SDIST_NEEDS:
        problems.check(needed in relative, f"{needed} not in the sdist")
    for file in source_files():
        problems.check(f"python/{file}" in relative, f"python/{file} not in the sdist")
    problems.check(not [n for n in relative if n.startswith("python/tests/")], "tests in sdist")
    problems.check(
        not [n for n in relative if n.endswith((".so", ".pyd"))], "a compiled module in the sdist"
    )
    if metadata is None:
        problems.append("no PKG-INFO")
    else:
        check_metadata(problems, metadata, version)
    return problems, f"{len(names)} files"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, help="the directory of built artifacts")
    parser.add_argument(
        "--platform",
        action="append",
        default=[],
        help="the platform tags every platform wheel must carry (all of them, repeat)",
    )
    args = parser.parse_args(argv)
    version = pep440(cargo_version())
    artifacts = sorted(args.dist.glob("*.whl")) + sorted(args.dist.glob("*.tar.gz"))
    if not artifacts:
        print(f"nothing to check in {args.dist}")
        return 1
    failed = False
    for path in artifacts:
        if path.suffix == ".whl":
            problems, summary = check_wheel(path, version, set(args.platform))
        else:
            problems, summary = check_sdist(path, version)
        size = path.stat().st_size / 1024
        print(f"{'FAIL' if problems else 'ok  '} {path.name} ({size:.0f} KiB; {summary})")
        for problem in problems:
            print(f"     - {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
