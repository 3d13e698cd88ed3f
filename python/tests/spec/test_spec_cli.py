"""``harnessweaver hooks``: the chains of a spec as text, JSON and a mermaid flowchart, and the
spec's problems on stderr with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from spec_support import plugged, write

import harnessweaver as hw
from harnessweaver.cli import EXIT_ERROR, EXIT_OK, main

SPEC = """
middleware:
  - {use: acme.guard}
  - {use: acme.refund_cap, id: cap, max_usd: 500}
tasks:
  extract:
    guardrails:
      tool.before: [{use: acme.watcher, id: pii}]
    validation:
      rules: [{use: acme.refund_cap, id: small_cap, max_usd: 50}]
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return write(tmp_path, plugged(SPEC))


def hooks(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["hooks", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_text_lists_every_hook_point_in_run_order(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = hooks(capsys, str(spec), "--task", "extract")
    assert (status, err) == (EXIT_OK, "")
    assert out.startswith("chains of harness.yaml (task: extract, env: none), each in run order\n")
    section = out.split("tool.before  (inbound, outermost first)\n")[1].split("\n\n")[0]
    rows = [line.split() for line in section.splitlines()]
    assert rows[0][:3] == ["#", "middleware", "use"]
    assert [row[:2] for row in rows[1:]] == [
        ["1", "acme.guard"],
        ["2", "cap"],
        ["3", "pii"],  # named as the trace names them, not by their labels (issue 32)
        ["4", "small_cap"],
    ]
    names = [entry.name for entry in hw.load(spec, task="extract").chains()["tool.before"]]
    assert [row[1] for row in rows[1:]] == names
    assert rows[1] == [
        "1", "acme.guard", "acme.guard", "app", "closed", "2s", "app", "harness.yaml:3",
    ]  # fmt: skip
    assert rows[3][2:] == ["acme.watcher", "task", "open", "-", "task", "harness.yaml:8"]
    assert "model.after  (outbound, innermost first)\n  (none)\n" in out
    assert out.count("(none)") == 7


def test_json_for_tools(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = hooks(capsys, str(spec), "--task", "extract", "--format", "json")
    document = json.loads(out)
    assert status == EXIT_OK
    assert (document["spec"], document["task"], document["env"]) == (str(spec), "extract", None)
    assert [h["hook"] for h in document["hooks"]] == [
        "task.start", "step.start", "model.before", "model.after",
        "tool.before", "tool.after", "step.end", "task.end",
    ]  # fmt: skip
    assert [h["direction"] for h in document["hooks"]][2:4] == ["inbound", "outbound"]
    tool_before = document["hooks"][4]["chain"]
    assert tool_before[2] == {
        "name": "pii",
        "label": "guardrails.tool.before[pii]",
        "use": "acme.watcher",
        "band": "task",
        "fail_mode": "open",
        "timeout": None,
        "layer": "task",
        "file": "harness.yaml",
        "line": 8,
    }
    assert tool_before[0]["timeout"] == 2.0


def test_mermaid_draws_the_onion(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = hooks(capsys, str(spec), "--task", "extract", "--format", "mermaid")
    assert status == EXIT_OK
    assert out.startswith("flowchart LR\n")
    assert '    subgraph tool_before["tool.before: inbound, outermost first"]\n' in out
    assert '        tool_before_3["pii<br/>task, open"]\n' in out
    assert "        tool_before_1 --> tool_before_2 --> tool_before_3 --> tool_before_4\n" in out
    assert "    tool_before_4 --> tool_op((tool call)) --> tool_after_1\n" in out
    assert '        tool_after_1["(none)"]\n' in out
    assert out.count("subgraph ") == 8 and out.count("    end\n") == 8


def test_problems_go_to_stderr_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, plugged("middleware:\n  - {use: acme.refund_cap, max_usdd: 5}\n"))
    status, out, err = hooks(capsys, str(bad), "--task", "extract")
    assert (status, out) == (EXIT_ERROR, "")
    assert err == (
        "harness.yaml: tasks: unknown task 'extract': the spec has no tasks (spec)\n"
        "harness.yaml:3: middleware[0] (acme.refund_cap): invalid settings: max_usdd: unknown "
        "setting (did you mean max_usd?); max_usd: Field required (settings)\n"
    )


def test_org_profiles_and_env_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "org", "middleware: [{use: acme.tracer, id: org_trace}]\n", "acme/base.yaml")
    spec = write(
        tmp_path,
        plugged("profiles: [org://acme/base]\nenvs: {dev: {middleware: [{use: acme.guard}]}}\n"),
    )
    status, out, _ = hooks(
        capsys,
        str(spec),
        "--env",
        "dev",
        "--org-profiles",
        str(tmp_path / "org"),
        "--format",
        "json",
    )
    assert status == EXIT_OK
    chain = json.loads(out)["hooks"][4]["chain"]
    assert [(e["name"], e["layer"], e["file"]) for e in chain] == [
        ("org_trace", "org_profile", "org/acme/base.yaml"),
        ("acme.guard", "env", "harness.yaml"),
    ]


def test_the_cli_module_loads_the_spec_machinery_only_when_hooks_runs() -> None:
    code = (
        "import sys, harnessweaver.cli; "
        "assert 'harnessweaver.spec' not in sys.modules and 'yaml' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
