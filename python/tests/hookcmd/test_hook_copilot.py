"""GitHub Copilot CLI: its recorded documents, each outcome as its decision, and failing
closed with exit 0 + deny (Copilot CLI logs and skips a hook that exits non-zero)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_cases import doc, hooks_seen, recorded, run
from hookcmd_support import PENDING, SCRIPTED, command, filed, run_process, warm_helper

from harnessweaver.hookcmd.agents import AGENTS, parse
from harnessweaver.hookcmd.copilot import COPILOT_EVENTS, fail
from harnessweaver.hookcmd.translate import build_event
from harnessweaver.hookcmd.warm import closed

AGENT = "copilot"


def test_every_event_of_the_table_is_recorded() -> None:
    assert recorded(AGENT) == sorted(
        name for name in COPILOT_EVENTS if name != "Notification"
    )  # Notification only comes in the camelCase shape, which is not wired


@pytest.mark.parametrize("name", recorded(AGENT))
def test_each_event_reaches_its_hook_point(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "seen.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    hook = COPILOT_EVENTS[name]
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    assert hooks_seen(record) == ([] if hook is None else [hook])


def _both(**fields: Any) -> dict[str, Any]:
    """The top-level shape and its hookSpecificOutput twin (updatedInput for modifiedArgs)."""
    specific = {"hookEventName": "PreToolUse", **fields}
    if "modifiedArgs" in specific:
        specific["updatedInput"] = specific.pop("modifiedArgs")
    return {**fields, "hookSpecificOutput": specific}


DENY = _both(permissionDecision="deny", permissionDecisionReason="scripted refusal (scripted)")

# (event, hook, outcome) -> (exit status, stdout document, stderr)
CASES: list[tuple[str, str, str, int, Any, str]] = [
    ("PreToolUse", "tool.before", "block", 0, DENY, ""),
    (
        "PreToolUse",
        "tool.before",
        "suspend",
        0,
        _both(
            permissionDecision="deny",
            permissionDecisionReason="harnessweaver: approval required: a person must approve this"
            + PENDING,
        ),
        "",
    ),
    (
        "PreToolUse",
        "tool.before",
        "escalate",
        0,
        _both(permissionDecision="deny", permissionDecisionReason="scripted escalation"),
        "",
    ),
    (
        "PreToolUse",
        "tool.before",
        "modify",
        0,
        _both(modifiedArgs={"command": "echo safe", "description": "List files"}),
        "",
    ),
    (
        "PostToolUseFailure",
        "tool.after",
        "block",
        2,
        None,
        "harnessweaver: scripted refusal (scripted)\n",
    ),
    (
        "Stop",
        "step.end",
        "retry",
        0,
        {"decision": "block", "reason": "scripted retry: do better"},
        "",
    ),
    ("Stop", "step.end", "escalate", 0, None, "harnessweaver: scripted escalation\n"),
    (
        "UserPromptSubmit",
        "step.start",
        "block",
        0,
        None,
        "harnessweaver: scripted refusal (scripted)\n",
    ),
    ("PostToolUse", "tool.after", "block", 0, None, "harnessweaver: scripted refusal (scripted)\n"),
]


@pytest.mark.parametrize(("name", "hook", "outcome", "code", "answer", "stderr"), CASES)
def test_outcome_as_copilots_decision(
    name: str,
    hook: str,
    outcome: str,
    code: int,
    answer: Any,
    stderr: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", hook)
    monkeypatch.setenv("HW_TEST_OUTCOME", outcome)
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    assert (ran.code, filed(ran.answer), ran.stderr) == (code, answer, stderr)


def test_a_refused_session_start_refuses_its_tool_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI reads no answer at SessionStart: the refusal lands on the tool calls."""
    monkeypatch.setenv("HW_TEST_HOOK", "task.start")
    monkeypatch.setenv("HW_TEST_OUTCOME", "block")
    assert run(AGENT, doc(AGENT, "SessionStart"), tmp_path).code == 0
    monkeypatch.delenv("HW_TEST_OUTCOME")
    ran = run(AGENT, doc(AGENT, "PreToolUse"), tmp_path)
    assert ran.answer == DENY


@pytest.mark.parametrize(("kind", "is_error"), [("success", False), ("failure", True)])
def test_post_tool_use_reads_tool_result(kind: str, is_error: bool) -> None:
    """``tool_result`` (Copilot's name) is the result; a result_type other than success is an
    error the tool-failure guard can count."""
    data = doc(AGENT, "PostToolUse", tool_result={"result_type": kind, "text_result_for_llm": "x"})
    request = parse(AGENTS[AGENT], json.dumps(data).encode())
    event = build_event(request, 1, None)
    assert event.result.is_error is is_error


def test_tool_input_as_a_json_string_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "tool.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", "modify")
    data = doc(AGENT, "PreToolUse", tool_input=json.dumps({"command": "ls"}))
    ran = run(AGENT, data, tmp_path)
    assert ran.answer == _both(modifiedArgs={"command": "echo safe"})


MALFORMED: list[tuple[str, dict[str, Any] | bytes, str]] = [
    ("not JSON", b"{not json", "stdin is not a JSON document"),
    ("no session", {"hook_event_name": "PreToolUse", "tool_name": "bash"}, "'session_id'"),
    (
        "tool_input not an object",
        {**doc(AGENT, "PreToolUse"), "tool_input": "rm -rf /"},
        "tool_input",
    ),
    ("no tool_result", {**doc(AGENT, "PostToolUse"), "tool_result": None}, "tool_response"),
]


@pytest.mark.parametrize(("what", "data", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_denies_with_exit_zero(
    what: str, data: dict[str, Any] | bytes, field: str, tmp_path: Path
) -> None:
    """Exit 2 would be "logged and skipped" by Copilot CLI: the deny is on stdout."""
    ran = run(AGENT, data, tmp_path)
    assert ran.code == 0
    assert ran.answer["permissionDecision"] == "deny"
    assert field in ran.answer["permissionDecisionReason"]
    assert "(failing closed)" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


def test_a_spec_that_does_not_load_denies_as_a_process(tmp_path: Path) -> None:
    ran = run_process(AGENT, doc(AGENT, "PreToolUse"), tmp_path / "missing.yaml", tmp_path / "s.db")
    assert ran.code == 0
    assert ran.answer["permissionDecision"] == "deny"
    assert "does not load" in ran.answer["permissionDecisionReason"]


def test_a_warm_helper_failure_is_the_same_deny() -> None:
    """The warm client, which imports nothing of the protocol, answers as ``copilot.fail``."""
    line = "harnessweaver hook: error: the helper gave no answer (failing closed)"
    answer = closed(AGENT, line + "\n")
    reply = fail(line)
    assert (answer.code, json.loads(answer.stdout), answer.stderr) == (
        reply.exit_code,
        reply.stdout,
        line + "\n",
    )


def test_a_bad_warm_setting_denies(tmp_path: Path) -> None:
    env = {"HARNESSWEAVER_HOOK_WARM": "maybe"}
    ran = run_process(AGENT, doc(AGENT, "PreToolUse"), SCRIPTED, tmp_path / "s.db", env)
    assert ran.code == 0
    assert ran.answer["permissionDecision"] == "deny"


def test_a_warm_child_that_dies_after_taking_the_event_denies(tmp_path: Path) -> None:
    """The warm client's own failure, in Copilot's terms: exit 0 and a deny."""
    (tmp_path / "plugin_dies.py").write_text(
        "import os\nimport harnessweaver as hw\n\n"
        "@hw.middleware(hooks=['tool.before'], fail_mode='closed')\n"
        "async def dies(event, ctx):\n"
        "    os._exit(0)\n\n"
        "plugin = hw.Plugin(namespace='dies', version='1', middleware=[dies])\n"
    )
    spec = tmp_path / "harness.yaml"
    spec.write_text("plugins:\n  local: [plugin_dies]\nmiddleware:\n  - {use: dies.dies}\n")
    with warm_helper() as env:
        done = subprocess.run(
            command(AGENT, spec, tmp_path / "st.db"),
            input=json.dumps(doc(AGENT, "PreToolUse")).encode(),
            capture_output=True,
            env={**os.environ, **env},
            timeout=120,
            check=False,
        )
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["permissionDecision"] == "deny"
    assert "gave no answer (failing closed)" in answer["permissionDecisionReason"]
