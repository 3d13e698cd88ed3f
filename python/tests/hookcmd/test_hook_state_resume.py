"""A session's state across ``SessionEnd`` and ``--resume``: Claude Code and Gemini CLI end
every ``-p`` invocation with ``SessionEnd`` and a resumed invocation goes on under the same
session id, so the guards' counts, the step and a refusal carry over; the state goes by age
only (docs/integrations/coding-agents.md, "The run, the step, the state")."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import GUARDS, SCRIPTED, event, run_in_process, run_process, warm_helper

from harnessweaver.hookcmd.agents import CODEX_EVENTS

TOOL = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
PROMPT = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
TURN_END = {"claude-code": "Stop", "codex": "Stop", "gemini": "AfterAgent"}
AGENTS = ("claude-code", "codex", "gemini")


@pytest.fixture
def codex_session_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex 0.169 sends ``SessionEnd`` too (its mapping to ``task.end`` is the protocol's
    change; mapped here so these tests hold with or without it)."""
    monkeypatch.setitem(CODEX_EVENTS, "SessionEnd", "task.end")


def _doc(agent: str, name: str, session: str, **changes: Any) -> dict[str, Any]:
    if agent == "codex" and name == "SessionEnd":  # no recorded document on this branch
        start = event("codex", "SessionStart", session)
        del start["source"]
        return {**start, "hook_event_name": "SessionEnd", "reason": "other", **changes}
    return event(agent, name, session, **changes)


def _first_invocation(agent: str, session: str) -> list[dict[str, Any]]:
    """``agent -p``: a turn with the same tool call twice, then the end of the invocation."""
    return [
        _doc(agent, "SessionStart", session, source="startup"),
        _doc(agent, PROMPT[agent], session),
        _doc(agent, TOOL[agent], session),
        _doc(agent, TOOL[agent], session),
        _doc(agent, TURN_END[agent], session),
        _doc(agent, "SessionEnd", session),
    ]


def _resumed(agent: str, session: str) -> list[dict[str, Any]]:
    """``agent -p --resume``: the same session, and the same call a third time."""
    return [
        _doc(agent, "SessionStart", session, source="resume"),
        _doc(agent, PROMPT[agent], session),
        _doc(agent, TOOL[agent], session),
    ]


def _refused(agent: str, answer: Any) -> bool:
    if answer is None:
        return False
    if agent == "gemini":
        return bool(answer.get("decision") == "deny")
    return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")


def _step(state: Path, agent: str, session: str) -> int:
    with closing(sqlite3.connect(state)) as db:
        query = "SELECT step FROM sessions WHERE agent = ? AND session = ?"
        ((step,),) = db.execute(query, (agent, session)).fetchall()
    return int(step)


@pytest.mark.usefixtures("codex_session_end")
@pytest.mark.parametrize("agent", AGENTS)
def test_the_loop_guard_refuses_the_repeat_after_session_end_and_resume(
    agent: str, tmp_path: Path
) -> None:
    state = tmp_path / "st.db"
    first = [run_in_process(agent, doc, GUARDS, state) for doc in _first_invocation(agent, "s")]
    assert [(ran.code, _refused(agent, ran.answer)) for ran in first] == [(0, False)] * 6
    *before, third = [run_in_process(agent, doc, GUARDS, state) for doc in _resumed(agent, "s")]
    assert [(ran.code, ran.stdout) for ran in before] == [(0, "")] * 2
    assert third.code == 0 and _refused(agent, third.answer)
    assert "loop_detected" in third.stdout
    assert _step(state, agent, "s") == 2  # the resumed turn is the session's second


@pytest.fixture(params=["cold", "warm"])
def hook_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    if request.param == "cold":
        yield {}
        return
    with warm_helper() as env:
        yield env


# Codex's SessionEnd is not known to the command on this branch (the protocol's change maps
# it): its processes end the invocation with Stop, which already kept the counts.
@pytest.mark.parametrize("agent", ["claude-code", "gemini", "codex"])
def test_the_repeat_is_refused_across_processes_after_session_end_and_resume(
    agent: str, tmp_path: Path, hook_env: dict[str, str]
) -> None:
    state = tmp_path / "st.db"
    docs = _first_invocation(agent, "s-proc")
    if agent == "codex" and "SessionEnd" not in CODEX_EVENTS:
        docs = docs[:-1]
    first = [run_process(agent, doc, GUARDS, state, hook_env) for doc in docs]
    assert [(ran.code, _refused(agent, ran.answer)) for ran in first] == [(0, False)] * len(docs)
    again = _resumed(agent, "s-proc")
    resumed = [run_process(agent, doc, GUARDS, state, hook_env) for doc in again]
    assert [ran.code for ran in resumed] == [0, 0, 0]
    assert [_refused(agent, ran.answer) for ran in resumed] == [False, False, True]
    assert "loop_detected" in resumed[2].stdout


def test_the_budget_guard_counts_what_the_session_spent_before_its_end(tmp_path: Path) -> None:
    state = tmp_path / "st.db"

    def model_call(session: str = "s-budget") -> list[Any]:
        # A turn (step.start), then one model call of 150 tokens, against a budget of 250.
        names = ("BeforeAgent", "BeforeModel", "AfterModel")
        ran = [run_in_process("gemini", event("gemini", n, session), GUARDS, state) for n in names]
        return ran[1:]

    model_call()
    run_in_process("gemini", event("gemini", "SessionEnd", "s-budget"), GUARDS, state)
    resume = event("gemini", "SessionStart", "s-budget", source="resume")
    assert run_in_process("gemini", resume, GUARDS, state).stdout == ""
    assert [ran.stdout for ran in model_call()] == ["", ""]  # 300 spent now
    ran = run_in_process("gemini", event("gemini", "BeforeModel", "s-budget"), GUARDS, state)
    assert ran.answer["decision"] == "deny"
    assert "budget_exceeded" in ran.answer["reason"]


def test_the_tool_failure_guard_counts_failures_before_the_end(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    failed = event("claude-code", "PostToolUseFailure", "s-fail")
    assert run_in_process("claude-code", failed, GUARDS, state).stdout == ""
    run_in_process("claude-code", event("claude-code", "SessionEnd", "s-fail"), GUARDS, state)
    resume = event("claude-code", "SessionStart", "s-fail", source="resume")
    assert run_in_process("claude-code", resume, GUARDS, state).stdout == ""
    assert run_in_process("claude-code", failed, GUARDS, state).stdout == ""
    call = event("claude-code", "PreToolUse", "s-fail", tool_input={"command": "make"})
    ran = run_in_process("claude-code", call, GUARDS, state)
    assert "tool_failing" in ran.answer["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.usefixtures("codex_session_end")
@pytest.mark.parametrize("agent", AGENTS)
def test_a_refused_session_is_still_refused_when_resumed(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "st.db"
    monkeypatch.setenv("HW_TEST_HOOK", "task.start")
    monkeypatch.setenv("HW_TEST_OUTCOME", "block")
    start = _doc(agent, "SessionStart", "s-no", source="startup")
    assert "scripted refusal" in run_in_process(agent, start, SCRIPTED, state).stdout
    monkeypatch.delenv("HW_TEST_OUTCOME")  # the harness would let a new session start now
    ended = run_in_process(agent, _doc(agent, "SessionEnd", "s-no"), SCRIPTED, state)
    assert (ended.code, ended.stdout) == (0, "")
    resumed = [run_in_process(agent, doc, SCRIPTED, state) for doc in _resumed(agent, "s-no")]
    assert all(ran.code == 0 and "scripted refusal" in ran.stdout for ran in resumed)
    fresh = run_in_process(agent, _doc(agent, "SessionStart", "s-new"), SCRIPTED, state)
    assert (fresh.code, fresh.stdout) == (0, "")


@pytest.mark.parametrize("source", ["startup", "clear", "compact"])
def test_a_session_start_of_a_known_session_keeps_its_counts(source: str, tmp_path: Path) -> None:
    """Claude Code and Gemini CLI give ``/clear`` a new session id (a new id starts afresh);
    a start of a known id, whatever its source, is that session going on: a reset would let a
    session out of its loop guard, its budget and its refusal."""
    state = tmp_path / "st.db"
    call = event("claude-code", "PreToolUse", "s-src")
    for _ in range(2):
        run_in_process("claude-code", call, GUARDS, state)
    again = event("claude-code", "SessionStart", "s-src", source=source)
    assert run_in_process("claude-code", again, GUARDS, state).stdout == ""
    ran = run_in_process("claude-code", call, GUARDS, state)
    assert _refused("claude-code", ran.answer)
