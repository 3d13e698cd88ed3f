"""Failing closed at the end of a turn ends the session: at ``Stop`` (Claude Code, Codex) and
``AfterAgent`` (Gemini CLI) the blocking exit status means "keep working", so a spec that
broke mid-session would send the agent back to the model again and again (seen in the real
``claude -p``: ten model requests before it gave up)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hookcmd_support import event, run_in_process, run_process

TURN_ENDS = [("claude-code", "Stop"), ("codex", "Stop"), ("gemini", "AfterAgent")]


def broken(tmp_path: Path) -> Path:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.no_such_guard}\n")
    return spec


@pytest.mark.parametrize(("agent", "name"), TURN_ENDS)
def test_a_broken_spec_at_a_turns_end_stops_the_agent(
    agent: str, name: str, tmp_path: Path
) -> None:
    ran = run_in_process(agent, event(agent, name), broken(tmp_path), tmp_path / "st.db")
    assert ran.code == 0
    assert ran.answer["continue"] is False
    assert "the harness spec does not load" in ran.answer["stopReason"]
    assert "failing closed" in ran.stderr


def test_as_a_process(tmp_path: Path) -> None:
    ran = run_process("claude-code", event("claude-code", "Stop"), broken(tmp_path), tmp_path / "s")
    assert ran.code == 0 and ran.answer["continue"] is False


@pytest.mark.parametrize(("agent", "name"), TURN_ENDS)
def test_a_malformed_turn_end_stops_too(agent: str, name: str, tmp_path: Path) -> None:
    doc = {"hook_event_name": name, "session_id": ""}  # an empty session id: refused
    ran = run_in_process(agent, doc, broken(tmp_path), tmp_path / "st.db")
    assert (ran.code, ran.answer["continue"]) == (0, False)


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_other_events_still_exit_2(agent: str, tmp_path: Path) -> None:
    name = "PreToolUse" if agent == "claude-code" else "BeforeTool"
    ran = run_in_process(agent, event(agent, name), broken(tmp_path), tmp_path / "st.db")
    assert (ran.code, ran.stdout) == (2, "")


def test_what_is_not_a_document_still_exits_2(tmp_path: Path) -> None:
    ran = run_in_process("claude-code", b"{not json", broken(tmp_path), tmp_path / "st.db")
    assert (ran.code, ran.stdout) == (2, "")
