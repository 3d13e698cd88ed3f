"""Cursor: its recorded documents, each outcome as its decision, failing closed with exit 2
(Cursor's deny), and --print-config's failClosed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_cases import doc, hooks_seen, recorded, run
from hookcmd_support import PENDING, filed

from harnessweaver.hookcmd.agents import AGENTS, parse
from harnessweaver.hookcmd.config import snippet
from harnessweaver.hookcmd.cursor import CURSOR_EVENTS
from harnessweaver.hookcmd.translate import build_event

AGENT = "cursor"


def test_recorded_events_are_the_tables() -> None:
    assert set(recorded(AGENT)) <= set(CURSOR_EVENTS)
    wired = {name for name, hook in CURSOR_EVENTS.items() if hook is not None}
    assert wired <= set(recorded(AGENT))


@pytest.mark.parametrize("name", recorded(AGENT))
def test_each_event_reaches_its_hook_point(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "seen.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    hook = CURSOR_EVENTS[name]
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    assert hooks_seen(record) == ([] if hook is None else [hook])


def test_the_session_is_the_conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "seen.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    run(AGENT, doc(AGENT, "preToolUse", session="conv-9"), tmp_path)
    assert json.loads(record.read_text())["run"] == "conv-9"


DENY = {
    "permission": "deny",
    "user_message": "scripted refusal (scripted)",
    "agent_message": "scripted refusal (scripted)",
}
ASKED = "harnessweaver: approval required: a person must approve this" + PENDING
RESULT_REFUSED = (
    "harnessweaver refused this tool result: scripted refusal (scripted). Do not rely on it."
)

CASES: list[tuple[str, str, str, Any]] = [
    ("preToolUse", "tool.before", "block", DENY),
    (
        "preToolUse",
        "tool.before",
        "suspend",
        {"permission": "deny", "user_message": ASKED, "agent_message": ASKED},
    ),
    (
        "preToolUse",
        "tool.before",
        "modify",
        {
            "permission": "allow",
            "updated_input": {"command": "echo safe", "working_directory": "/home/dev/demo"},
        },
    ),
    (
        "beforeSubmitPrompt",
        "step.start",
        "block",
        {"continue": False, "user_message": "scripted refusal (scripted)"},
    ),
    (
        "beforeSubmitPrompt",
        "step.start",
        "escalate",
        {"continue": False, "user_message": "scripted escalation"},
    ),
    ("postToolUse", "tool.after", "block", {"additional_context": RESULT_REFUSED}),
    ("postToolUseFailure", "tool.after", "block", {"additional_context": RESULT_REFUSED}),
    ("stop", "step.end", "retry", {"followup_message": "scripted retry: do better"}),
    ("stop", "step.end", "escalate", None),
    (
        "sessionStart",
        "task.start",
        "block",
        {"continue": False, "user_message": "harnessweaver: scripted refusal (scripted)"},
    ),
]


@pytest.mark.parametrize(("name", "hook", "outcome", "answer"), CASES)
def test_outcome_as_cursors_decision(
    name: str, hook: str, outcome: str, answer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", hook)
    monkeypatch.setenv("HW_TEST_OUTCOME", outcome)
    ran = run(AGENT, doc(AGENT, name), tmp_path)
    assert (ran.code, filed(ran.answer), ran.stderr) == (0, answer, "")


def test_a_rewritten_result_cannot_be_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_HOOK", "tool.after")
    monkeypatch.setenv("HW_TEST_OUTCOME", "modify")
    ran = run(AGENT, doc(AGENT, "postToolUse"), tmp_path)
    assert "which Cursor cannot apply here" in ran.answer["additional_context"]


@pytest.mark.parametrize(
    ("name", "is_error"), [("postToolUse", False), ("postToolUseFailure", True)]
)
def test_tool_results_and_failures(name: str, is_error: bool) -> None:
    request = parse(AGENTS[AGENT], json.dumps(doc(AGENT, name)).encode())
    event = build_event(request, 1, None)
    assert event.result.is_error is is_error
    if not is_error:  # tool_output is a JSON string: read as the object it holds
        assert event.result.output == {"output": "total 0\n", "exitCode": 0}


MALFORMED: list[tuple[str, dict[str, Any] | bytes, str]] = [
    ("not JSON", b"\xff\xfe", "stdin is not a JSON document"),
    ("no conversation", {"hook_event_name": "preToolUse", "tool_name": "Shell"}, "'session_id'"),
    (
        "tool_input not an object",
        {**doc(AGENT, "preToolUse"), "tool_input": "rm -rf /"},
        "tool_input",
    ),
    ("no prompt", {**doc(AGENT, "beforeSubmitPrompt"), "prompt": None}, "'prompt'"),
]


@pytest.mark.parametrize(("what", "data", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_fails_closed_with_exit_2(
    what: str, data: dict[str, Any] | bytes, field: str, tmp_path: Path
) -> None:
    """Exit 2 is Cursor's deny (and failClosed blocks any other failure)."""
    ran = run(AGENT, data, tmp_path)
    assert (ran.code, ran.stdout) == (2, "")
    assert field in ran.stderr and "(failing closed)" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


def test_print_config_is_fail_closed_and_wires_only_hook_points() -> None:
    config = snippet(AGENT, "/abs/harness.yaml", None, None)
    assert config["version"] == 1
    wired = {name for name, hook in CURSOR_EVENTS.items() if hook is not None}
    assert set(config["hooks"]) == wired
    for handlers in config["hooks"].values():
        assert handlers == [
            {
                "command": "harnessweaver hook --agent cursor --spec /abs/harness.yaml",
                "timeout": 30,
                "failClosed": True,
            }
        ]
