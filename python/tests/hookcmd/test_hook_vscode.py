"""VS Code's agent hooks: its recorded documents, each outcome as its decision, failing
closed with exit 2 (its blocking error; any other exit is only a warning)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_cases import doc, hooks_seen, recorded, run
from hookcmd_support import PENDING, filed

from harnessweaver.hookcmd.config import snippet
from harnessweaver.hookcmd.vscode import VSCODE_EVENTS

AGENT = "vscode"


def test_every_event_of_the_table_is_recorded() -> None:
    assert recorded(AGENT) == sorted(VSCODE_EVENTS)


@pytest.mark.parametrize("name", recorded(AGENT))
def test_each_event_reaches_its_hook_point(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "seen.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    hook = VSCODE_EVENTS[name]
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    assert hooks_seen(record) == ([] if hook is None else [hook])


def _pre(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


STOP = {"continue": False, "stopReason": "scripted escalation"}
REFUSED = "scripted refusal (scripted)"
REWROTE = "harnessweaver rewrote this tool call's input; approve the rewritten call"

CASES: list[tuple[str, str, str, Any]] = [
    (
        "PreToolUse",
        "tool.before",
        "block",
        _pre(permissionDecision="deny", permissionDecisionReason=REFUSED),
    ),
    (
        "PreToolUse",
        "tool.before",
        "suspend",
        _pre(
            permissionDecision="ask",
            permissionDecisionReason="a person must approve this" + PENDING,
        ),
    ),
    (
        "PreToolUse",
        "tool.before",
        "escalate",
        {**_pre(permissionDecision="deny", permissionDecisionReason="scripted escalation"), **STOP},
    ),
    (
        "PreToolUse",
        "tool.before",
        "modify",
        _pre(
            permissionDecision="ask",
            permissionDecisionReason=REWROTE,
            updatedInput={
                "command": "echo safe",
                "explanation": "List files",
                "isBackground": False,
            },
        ),
    ),
    ("PostToolUse", "tool.after", "block", {"decision": "block", "reason": REFUSED}),
    (
        "PostToolUse",
        "tool.after",
        "escalate",
        {"decision": "block", "reason": "scripted escalation", **STOP},
    ),
    ("UserPromptSubmit", "step.start", "block", {"continue": False, "stopReason": REFUSED}),
    (
        "Stop",
        "step.end",
        "retry",
        {
            "decision": "block",
            "reason": "scripted retry: do better",
            "hookSpecificOutput": {
                "hookEventName": "Stop",
                "decision": "block",
                "reason": "scripted retry: do better",
            },
        },
    ),
    ("Stop", "step.end", "escalate", STOP),
    ("SessionStart", "task.start", "block", {"continue": False, "stopReason": REFUSED}),
]


@pytest.mark.parametrize(("name", "hook", "outcome", "answer"), CASES)
def test_outcome_as_vscodes_decision(
    name: str, hook: str, outcome: str, answer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", hook)
    monkeypatch.setenv("HW_TEST_OUTCOME", outcome)
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    assert (ran.code, filed(ran.answer), ran.stderr) == (0, answer, "")


def test_a_rewritten_prompt_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "step.start")
    monkeypatch.setenv("HW_TEST_OUTCOME", "modify")
    ran = run(AGENT, doc(AGENT, "UserPromptSubmit"), tmp_path)
    assert ran.answer["continue"] is False
    assert "which VS Code cannot apply here" in ran.answer["stopReason"]


MALFORMED: list[tuple[str, dict[str, Any] | bytes, str]] = [
    ("not JSON", b"", "stdin is not a JSON document"),
    (
        "no session",
        {"hook_event_name": "PreToolUse", "tool_name": "run_in_terminal"},
        "'session_id'",
    ),
    ("tool_input not an object", {**doc(AGENT, "PreToolUse"), "tool_input": ["rm"]}, "tool_input"),
    (
        "no tool_response",
        {k: v for k, v in doc(AGENT, "PostToolUse").items() if k != "tool_response"},
        "tool_response",
    ),
]


@pytest.mark.parametrize(("what", "data", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_fails_closed_with_exit_2(
    what: str, data: dict[str, Any] | bytes, field: str, tmp_path: Path
) -> None:
    ran = run(AGENT, data, tmp_path)
    assert (ran.code, ran.stdout) == (2, "")
    assert field in ran.stderr and "(failing closed)" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


def test_print_config_has_no_version_and_no_matchers() -> None:
    config = snippet(AGENT, "/abs/harness.yaml", None, None)
    assert set(config) == {"hooks"}
    assert set(config["hooks"]) == {n for n, h in VSCODE_EVENTS.items() if h is not None}
    assert config["hooks"]["PreToolUse"] == [
        {
            "type": "command",
            "command": "harnessweaver hook --agent vscode --spec /abs/harness.yaml",
            "timeout": 30,
        }
    ]
