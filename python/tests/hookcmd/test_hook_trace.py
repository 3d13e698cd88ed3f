"""``harnessweaver hook --trace FILE``: each event's bus records appended as JSON Lines, with
the agent's session as the run id, the command's own refusals as hook records, concurrent
processes never interleaving, and a trace that cannot be written leaving the decision as it is."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import SCRIPTED, command, event, warm_helper

import harnessweaver as hw
from harnessweaver.hookcmd.command import HookOptions, main
from harnessweaver.hookcmd.trace import CODES


def _run(
    agent: str, doc: dict[str, Any], spec: Path, tmp: Path, trace: Path, **env: str
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options = HookOptions(agent=agent, spec=spec, state=tmp / "s.db", trace=trace)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        code = main(options, io.BytesIO(json.dumps(doc).encode()), out, err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def _records(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def test_a_blocked_call_is_traced_with_the_session_as_run(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    doc = event("claude-code", "PreToolUse", session="sess-42")
    code, _, err = _run("claude-code", doc, SCRIPTED, tmp_path, trace,
                        HW_TEST_HOOK="tool.before", HW_TEST_OUTCOME="block")  # fmt: skip
    assert (code, err) == (0, "")
    outcome, hook = _records(trace)
    assert outcome["kind"] == "outcome" and hook["kind"] == "hook"
    assert {r["run"] for r in (outcome, hook)} == {"sess-42"}
    assert outcome["middleware"] == "scripted"
    assert (outcome["outcome"], outcome["code"]) == ("block", "scripted")
    assert outcome["tool"] == doc["tool_name"]
    assert "scripted refusal" not in trace.read_text()  # codes, never reasons or messages


def test_events_are_appended_and_read_back_by_the_bus_reader(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    for name in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"):
        assert _run("claude-code", event("claude-code", name), SCRIPTED, tmp_path, trace)[0] == 0
    read = hw.Trace.read_jsonl(trace)
    hooks = [r["hook"] for r in read.records() if r["kind"] == "hook"]
    assert hooks == ["task.start", "step.start", "tool.before", "tool.after"]
    assert {r["run"] for r in read.records()} == {"session-1"}


def test_a_middleware_failure_is_traced_by_its_type(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    _run("gemini", event("gemini", "BeforeTool"), SCRIPTED, tmp_path, trace,
         HW_TEST_HOOK="tool.before", HW_TEST_OUTCOME="raise")  # fmt: skip
    failure = next(r for r in _records(trace) if r["kind"] == "failure")
    assert (failure["error"], failure["code"]) == ("RuntimeError", "middleware_error")
    assert "scripted failure" not in trace.read_text()  # R9
    hw.Trace.read_jsonl(trace)


def test_a_spec_that_does_not_load_is_traced_as_the_commands_refusal(tmp_path: Path) -> None:
    spec = tmp_path / "broken.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.no_such_guard}\n")
    trace = tmp_path / "trace.jsonl"
    code, _, _ = _run("codex", event("codex", "PreToolUse"), spec, tmp_path, trace)
    assert code == 2
    [record] = _records(trace)
    assert record == {
        "emit": 1,
        "hook": "tool.before",
        "run": "session-1",
        "tool": event("codex", "PreToolUse")["tool_name"],
        "kind": "hook",
        "outcome": "block",
        "modified": False,
        "code": CODES["spec"],
    }
    hw.Trace.read_jsonl(trace)


def test_a_refused_session_is_traced_without_an_emit(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    _run("claude-code", event("claude-code", "SessionStart"), SCRIPTED, tmp_path, trace,
         HW_TEST_HOOK="task.start", HW_TEST_OUTCOME="block")  # fmt: skip
    _run("claude-code", event("claude-code", "PreToolUse"), SCRIPTED, tmp_path, trace)
    last = _records(trace)[-1]
    assert (last["hook"], last["outcome"], last["code"]) == (
        "tool.before", "block", CODES["session"],
    )  # fmt: skip
    hw.Trace.read_jsonl(trace)


def test_an_event_without_a_hook_point_leaves_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    assert (
        _run("claude-code", event("claude-code", "Notification"), SCRIPTED, tmp_path, trace)[0] == 0
    )
    assert not trace.exists()


@pytest.mark.parametrize("outcome", ["continue", "block"])
def test_a_trace_that_cannot_be_written_leaves_the_decision(outcome: str, tmp_path: Path) -> None:
    """The call was judged: an unwritable trace neither blocks an allowed call nor lets a
    refused one through; a line on stderr says it failed."""
    doc = event("claude-code", "PreToolUse")
    untraced = _run("claude-code", doc, SCRIPTED, tmp_path, tmp_path / "ok.jsonl",
                    HW_TEST_HOOK="tool.before", HW_TEST_OUTCOME=outcome)  # fmt: skip
    code, out, err = _run("claude-code", doc, SCRIPTED, tmp_path / "other", tmp_path,
                          HW_TEST_HOOK="tool.before", HW_TEST_OUTCOME=outcome)  # fmt: skip
    assert (code, out) == untraced[:2]
    [line] = err.splitlines()
    assert (
        "the trace" in line and "was not written: IsADirectoryError (the decision stands)" in line
    )


def test_concurrent_processes_append_whole_lines(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    doc = json.dumps(event("claude-code", "PreToolUse")).encode()
    env = {**os.environ, "HARNESSWEAVER_HOOK_WARM": "0"}
    args = [*command("claude-code", SCRIPTED, tmp_path / "s.db"), "--trace", str(trace)]
    procs = [
        subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
        for _ in range(6)
    ]
    for proc in procs:
        proc.communicate(doc, timeout=120)
        assert proc.returncode == 0
    records = hw.Trace.read_jsonl(trace).records()
    assert len(records) == 12  # one outcome and one hook record per process, none torn
    kinds = [r["kind"] for r in records]
    assert kinds == ["outcome", "hook"] * 6  # each event's lines stay together


def test_the_trace_option_reaches_the_warm_helper(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    doc = event("gemini", "BeforeTool", session="warm-1")
    with warm_helper() as env:
        args = [*command("gemini", SCRIPTED, tmp_path / "s.db"), "--trace", str(trace)]
        done = subprocess.run(args, input=json.dumps(doc).encode(), capture_output=True,
                              env={**os.environ, **env}, timeout=120, check=False)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, b"")
    assert {r["run"] for r in _records(trace)} == {"warm-1"}


def test_options_carry_the_trace_to_the_helper(tmp_path: Path) -> None:
    options = HookOptions(agent="codex", spec=Path("h.yaml"), trace=Path("t.jsonl"))
    back = HookOptions.from_json(json.loads(json.dumps(options.to_json())))
    assert back.trace == Path("t.jsonl").absolute()
    assert HookOptions.from_json(HookOptions(agent="codex", spec=Path("h")).to_json()).trace is None
