"""A spec item's ``match:`` (I22): it narrows where a middleware applies, ``harnessweaver
hooks`` shows it, and ``--tool NAME`` shows the chain one tool's calls run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spec_support import plugged, problems, write

import harnessweaver as hw
from harnessweaver.cli import EXIT_ERROR, EXIT_OK, main

SPEC = """
middleware:
  - {use: acme.guard, match: {tool: [refund_*, search]}}
  - {use: acme.watcher, id: refunds_only, match: {tool: refund_*}}
  - {use: acme.refund_cap, id: cap, max_usd: 500}
"""


def hooks(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["hooks", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_spec_match_is_registered_and_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(tmp_path, plugged(SPEC))
    harness = hw.load(spec)
    assert harness.entry("acme.guard").declaration.match == {"tool": ("refund_*", "search")}
    status, out, err = hooks(capsys, str(spec))
    assert (status, err) == (EXIT_OK, "")
    section = out.split("tool.before  (inbound, outermost first)\n")[1].split("\n\n")[0]
    header, *rows = section.splitlines()
    assert header.split()[6:9] == ["timeout", "match", "layer"]  # "fail mode" is two words
    assert "tool: refund_*, search" in rows[0]
    assert "tool: refund_*" in rows[1]


def test_tool_option_shows_the_chain_of_one_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(tmp_path, plugged(SPEC))
    status, out, _ = hooks(capsys, str(spec), "--tool", "search", "--format", "json")
    assert status == EXIT_OK
    document = json.loads(out)
    assert document["tool"] == "search"
    chain = {h["hook"]: [e["label"] for e in h["chain"]] for h in document["hooks"]}
    assert chain["tool.before"] == ["acme.guard", "cap"]
    assert document["hooks"][4]["chain"][0]["match"] == {"tool": ["refund_*", "search"]}
    status, out, _ = hooks(capsys, str(spec), "--tool", "refund_payment")
    assert "(task: none, env: none, tool: refund_payment)" in out
    section = out.split("tool.before  (inbound, outermost first)\n")[1].split("\n\n")[0]
    assert [line.split()[1] for line in section.splitlines()[1:]] == [
        "acme.guard",
        "refunds_only",
        "cap",
    ]


def test_a_bad_spec_matcher_is_a_problem_at_its_line(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged(
            """
            middleware:
              - {use: acme.guard, match: {tool: refund_*}}
              - {use: acme.watcher, id: w, match: {tools: x}}
            """
        ),
    )
    found = problems(spec)
    assert [p.kind for p in found] == ["unknown_match_key"]
    assert found[0].line == 4  # the plugins line comes first
    status = main(["hooks", str(spec)])
    assert status == EXIT_ERROR


def test_model_option_shows_the_chain_of_one_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(
        tmp_path,
        """
        middleware:
          - use: harnessweaver.redact_pii
            id: pii_gpt
            hooks: [model.before]
            match: {model: gpt-*}
          - {use: harnessweaver.max_messages, id: cap, limit: 50}
        """,
    )
    chains = {}
    for model in ("gpt-5", "claude-4", None):
        args = ["--format", "json"] + ([] if model is None else ["--model", model])
        status, out, err = hooks(capsys, str(spec), *args)
        assert (status, err) == (EXIT_OK, "")
        document = json.loads(out)
        assert document.get("model") == model and "tool" not in document
        chains[model] = {h["hook"]: [e["label"] for e in h["chain"]] for h in document["hooks"]}
    assert chains["gpt-5"]["model.before"] == ["pii_gpt", "cap"]
    assert chains["claude-4"]["model.before"] == ["cap"]  # the matcher does not match it
    assert chains[None]["model.before"] == ["pii_gpt", "cap"]  # no model: every middleware
    status, out, _ = hooks(capsys, str(spec), "--model", "claude-4", "--tool", "search")
    assert "(task: none, env: none, tool: search, model: claude-4)" in out
