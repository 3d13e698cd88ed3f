"""``harnessweaver mcp`` as a process: what it refuses to start with, and one stdio session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inproc import records, spec_file
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import harnessweaver

pytestmark = pytest.mark.anyio

UPSTREAM = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("upstream")

@server.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text.\"\"\"
    with open(__file__ + ".calls", "a", encoding="utf-8") as calls:
        calls.write(text + "\\n")
    return "echo: " + text

server.run()
"""


def _env() -> dict[str, str]:
    root = str(Path(harnessweaver.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root if not path else f"{root}{os.pathsep}{path}"}


def _mcp(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harnessweaver.cli", "mcp", *args]
    return subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=120)


def test_a_spec_that_does_not_load_serves_nobody(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: nowhere.nothing}\n", encoding="utf-8")
    done = _mcp("--spec", str(spec), "--", sys.executable, "-c", "pass")
    assert done.returncode == 2
    assert "harnessweaver mcp: error: the harness spec does not load" in done.stderr
    assert "harness.yaml:2: middleware[0] (nowhere.nothing): unknown middleware" in done.stderr


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((), "no upstream: give '-- CMD ARG...'"),
        (("--upstream", "http://127.0.0.1:9/mcp"), "--upstream and --listen go together"),
        (
            ("--upstream", "http://127.0.0.1:9/mcp", "--listen", "nowhere"),
            "--listen takes HOST:PORT",
        ),
        (("--call-timeout", "0", "--", "x"), "--call-timeout must be a number of seconds above 0"),
        (("--print-config", "--", "x"), "--print-config needs --client"),
    ],
)
def test_arguments_that_cannot_work_are_refused(
    tmp_path: Path, args: tuple[str, ...], problem: str
) -> None:
    done = _mcp("--spec", str(spec_file(tmp_path)), *args)
    assert done.returncode == 2
    assert problem in done.stderr


def test_an_upstream_that_cannot_start_serves_nobody(tmp_path: Path) -> None:
    done = _mcp("--spec", str(spec_file(tmp_path)), "--", str(tmp_path / "no-such-server"))
    assert done.returncode == 2
    assert "harnessweaver mcp: error: the upstream MCP server cannot be reached" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_stdio_session_blocks_and_traces(tmp_path: Path, mode: str) -> None:
    upstream = tmp_path / "upstream.py"
    upstream.write_text(UPSTREAM, encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    argv = ["-m", "harnessweaver.cli", "mcp", "--spec", str(spec_file(tmp_path))]
    argv += ["--trace", str(trace), "--", sys.executable, str(upstream)]
    proxy = StdioServerParameters(command=sys.executable, args=argv, env=_env())
    results: list[Any] = []
    async with Client(proxy, mode=mode) as client:  # type: ignore[arg-type]
        for said in ("hello", "rm -rf /", "quiet"):
            results.append(await client.call_tool("echo", {"text": said}))
    assert [(r.is_error, r.content[0].text) for r in results] == [
        (False, "echo: hello"),
        (True, "harnessweaver refused the call: destructive command (code: destructive)"),
        (False, "echo: QUIET"),
    ]
    assert (tmp_path / "upstream.py.calls").read_text(encoding="utf-8") == "hello\nQUIET\n"
    hooks = [r for r in records(trace) if r["kind"] == "hook" and r["hook"] == "tool.before"]
    assert [(r["outcome"], r.get("code")) for r in hooks] == [
        ("continue", None),
        ("block", "destructive"),
        ("continue", None),
    ]
    runs = {r["run"] for r in records(trace)}
    assert len(runs) == 1
    assert re.fullmatch(r"stdio-[0-9a-f]{32}", runs.pop())
