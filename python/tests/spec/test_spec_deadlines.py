"""``deadlines:`` in a harness spec (I26): the harness's and a task's (which may only tighten
it), validated with file, item, line and rule, and shown by ``harnessweaver hooks``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spec_support import plugged, problems, write

import harnessweaver as hw
from harnessweaver.cli import EXIT_OK, main

SPEC = """
middleware:
  - {use: acme.guard}
deadlines:
  tool.before: 2s
  model.before: 30s
tasks:
  refund:
    deadlines:
      tool.before: 500ms
      model.before: 1m
  chat: {}
"""


def test_the_harness_deadlines_apply_and_a_task_may_only_tighten_them(tmp_path: Path) -> None:
    spec = write(tmp_path, plugged(SPEC))
    plain = hw.load(spec)
    assert plain.bus.deadline("tool.before") == 2.0
    assert plain.bus.deadline("model.before") == 30.0
    assert plain.bus.deadline("tool.after") is None
    refund = hw.load(spec, task="refund")
    assert refund.bus.deadline("tool.before") == 0.5  # earlier than the harness's: applies
    assert refund.bus.deadline("model.before") == 30.0  # later: the harness's stands
    assert hw.load(spec, task="chat").bus.deadline("tool.before") == 2.0


def test_bad_deadlines_name_file_item_line_and_rule(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        plugged("""
        deadlines:
          tool.before: 5 s
          tool.during: 1s
        tasks:
          other:
            deadlines:
              model.after: 0
        """),
    )
    found = problems(spec)  # the unselected task's deadlines are checked too
    assert [(p.item, p.kind, p.rule) for p in found] == [
        ("deadlines.tool.before", "invalid_deadline", "I26"),
        ("deadlines.tool.during", "unknown_hook", "ruling-2"),
        ("tasks.other.deadlines.model.after", "invalid_deadline", "I26"),
    ]
    lines = spec.read_text(encoding="utf-8").splitlines()
    texts = ["tool.before: 5 s", "tool.during", "model.after: 0"]
    for problem, text in zip(found, texts, strict=True):
        assert problem.file == "harness.yaml"
        assert problem.line is not None and text in lines[problem.line - 1]
    assert "'5 s'" in found[0].message and found[0].message.endswith("(I26)")


def test_deadlines_must_be_a_mapping(tmp_path: Path) -> None:
    spec = write(tmp_path, plugged("deadlines: [2s]\n"))
    [problem] = problems(spec)
    assert (problem.item, problem.kind) == ("deadlines", "not_a_mapping")


def test_hooks_shows_the_deadlines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path, plugged(SPEC))
    assert main(["hooks", str(spec), "--task", "refund"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "tool.before  (inbound, outermost first, deadline 500ms)\n" in out
    assert "model.before  (inbound, outermost first, deadline 30s)\n" in out
    assert "tool.after  (outbound, innermost first)\n" in out
    assert main(["hooks", str(spec), "--format", "json"]) == EXIT_OK
    document = json.loads(capsys.readouterr().out)
    by_hook = {h["hook"]: h for h in document["hooks"]}
    assert by_hook["tool.before"]["deadline"] == 2.0
    assert "deadline" not in by_hook["tool.after"]
    assert main(["hooks", str(spec), "--format", "mermaid"]) == EXIT_OK
    assert 'subgraph tool_before["tool.before: inbound, outermost first, deadline 2s"]' in (
        capsys.readouterr().out
    )
