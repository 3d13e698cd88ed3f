"""Every event kind of the three agents' hook schemas: the hook point it is emitted at (or
none), and the neutral answer when the harness lets everything through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookcmd_support import AGENT_NAMES, SCRIPTED, event, recorded, run_in_process, run_process

from harnessweaver.hookcmd.agents import AGENTS

# The mapping, written out: a change to agents.py must change this table too.
EXPECTED = {
    "claude-code": {
        "SessionStart": "task.start",
        "UserPromptSubmit": "step.start",
        "PreToolUse": "tool.before",
        "PermissionRequest": None,
        "PermissionDenied": None,
        "PostToolUse": "tool.after",
        "PostToolUseFailure": "tool.after",
        "Notification": None,
        "SubagentStart": None,
        "SubagentStop": None,
        "Stop": "step.end",
        "StopFailure": None,
        "PreCompact": None,
        "PostCompact": None,
        "SessionEnd": "task.end",
    },
    "codex": {
        "SessionStart": "task.start",
        "UserPromptSubmit": "step.start",
        "PreToolUse": "tool.before",
        "PermissionRequest": None,
        "PostToolUse": "tool.after",
        "SubagentStart": None,
        "SubagentStop": None,
        "PreCompact": None,
        "PostCompact": None,
        "Stop": "step.end",
        "StopFailure": None,
        "SessionEnd": "task.end",
    },
    "gemini": {
        "SessionStart": "task.start",
        "BeforeAgent": "step.start",
        "BeforeModel": "model.before",
        "BeforeToolSelection": None,
        "AfterModel": "model.after",
        "BeforeTool": "tool.before",
        "AfterTool": "tool.after",
        "AfterAgent": "step.end",
        "Notification": None,
        "PreCompress": None,
        "SessionEnd": "task.end",
    },
}

CASES = [(agent, name) for agent in AGENT_NAMES for name in recorded(agent)]


def test_every_event_of_the_schemas_is_recorded_and_mapped() -> None:
    for agent in AGENT_NAMES:
        assert set(recorded(agent)) == set(EXPECTED[agent]), agent
        assert dict(AGENTS[agent].events) == EXPECTED[agent], agent


@pytest.mark.parametrize(("agent", "name"), CASES)
def test_event_reaches_its_hook_point(
    agent: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    monkeypatch.delenv("HW_TEST_HOOK", raising=False)
    ran = run_in_process(agent, event(agent, name, "s-events"), SCRIPTED, tmp_path / "st.db")
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    seen = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    hook = EXPECTED[agent][name]
    assert [item["hook"] for item in seen] == ([] if hook is None else [hook])
    assert all(item["run"] == "s-events" for item in seen)  # the session is the run


@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_a_real_process_answers_every_event(agent: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    for name in recorded(agent):
        ran = run_process(
            agent,
            event(agent, name, "s-proc"),
            SCRIPTED,
            tmp_path / "st.db",
            env={"HW_TEST_RECORD": str(record), "HW_TEST_HOOK": ""},
        )
        assert (ran.code, ran.stdout, ran.stderr) == (0, "", ""), name
    hooks = [json.loads(line)["hook"] for line in record.read_text().splitlines()]
    assert hooks == [EXPECTED[agent][n] for n in recorded(agent) if EXPECTED[agent][n]]


def test_prompts_count_the_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    state = tmp_path / "st.db"
    for name in ("SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "UserPromptSubmit"):
        run_in_process("claude-code", event("claude-code", name, "s-steps"), SCRIPTED, state)
    steps = [json.loads(line)["step"] for line in record.read_text().splitlines()]
    assert steps == [None, 1, 1, 1, 2]
