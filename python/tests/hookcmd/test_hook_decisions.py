"""Each outcome of the bus, at each hook point, as each agent's documented decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import PENDING, SCRIPTED, event, filed, run_in_process, run_process

DENY_CC = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "scripted refusal (scripted)",
    }
}
STOP = {"continue": False, "stopReason": "scripted escalation"}

# (agent, event, hook, outcome) -> the answer on stdout (all exit 0)
CASES: list[tuple[str, str, str, str, Any]] = [
    ("claude-code", "PreToolUse", "tool.before", "block", DENY_CC),
    (
        "claude-code",
        "PreToolUse",
        "tool.before",
        "suspend",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "a person must approve this" + PENDING,
            }
        },
    ),
    (
        "claude-code",
        "PreToolUse",
        "tool.before",
        "escalate",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "scripted escalation",
            },
            **STOP,
        },
    ),
    (
        "claude-code",
        "PreToolUse",
        "tool.before",
        "retry",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "scripted retry: do better",
            }
        },
    ),
    (
        "claude-code",
        "PreToolUse",
        "tool.before",
        "modify",
        {
            "hookSpecificOutput": {  # alone: the user's permission settings judge it
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": "echo safe", "description": "List files"},
            }
        },
    ),
    (
        "claude-code",
        "PostToolUse",
        "tool.after",
        "block",
        {"decision": "block", "reason": "scripted refusal (scripted)"},
    ),
    (
        "claude-code",
        "UserPromptSubmit",
        "step.start",
        "suspend",
        {"decision": "block", "reason": "a person must approve this"},
    ),
    (
        "claude-code",
        "Stop",
        "step.end",
        "retry",
        {"decision": "block", "reason": "scripted retry: do better"},
    ),
    ("claude-code", "Stop", "step.end", "escalate", STOP),
    ("claude-code", "Stop", "step.end", "modify", None),
    (
        "claude-code",
        "SessionStart",
        "task.start",
        "block",
        {"continue": False, "stopReason": "scripted refusal (scripted)"},
    ),
    ("claude-code", "SessionEnd", "task.end", "block", None),
    (
        "codex",
        "PreToolUse",
        "tool.before",
        "suspend",  # Codex has no ask at PreToolUse: deny, never run unchecked
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "a person must approve this" + PENDING,
            }
        },
    ),
    (
        "codex",
        "PreToolUse",
        "tool.before",
        "modify",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "echo safe"},
            }
        },
    ),
    (
        "codex",
        "PreToolUse",
        "tool.before",
        "escalate",  # Codex rejects continue:false at PreToolUse
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "scripted escalation",
            }
        },
    ),
    (
        "codex",
        "PostToolUse",
        "tool.after",
        "modify",
        {
            "decision": "block",
            "reason": "harnessweaver: the harness rewrote this tool result, which Codex cannot "
            "apply here; do not rely on the result as shown",
        },
    ),
    (
        "codex",
        "Stop",
        "step.end",
        "retry",
        {"decision": "block", "reason": "scripted retry: do better"},
    ),
    (
        "gemini",
        "BeforeTool",
        "tool.before",
        "block",
        {"decision": "deny", "reason": "scripted refusal (scripted)"},
    ),
    (
        "gemini",
        "BeforeTool",
        "tool.before",
        "suspend",
        {"decision": "deny", "reason": "a person must approve this" + PENDING},
    ),
    (
        "gemini",
        "BeforeTool",
        "tool.before",
        "modify",
        {
            "hookSpecificOutput": {
                "tool_input": {"command": "echo safe", "description": "List files"}
            }
        },
    ),
    (
        "gemini",
        "AfterTool",
        "tool.after",
        "modify",  # Gemini 0.61 ignores tool_output: the result is withheld instead
        {
            "decision": "deny",
            "reason": "harnessweaver: the harness rewrote this tool result, which Gemini CLI "
            "cannot apply here; the result is withheld",
        },
    ),
    (
        "gemini",
        "BeforeModel",
        "model.before",
        "modify",
        {
            "hookSpecificOutput": {
                "llm_request": {
                    "messages": [
                        {"role": "system", "content": "You are a coding agent."},
                        {"role": "user", "content": "[redacted]"},
                    ]
                }
            }
        },
    ),
    (
        "gemini",
        "AfterModel",
        "model.after",
        "modify",
        {
            "hookSpecificOutput": {
                "llm_response": {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": ["[redacted]"]},
                            "finishReason": "STOP",
                        }
                    ]
                }
            }
        },
    ),
    (
        "gemini",
        "BeforeModel",
        "model.before",
        "block",
        {"decision": "deny", "reason": "scripted refusal (scripted)"},
    ),
    (
        "gemini",
        "AfterAgent",
        "step.end",
        "retry",
        {"decision": "deny", "reason": "scripted retry: do better"},
    ),
    (
        "gemini",
        "AfterAgent",
        "step.end",
        "block",
        {"continue": False, "stopReason": "scripted refusal (scripted)"},
    ),
    (
        "gemini",
        "BeforeAgent",
        "step.start",
        "escalate",
        {"decision": "deny", "reason": "scripted escalation", **STOP},
    ),
    (
        "gemini",
        "SessionStart",
        "task.start",
        "block",
        {"systemMessage": "harnessweaver: scripted refusal (scripted)"},
    ),
]


@pytest.mark.parametrize(("agent", "name", "hook", "outcome", "answer"), CASES)
def test_outcome_as_the_agents_decision(
    agent: str,
    name: str,
    hook: str,
    outcome: str,
    answer: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", hook)
    monkeypatch.setenv("HW_TEST_OUTCOME", outcome)
    ran = run_in_process(agent, event(agent, name), SCRIPTED, tmp_path / "st.db")
    assert (ran.code, filed(ran.answer), ran.stderr) == (0, answer, "")


def test_continue_answers_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "tool.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", "continue")
    ran = run_in_process(
        "claude-code", event("claude-code", "PreToolUse"), SCRIPTED, tmp_path / "s"
    )
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")


def test_gemini_cannot_drop_an_argument_so_the_call_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "tool.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", "modify")
    monkeypatch.setenv("HW_TEST_DROP", "1")
    # the description is the model's free text, given back: dir_path is what was removed
    arguments = {"command": "ls -la", "description": "List files", "dir_path": "src"}
    doc = event("gemini", "BeforeTool", tool_input=arguments)
    ran = run_in_process("gemini", doc, SCRIPTED, tmp_path / "st.db")
    assert ran.code == 0
    assert ran.answer["decision"] == "deny"
    assert "it removed dir_path)" in ran.answer["reason"]


def test_a_middleware_that_raises_fails_closed(tmp_path: Path) -> None:
    env = {"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "raise"}
    ran = run_process(
        "claude-code", event("claude-code", "PreToolUse"), SCRIPTED, tmp_path / "s", env
    )
    assert ran.code == 0
    assert ran.answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "scripted failure" not in ran.stdout + ran.stderr  # R9: never the message


@pytest.mark.parametrize(
    ("agent", "first", "later"),
    [
        ("claude-code", "SessionStart", "PreToolUse"),
        ("gemini", "SessionStart", "BeforeTool"),
        ("codex", "SessionStart", "UserPromptSubmit"),
    ],
)
def test_a_refused_session_refuses_its_later_events(
    agent: str, first: str, later: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "st.db"
    monkeypatch.setenv("HW_TEST_HOOK", "task.start")
    monkeypatch.setenv("HW_TEST_OUTCOME", "block")
    run_in_process(agent, event(agent, first, "s-refused"), SCRIPTED, state)
    monkeypatch.delenv("HW_TEST_OUTCOME")
    ran = run_in_process(agent, event(agent, later, "s-refused"), SCRIPTED, state)
    assert ran.code == 0
    assert "scripted refusal" in ran.stdout
    other = run_in_process(agent, event(agent, later, "s-other"), SCRIPTED, state)
    assert (other.code, other.stdout) == (0, "")


WARNED = "harnessweaver warnings: scripted: mind the budget; scripted: second"


@pytest.mark.parametrize(
    ("agent", "name", "outcome", "answer"),
    [
        (
            "claude-code",
            "PreToolUse",
            "warn",
            {"systemMessage": WARNED},
        ),
        (
            "claude-code",
            "PreToolUse",
            "block-warn",
            {**DENY_CC, "systemMessage": "harnessweaver warnings: scripted: logged for review"},
        ),
        (
            "gemini",
            "BeforeTool",
            "warn",
            {"systemMessage": WARNED},
        ),
        ("codex", "PreToolUse", "warn", None),  # no channel for them known: nothing shown
    ],
)
def test_warnings_are_shown_as_a_system_message(
    agent: str,
    name: str,
    outcome: str,
    answer: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "tool.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", outcome)
    ran = run_in_process(agent, event(agent, name), SCRIPTED, tmp_path / "st.db")
    assert ran.code == 0 and ran.stderr == ""
    assert (ran.answer if ran.stdout else None) == answer
