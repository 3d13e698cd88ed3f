"""The official MCP conformance kit against a conformant server, bare and through
``harnessweaver mcp``, side by side.

The kit (``@modelcontextprotocol/conformance``, pinned in package.json) runs its server
scenarios against a URL. This starts ``conformant_server.py`` (the SDK's ``MCPServer`` over
Streamable HTTP) and ``harnessweaver mcp --spec conformance.yaml --upstream <it> --listen
127.0.0.1:<port>`` in front of it, then runs every scenario the kit has for each protocol
revision the SDK speaks (``--suite all --spec-version R``), against the server and against the
proxy at once. It prints scenario | revision | bare | through the proxy, writes the results as
JSON (``--out``), and exits 1 when a scenario that passes bare does not pass through the proxy,
or when no scenario ran at all.

    python run_kit.py --out .nox/mcp/tmp/conformance       # node 22 or later on PATH
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mcp_parts import HERE, free_port, harnessweaver, node_modules_bin, python_server, serving

__all__ = ["Scenario", "compare", "main", "read_results"]

REVISIONS = ("2025-11-25", "2026-07-28")
"""The protocol revisions the SDK speaks: the stateful handshake and the stateless one."""
KIT_TIMEOUT = 300
"""Seconds one run of the kit may take (it takes about ten against a local server)."""
_RESULT_DIR = re.compile(r"^server-(?P<name>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


@dataclass(frozen=True)
class Scenario:
    """One scenario's outcome in one run: passed when none of its checks failed."""

    name: str
    passed: bool
    checks: int
    failures: list[str] = field(default_factory=list)


def read_results(folder: Path) -> dict[str, Scenario]:
    """The scenarios of one run of the kit, from the ``checks.json`` of each scenario folder
    it wrote (``server-<scenario>-<timestamp>``)."""
    found: dict[str, Scenario] = {}
    for checks_file in sorted(folder.glob("server-*/checks.json")):
        match = _RESULT_DIR.match(checks_file.parent.name)
        if match is None:
            continue
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        failures = [
            f"{check.get('id')}: {check.get('errorMessage') or check.get('description')}"
            for check in checks
            if check.get("status") == "FAILURE"
        ]
        name = match["name"]
        found[name] = Scenario(name, not failures, len(checks), failures)
    return found


def run_kit(url: str, revision: str, out: Path) -> tuple[dict[str, Scenario], str]:
    """Every scenario of the kit for ``revision`` against ``url``; what it wrote, and its
    output (the kit exits 1 when a scenario fails: that is read from the results)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [
        str(node_modules_bin("conformance")), "server", "--url", url, "--suite", "all",
        "--spec-version", revision, "--output-dir", str(out),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=out, capture_output=True, text=True, timeout=KIT_TIMEOUT, check=False
    )
    return read_results(out), done.stdout + done.stderr


def compare(
    bare: dict[str, Scenario], proxied: dict[str, Scenario]
) -> tuple[list[list[str]], list[str]]:
    """Table rows (scenario, bare, through the proxy) and the regressions: scenarios that
    pass bare and fail, or are missing, through the proxy."""
    rows, regressions = [], []
    for name in sorted(bare.keys() | proxied.keys()):
        left, right = bare.get(name), proxied.get(name)
        rows.append([name, _cell(left), _cell(right)])
        if left is not None and left.passed and (right is None or not right.passed):
            regressions.append(name)
    return rows, regressions


def _cell(scenario: Scenario | None) -> str:
    if scenario is None:
        return "not run"
    return "pass" if scenario.passed else f"FAIL ({len(scenario.failures)}/{scenario.checks})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for the kit's results and the JSON")
    parser.add_argument("--spec", type=Path, default=HERE / "conformance.yaml")
    args = parser.parse_args()
    out = (args.out or Path(tempfile.mkdtemp(prefix="hw-mcp-kit-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    upstream_port, proxy_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{upstream_port}/mcp"
    proxy = [
        harnessweaver(), "mcp", "--spec", str(args.spec.resolve()), "--upstream", upstream,
        "--listen", f"127.0.0.1:{proxy_port}",
    ]  # fmt: skip
    server = python_server("conformant_server.py", upstream_port)
    legs = [(r, kind) for r in REVISIONS for kind in ("bare", "proxied")]
    with (
        serving(server, upstream_port, cwd=HERE, log=out / "upstream.log"),
        serving(proxy, proxy_port, cwd=HERE, log=out / "proxy.log"),
        ThreadPoolExecutor(max_workers=2) as pool,
    ):
        urls = {"bare": upstream, "proxied": f"http://127.0.0.1:{proxy_port}/mcp"}
        runs = {
            (r, kind): pool.submit(run_kit, urls[kind], r, out / f"{kind}-{r}") for r, kind in legs
        }
        results = {leg: run.result() for leg, run in runs.items()}
    return report(results, out)


def report(results: dict[tuple[str, str], tuple[dict[str, Scenario], str]], out: Path) -> int:
    """Prints the table, writes the JSON; 1 when nothing ran or a scenario regressed."""
    table: list[list[str]] = []
    regressions: list[str] = []
    summary: dict[str, object] = {}
    for revision in REVISIONS:
        bare, proxied = results[(revision, "bare")][0], results[(revision, "proxied")][0]
        rows, failed = compare(bare, proxied)
        table += [[row[0], revision, *row[1:]] for row in rows]
        for name in failed:
            said = "; ".join(proxied[name].failures) if name in proxied else "not run"
            regressions.append(f"{name} ({revision}) through the proxy: {said}")
        summary[revision] = {
            "bare": {name: asdict(s) for name, s in bare.items()},
            "proxied": {name: asdict(s) for name, s in proxied.items()},
            "regressions": failed,
        }
    header = ["scenario", "revision", "bare", "through harnessweaver mcp"]
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *table]:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    (out / "mcp-conformance.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    print(f"\nresults: {out / 'mcp-conformance.json'}")
    if not any(found for (_, kind), (found, _) in results.items() if kind == "bare"):
        for (revision, kind), (_, said) in results.items():
            print(f"--- the kit, {kind}, {revision}:\n{said[-3000:]}")
        print("the conformance kit ran no scenario", file=sys.stderr)
        return 1
    if regressions:
        print("\n".join(regressions), file=sys.stderr)
        print(f"{len(regressions)} scenarios pass bare but not through the proxy", file=sys.stderr)
        return 1
    bare_passed = sum(1 for row in table if row[2] == "pass")
    print(f"all {bare_passed} scenario runs that pass bare pass through the proxy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
