"""What is installed is the whole package, with one version everywhere; the release workflows
parse and build for the CPython versions the package declares (docs/packaging.md)."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from checkout import CHECKOUT, PACKAGE, needs_compiled_core

import harnessweaver as hw

SEMVER = re.compile(r"^(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.(\d+))?$")


def pep440(semver: str) -> str:
    """The PEP 440 version maturin writes for a Cargo version (``1.2.0-rc.1`` -> ``1.2.0rc1``)."""
    match = SEMVER.match(semver)
    assert match is not None, f"{semver!r} is not MAJOR.MINOR.PATCH[-alpha|beta|rc.N]"
    release, pre, number = match.groups()
    return release + ({"alpha": "a", "beta": "b", "rc": "rc"}[pre] + number if pre else "")


def checkout() -> Path:
    if CHECKOUT is None:
        pytest.skip("needs the source checkout (set HARNESSWEAVER_CHECKOUT)")
    return CHECKOUT


def test_the_package_ships_its_types_and_data() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_core.pyi").is_file()
    profiles = {path.name for path in (PACKAGE / "profiles").glob("*.yaml")}
    assert {"rag.yaml", "safe-tools.yaml"} <= profiles


def test_every_file_of_the_package_is_installed() -> None:
    """Compared with the source: every module, stub and data file (the compiled module and
    caches aside) is in the package under test."""
    source = checkout() / "python" / "harnessweaver"

    def files(root: Path) -> set[str]:
        return {
            path.relative_to(root).as_posix()
            for path in root.rglob("*")
            if path.is_file()
            and "__pycache__" not in path.parts
            and path.suffix not in (".so", ".pyd", ".pyc")
        }

    assert files(source) <= files(PACKAGE)


def test_the_version_is_the_installed_distributions() -> None:
    assert hw.__version__ == importlib.metadata.version("harnessweaver")
    from harnessweaver import builtins

    assert builtins.plugin.version == hw.__version__


@needs_compiled_core
def test_the_compiled_core_has_the_same_version() -> None:
    core = importlib.import_module("harnessweaver._core")
    assert pep440(core.__version__) == hw.__version__


def test_every_copy_of_the_version_is_the_cargo_workspaces() -> None:
    """Cargo.toml's ``[workspace.package] version`` is the one place the version is set;
    ``nox -s version`` copies it to the npm package (docs/packaging.md, "One version")."""
    root = checkout()
    version = tomllib.loads((root / "Cargo.toml").read_text())["workspace"]["package"]["version"]
    lock = tomllib.loads((root / "Cargo.lock").read_text())
    ts = root / "ts-runner"
    package_json = json.loads((ts / "package.json").read_text())
    package_lock = json.loads((ts / "package-lock.json").read_text())
    constant = re.search(
        r'^export const VERSION = "(.*)";$', (ts / "src" / "index.ts").read_text(), re.M
    )
    copies = {
        **{
            f"Cargo.lock {p['name']}": p["version"]
            for p in lock["package"]
            if p["name"].startswith("harnessweaver") and "source" not in p
        },
        "package.json": package_json["version"],
        "package-lock.json": package_lock["version"],
        "package-lock.json packages['']": package_lock["packages"][""]["version"],
        "index.ts VERSION": constant.group(1) if constant else None,
    }
    assert len(copies) == 7  # three crates (core, binding, testee), four npm copies
    assert copies == dict.fromkeys(copies, version)
    assert pep440(version) == hw.__version__, "rebuild: the installed package is another version"


def _workflow(name: str) -> dict[Any, Any]:
    path = checkout() / ".github" / "workflows" / name
    workflow: dict[Any, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return workflow


def _supported_pythons() -> list[str]:
    pyproject = tomllib.loads((checkout() / "pyproject.toml").read_text())
    prefix = "Programming Language :: Python :: "
    return [
        c.removeprefix(prefix)
        for c in pyproject["project"]["classifiers"]
        if re.fullmatch(re.escape(prefix) + r"3\.\d+", c)
    ]


@pytest.mark.parametrize("name", ["release.yml", "ci.yml"])
def test_a_workflow_parses_and_pins_its_actions_to_major_versions(name: str) -> None:
    workflow = _workflow(name)
    assert workflow["jobs"] and True in workflow  # YAML 1.1 reads the key `on` as True
    uses = [
        step["uses"]
        for job in workflow["jobs"].values()
        for step in job.get("steps", [])
        if "uses" in step
    ]
    assert uses
    for action in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@(release/)?v\d+", action), action


def test_the_release_builds_and_tests_every_supported_python_and_publishes_only_tags() -> None:
    supported = _supported_pythons()
    assert supported == ["3.11", "3.12", "3.13", "3.14"]
    pyproject = tomllib.loads((checkout() / "pyproject.toml").read_text())
    assert pyproject["project"]["requires-python"] == f">={supported[0]}"
    workflow = _workflow("release.yml")
    assert workflow["env"]["PYTHONS"].split() == supported
    every = [*supported, *workflow["env"]["FREE_THREADED"].split()]
    jobs = workflow["jobs"]
    setup = next(
        s for s in jobs["wheels"]["steps"] if s.get("uses", "").startswith("actions/setup-python")
    )
    assert sorted(setup["with"]["python-version"].split()) == sorted(every)
    assert jobs["test-wheels"]["strategy"]["matrix"]["python"] == every
    built = {p["name"] for p in jobs["wheels"]["strategy"]["matrix"]["platform"]}
    tested = {p["name"] for p in jobs["test-wheels"]["strategy"]["matrix"]["platform"]}
    assert built == tested
    assert {
        "manylinux-x86_64",
        "manylinux-aarch64",
        "musllinux-x86_64",
        "musllinux-aarch64",
    } <= built
    for publish in ("pypi", "npm"):
        assert "startsWith(github.ref, 'refs/tags/v')" in jobs[publish]["if"]
        assert jobs[publish]["permissions"]["id-token"] == "write"
    assert set(jobs["pypi"]["needs"]) == {
        "version",
        "check",
        "test-wheels",
        "test-sdist",
        "test-pure",
        "test-npm",
    }


def test_the_sdist_ships_the_security_policy() -> None:
    """SECURITY.md (reporting a vulnerability, what middleware is trusted with) is in every
    sdist, like the README."""
    root = checkout()
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert {"path": "SECURITY.md", "format": "sdist"} in config["tool"]["maturin"]["include"]
    assert "security advisories" in (root / "SECURITY.md").read_text(encoding="utf-8")


MIT_HEADER = "MIT License\n\nCopyright (c) 2026 harnessweaver maintainers\n"


def test_the_installed_distribution_carries_the_license() -> None:
    """PEP 639: the wheel (and what the sdist builds) has LICENSE in .dist-info/licenses/ and
    names it in its metadata, with the license expression (``pyproject.toml``'s license-files).
    Checked on whatever is installed: a maturin develop build, a wheel, an sdist's build."""
    distribution = importlib.metadata.distribution("harnessweaver")
    assert distribution.metadata["License-Expression"] == "MIT"
    assert distribution.metadata.get_all("License-File") == ["LICENSE"]
    licenses = [path for path in distribution.files or () if path.name == "LICENSE"]
    assert [path.parent.name for path in licenses] == ["licenses"], licenses
    assert licenses[0].read_text(encoding="utf-8").startswith(MIT_HEADER)


def test_the_repository_and_every_package_declare_the_mit_license() -> None:
    """One LICENSE, the MIT text, at the root (the sdist's) and in ts-runner (npm packs only
    its own directory: a copy, byte for byte, not a symlink); every manifest says MIT and
    names the repository (never example.invalid)."""
    root = checkout()
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith(MIT_HEADER)
    assert "Permission is hereby granted, free of charge" in text
    copy = root / "ts-runner" / "LICENSE"
    assert not copy.is_symlink() and copy.read_bytes() == (root / "LICENSE").read_bytes()
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert (project["license"], project["license-files"]) == ("MIT", ["LICENSE"])
    repository = "https://github.com/harnessweaver/harnessweaver"
    assert project["urls"]["Repository"] == repository
    package = json.loads((root / "ts-runner" / "package.json").read_text(encoding="utf-8"))
    assert package["license"] == "MIT" and "LICENSE" in package["files"]
    assert package["repository"]["url"] == f"git+{repository}.git"
    cargo = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))
    workspace = cargo["workspace"]["package"]
    assert (workspace["license"], workspace["repository"]) == ("MIT", repository)
    for crate in sorted((root / "crates").glob("*/Cargo.toml")):
        manifest = tomllib.loads(crate.read_text(encoding="utf-8"))["package"]
        assert manifest["license"] == {"workspace": True}, crate
        assert manifest["repository"] == {"workspace": True}, crate


def test_the_project_files_every_project_has_are_there() -> None:
    """LICENSE, CHANGELOG.md (every released version of Cargo.toml's), CONTRIBUTING.md (how to
    set up, test and run the corpus), SECURITY.md (what middleware cannot be stopped from doing
    and how to report a vulnerability)."""
    root = checkout()
    version = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))["workspace"][
        "package"
    ]["version"]
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{version}]" in changelog or "## [Unreleased]" in changelog
    contributing = (root / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for section in ("## Set up", "## Cores", "## Conformance", "### Differential testing"):
        assert section in contributing, section
    security = (root / "SECURITY.md").read_text(encoding="utf-8")
    for promise in ("## Reporting a vulnerability", "can and cannot", "harnessweaver.debug"):
        assert promise in security, promise
