"""Test a built wheel or sdist as a user gets it: installed, not from the source tree.

For each artifact: a fresh virtual environment (``python -m venv``), the artifact installed
into it (a wheel with no Rust toolchain on ``PATH``; an sdist compiled from scratch, with a
fresh ``CARGO_TARGET_DIR``), the package's dependencies and the ``test`` dependency group from
the index, the test suite copied out of the checkout (so ``python/`` cannot be imported), then
``pytest`` once per core and ``harnessweaver conformance`` over the whole corpus the package
ships (``harnessweaver/corpus``, found with no ``HARNESSWEAVER_CORPUS``) against what was
installed. Used by ``nox -s installed`` and by the release workflow.

    python tools/installed.py dist/harnessweaver-0.1.0-cp311-cp311-manylinux*.whl
    python tools/installed.py --python python3.12 dist/*-cp312-*.whl
    python tools/installed.py dist/harnessweaver-0.1.0.tar.gz   # needs cargo
    python tools/installed.py --python python3.13 dist/         # the wheel pip picks from dist/

A ``py3-none-any`` wheel (the pure-Python fallback) is tested with the Python core only, and
must warn when imported without ``HARNESSWEAVER_CORE``. ``--smoke`` runs the test files of
``SMOKE`` instead of the whole suite (the corpus still runs whole). Nothing here needs more than the
standard library, so it runs under any supported CPython, in a container or on a CI runner.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from by_name import (
    ByName,
    by_name_arguments,
    by_name_of,
    check_extra,
    install_by_name,
    plain_conformance,
)

ROOT = Path(__file__).resolve().parents[1]
WINDOWS = os.name == "nt"
RUST_TOOLS = ("cargo", "rustc", "rustup")
# What the suite needs from the environment, and what must not leak into it.
DROPPED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "HARNESSWEAVER_CORE", "CARGO_TARGET_DIR")
SMOKE = (
    # The compiled module imports, is the core selected, and loads nothing it should not.
    "test_core_selection.py",
    "test_public_api.py",
    "test_lazy_import.py",
    "test_cli_version.py",
    # The package as installed: the whole package, one version, the shipped corpus.
    "test_packaging.py",
    "test_installed_corpus.py",
    # The binding against this CPython's C API: the awaitable emit (its am_send slot), object
    # lifetimes (the interner, reused correlations), the types it defines, and the event
    # loops it calls into (asyncio timers, trio cancel scopes, sniffio's thread-local).
    "test_emit.py",
    "test_bus.py",
    "test_outcomes.py",
    "test_events_immutable.py",
    "test_warnings.py",
    "test_interning.py",
    "test_correlation_reuse.py",
    "test_timeouts.py",
    "test_backends.py",
    "test_chain_deadline.py",
    # The hook command: every outcome as each agent's decision, failing closed, its settings
    # snippets, and what it imports per event.
    "hookcmd/test_hook_decisions.py",
    "hookcmd/test_hook_malformed.py",
    "hookcmd/test_hook_config.py",
    "hookcmd/test_hook_startup.py",
)
"""The smoke subset (``--smoke``), files of ``python/tests``: what can differ between two builds
of the same sources, for another CPython or compiled from the sdist. The rest of the suite
tests Python code and the core's rules, which the corpus and the full runs cover."""

ELSEWHERE = (
    # Files of ``python/tests`` the full run leaves out: each runs once, in its own nox session,
    # not against every artifact (they test no difference between builds). The MCP proxy under
    # hostile peers and under load (~66 s and ~60 s a run): ``nox -s mcp``. The state stores
    # against real Redis and PostgreSQL servers (which an artifact's machine may not have; CI
    # fails rather than skips them), and the durable approvals on those servers, across
    # processes and under kill -9 at 120 points (~1 min): ``nox -s state``. The hostile harness
    # specs and hostile Python values: ``nox -s fuzz`` runs them, 1,000 specs (here 300 a run)
    # and 400 values on each core (here 25). ``nox -s tests`` leaves them out too.
    "mcp/test_hostile_peers.py",
    "mcp/test_load.py",
    "state/test_redis.py",
    "state/test_postgres.py",
    "state/test_faults.py",
    "state/test_fleet.py",
    "state/test_fleet_property.py",
    "state/test_fleet_adapters.py",
    "state/test_fleet_mcp.py",
    "approvals/test_approvals_servers.py",
    "approvals/test_approvals_processes.py",
    "approvals/test_crash.py",
    "spec/test_spec_fuzz.py",
    "hostile",
)
"""What the full run (and ``nox -s tests``) leaves to ``nox -s mcp``, ``state`` and ``fuzz``."""


@dataclass(frozen=True)
class Artifact:
    path: Path
    kind: str  # "wheel", "pure" (the py3-none-any wheel), "sdist" or "dir"

    @property
    def cores(self) -> tuple[str, ...]:
        return ("python",) if self.kind == "pure" else ("rust", "python")

    @property
    def impls(self) -> tuple[str, ...]:
        return ("python-pure",) if self.kind == "pure" else ("python-rust", "python-pure")


def classify(path: Path) -> Artifact:
    if path.is_dir():
        return Artifact(path, "dir")
    if path.name.endswith(".tar.gz"):
        return Artifact(path, "sdist")
    if path.suffix == ".whl":
        return Artifact(path, "pure" if path.name.endswith("-py3-none-any.whl") else "wheel")
    raise SystemExit(f"{path}: not a wheel, an sdist or a directory of wheels")


def log(message: str) -> None:
    print(f"installed > {message}", flush=True)


def run(command: list[str], env: dict[str, str], cwd: Path, capture: bool = False) -> str:
    log(" ".join(command))
    done = subprocess.run(command, env=env, cwd=cwd, text=True, capture_output=capture)
    if done.returncode != 0:
        if capture:
            print(done.stdout, done.stderr, sep="\n", file=sys.stderr)
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}")
    return done.stdout if capture else ""


def without_rust(path: str) -> str:
    """``PATH`` without any directory that holds cargo, rustc or rustup."""
    keep = [
        entry
        for entry in path.split(os.pathsep)
        if entry and not any(shutil.which(tool, path=entry) for tool in RUST_TOOLS)
    ]
    return os.pathsep.join(keep)


def pytest_ini(suite: Path) -> None:
    """The project's pytest settings (``[tool.pytest.ini_options]``), for the copied suite:
    ``filterwarnings = error`` and strict markers hold there too."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    lines = ["[pytest]"]
    for key, value in options.items():
        if key == "testpaths":
            value = ["tests"]
        if isinstance(value, bool):
            value = "true" if value else "false"
        if isinstance(value, list):
            value = "\n" + "\n".join(f"    {item}" for item in value)
        lines.append(f"{key} = {value}")
    (suite / "pytest.ini").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_group() -> list[str]:
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    return [item for item in groups["test"] if isinstance(item, str)]


def check_one(
    artifact: Artifact,
    python: str,
    cores: list[str] | None,
    keep: bool,
    smoke: bool = False,
    by_name: ByName | None = None,
) -> None:
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="hw-installed-")).resolve()
    log(f"{artifact.path.name} ({artifact.kind}) with {python}, in {work}")
    venv = work / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if WINDOWS else "bin")
    vpython = str(bin_dir / ("python.exe" if WINDOWS else "python"))

    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    base_path = env.get("PATH", os.defpath)
    if artifact.kind == "sdist":
        # It must compile from scratch: a target directory of its own.
        env["CARGO_TARGET_DIR"] = str(work / "target")
        env["PATH"] = os.pathsep.join([str(bin_dir), base_path])
        if shutil.which("cargo", path=env["PATH"]) is None:
            raise SystemExit("the sdist needs cargo on PATH to build")
    else:
        env["PATH"] = os.pathsep.join([str(bin_dir), without_rust(base_path)])
        found = [tool for tool in RUST_TOOLS if shutil.which(tool, path=env["PATH"])]
        if found:
            raise SystemExit(f"{', '.join(found)} still on PATH")
        log("no Rust toolchain on PATH (cargo, rustc, rustup: not found)")
    env["VIRTUAL_ENV"] = str(venv)

    pip = [vpython, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "install", "--quiet", "--upgrade", "pip"], env, work)
    # harnessweaver itself from the artifact only; its dependencies from the index after.
    if by_name is not None:
        install_by_name(pip, artifact, by_name, env, work)
    elif artifact.kind == "dir":
        local = {key: value for key, value in env.items() if key != "PIP_FIND_LINKS"}
        command = [*pip, "install", "--no-index", "--find-links", str(artifact.path.resolve())]
        run([*command, "--only-binary=:all:", "--no-deps", "harnessweaver"], local, work)
    else:
        started_build = time.monotonic()
        run([*pip, "install", "--no-deps", str(artifact.path.resolve())], env, work)
        if artifact.kind == "sdist":
            log(f"built and installed from the sdist in {time.monotonic() - started_build:.0f} s")
    if by_name is not None and by_name.extra is not None:
        check_extra(vpython, pip, by_name.extra, env, work)
        log(f"harnessweaver[{by_name.extra}] by name: passed in {time.monotonic() - started:.0f} s")
        shutil.rmtree(work, ignore_errors=True)
        return
    if by_name is not None and by_name.plain is not None:
        plain_conformance(bin_dir, by_name.plain, env, work)
    requires = run(
        [
            vpython,
            "-c",
            "from importlib.metadata import requires\n"
            "print('\\n'.join(r for r in requires('harnessweaver') or () if 'extra ==' not in r))",
        ],
        env,
        work,
        capture=True,
    ).split()
    run([*pip, "install", "--quiet", *requires, *test_group()], env, work)
    run([*pip, "check"], env, work)

    # The suite, outside the checkout: `python/` is not importable from there.
    suite = work / "suite"
    shutil.copytree(
        ROOT / "python" / "tests",
        suite / "tests",
        ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", ".mypy_cache", "*.pyc"),
    )
    pytest_ini(suite)
    env["HARNESSWEAVER_CORPUS"] = str(ROOT / "conformance")
    env["HARNESSWEAVER_CHECKOUT"] = str(ROOT)

    probe = run(
        [
            vpython,
            "-c",
            "import json, sys, sysconfig, warnings\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import harnessweaver as hw\n"
            "print(json.dumps({'file': hw.__file__, 'core': hw.CORE, 'version': hw.__version__,\n"
            "    'site': [sysconfig.get_paths()[k] for k in ('purelib', 'platlib')],\n"
            "    'path': sys.path, 'warnings': [str(w.message) for w in caught]}))",
        ],
        env,
        suite,
        capture=True,
    )
    facts = json.loads(probe)
    package = Path(facts["file"]).resolve()
    sites = [Path(site).resolve() for site in facts["site"]]
    if not any(package.is_relative_to(site) for site in sites):
        raise SystemExit(f"harnessweaver imported from {package}, not the venv's site-packages")
    if str(ROOT / "python") in facts["path"]:
        raise SystemExit("the checkout's python/ is on sys.path")
    expected_core = "python" if artifact.kind == "pure" else "rust"
    if facts["core"] != expected_core:
        raise SystemExit(f"imported with the {facts['core']} core, expected {expected_core}")
    if artifact.kind == "pure" and not any("pure-Python core" in w for w in facts["warnings"]):
        raise SystemExit("the pure-Python wheel imported without the fallback warning")
    log(f"harnessweaver {facts['version']} from {package.parent} ({facts['core']} core)")

    tests = (
        [f"tests/{name}" for name in SMOKE]
        if smoke
        else [f"--ignore=tests/{name}" for name in ELSEWHERE]
    )
    if smoke:
        log(f"the smoke subset of the suite: {len(SMOKE)} files (tools/installed.py, SMOKE)")
    for core in [core for core in artifact.cores if cores is None or core in cores]:
        run(
            [vpython, "-m", "pytest", "-p", "no:cacheprovider", "-q", *tests],
            {**env, "HARNESSWEAVER_CORE": core},
            suite,
        )
    impls = [arg for impl in artifact.impls for arg in ("--impl", impl)]
    harnessweaver = str(bin_dir / ("harnessweaver.exe" if WINDOWS else "harnessweaver"))
    conformance = [harnessweaver, "conformance", *impls, "--require-identical"]
    # The corpus the package ships (harnessweaver/corpus), found as a user's run finds it: no
    # HARNESSWEAVER_CORPUS, outside the checkout.
    shipped = {key: value for key, value in env.items() if key != "HARNESSWEAVER_CORPUS"}
    run([*conformance, "--out", str(work / "results")], shipped, suite)

    log(f"{artifact.path.name}: passed in {time.monotonic() - started:.0f} s")
    if keep:
        log(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("artifacts", nargs="+", type=Path, help="wheels, sdists, directories")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to test on")
    parser.add_argument(
        "--core",
        dest="cores",
        choices=("rust", "python"),
        action="append",
        help="run pytest on this core only (repeatable; default: both, or python for the pure "
        "wheel); the corpus always runs on every core the artifact has",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="run the smoke subset of the suite (SMOKE) instead of the whole; the corpus still "
        "runs whole",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    by_name_arguments(parser)
    args = parser.parse_args(argv)
    by_name = by_name_of(args)
    for path in args.artifacts:
        try:
            check_one(classify(path), args.python, args.cores, args.keep, args.smoke, by_name)
        except SystemExit:
            log(f"{path.name}: FAILED (its hw-installed-* directory is kept for a look)")
            raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
