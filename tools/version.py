"""The version number: set in one place, the Cargo workspace, and copied from there.

``[workspace.package] version`` in ``Cargo.toml`` is the version. The crates inherit it, maturin
writes it into the wheel and sdist metadata (a semver pre-release ``1.2.0-rc.1`` becomes the
PEP 440 ``1.2.0rc1``), and the compiled module reports it as ``_core.__version__``; the
Python package reads ``harnessweaver.__version__`` from its metadata. The npm package cannot
read Cargo.toml, so this script copies the version into ``ts-runner/package.json``, its lock
file and the ``VERSION`` constant in ``ts-runner/src/index.ts``; ``test_packaging.py`` fails
when a copy differs.

    python tools/version.py                 # print the version; exit 1 if a copy differs
    python tools/version.py --set 0.2.0     # set it (Cargo.toml, Cargo.lock) and copy it
    python tools/version.py --sync          # copy the Cargo version to the npm package
    python tools/version.py --tag v0.2.0    # exit 1 unless a release tag names this version
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CARGO_TOML = ROOT / "Cargo.toml"
CARGO_LOCK = ROOT / "Cargo.lock"
PACKAGE_JSON = ROOT / "ts-runner" / "package.json"
PACKAGE_LOCK = ROOT / "ts-runner" / "package-lock.json"
INDEX_TS = ROOT / "ts-runner" / "src" / "index.ts"

SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$")
"""The versions this project uses: semver, with at most an alpha, beta or rc pre-release
(what both semver and PEP 440 can say)."""
TS_CONSTANT = re.compile(r'^export const VERSION = "([^"]*)";$', re.MULTILINE)
WORKSPACE_VERSION = re.compile(r'(\[workspace\.package\]\n(?:[^\[\n].*\n)*?version = ")([^"]*)(")')
_PEP440_PRE = {"alpha": "a", "beta": "b", "rc": "rc"}


def check_semver(version: str) -> None:
    if not SEMVER.match(version):
        raise SystemExit(
            f"version {version!r}: use MAJOR.MINOR.PATCH, optionally with -alpha.N, -beta.N "
            "or -rc.N"
        )


def pep440(version: str) -> str:
    """The PEP 440 form maturin gives a semver version: ``1.2.0-rc.1`` -> ``1.2.0rc1``."""
    match = SEMVER.match(version)
    if match is None:
        raise ValueError(f"not a version this project uses: {version!r}")
    major, minor, patch, pre, number = match.groups()
    return f"{major}.{minor}.{patch}" + (f"{_PEP440_PRE[pre]}{number}" if pre else "")


def cargo_version() -> str:
    """The version: ``[workspace.package] version`` in Cargo.toml."""
    version: str = tomllib.loads(CARGO_TOML.read_text(encoding="utf-8"))["workspace"]["package"][
        "version"
    ]
    return version


def copies() -> dict[str, str]:
    """Every copy of the version, by where it is."""
    found: dict[str, str] = {}
    lock = tomllib.loads(CARGO_LOCK.read_text(encoding="utf-8"))
    for package in lock["package"]:
        if package["name"].startswith("harnessweaver") and "source" not in package:
            found[f"Cargo.lock ({package['name']})"] = package["version"]
    package_json = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    found["ts-runner/package.json"] = package_json["version"]
    package_lock = json.loads(PACKAGE_LOCK.read_text(encoding="utf-8"))
    found["ts-runner/package-lock.json"] = package_lock["version"]
    found["ts-runner/package-lock.json (packages[''])"] = package_lock["packages"][""]["version"]
    constant = TS_CONSTANT.search(INDEX_TS.read_text(encoding="utf-8"))
    found["ts-runner/src/index.ts (VERSION)"] = constant.group(1) if constant else "<missing>"
    return found


def _write_json(path: Path, data: Any) -> None:
    # npm's own layout: two-space indent, a final newline.
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def set_cargo(version: str) -> None:
    text = CARGO_TOML.read_text(encoding="utf-8")
    text, count = WORKSPACE_VERSION.subn(rf"\g<1>{version}\g<3>", text, count=1)
    if count != 1:
        raise SystemExit("Cargo.toml: no version in [workspace.package]")
    CARGO_TOML.write_text(text, encoding="utf-8")
    # The workspace's own crates in the lock file (what `cargo build` would rewrite).
    lock = CARGO_LOCK.read_text(encoding="utf-8")
    lock = re.sub(
        r'(\[\[package\]\]\nname = "harnessweaver[^"]*"\nversion = ")[^"]*("\n(?!source))',
        rf"\g<1>{version}\g<2>",
        lock,
    )
    CARGO_LOCK.write_text(lock, encoding="utf-8")


def sync(version: str) -> None:
    package_json = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    package_json["version"] = version
    _write_json(PACKAGE_JSON, package_json)
    package_lock = json.loads(PACKAGE_LOCK.read_text(encoding="utf-8"))
    package_lock["version"] = version
    package_lock["packages"][""]["version"] = version
    _write_json(PACKAGE_LOCK, package_lock)
    index = INDEX_TS.read_text(encoding="utf-8")
    index, count = TS_CONSTANT.subn(f'export const VERSION = "{version}";', index)
    if count != 1:
        raise SystemExit(f"{INDEX_TS}: no `export const VERSION = ...;` line")
    INDEX_TS.write_text(index, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--set", metavar="VERSION", help="set the version and copy it")
    action.add_argument("--sync", action="store_true", help="copy the version to npm's files")
    action.add_argument("--tag", help="check that a release tag (vVERSION) names the version")
    args = parser.parse_args(argv)
    if args.set:
        check_semver(args.set)
        set_cargo(args.set)
    version = cargo_version()
    check_semver(version)
    if args.set or args.sync:
        sync(version)
    if args.tag is not None and args.tag.removeprefix("refs/tags/") != f"v{version}":
        print(f"tag {args.tag} does not name the version in Cargo.toml, {version}")
        return 1
    differ = {where: found for where, found in copies().items() if found != version}
    for where, found in differ.items():
        print(f"{where}: {found}, not {version} (run `nox -s version` to copy it)")
    print(f"version {version} (Python: {pep440(version)})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
