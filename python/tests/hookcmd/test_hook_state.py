"""Guard state kept across invocations, per agent session, in SQLite: across processes,
under concurrent invocations of one session, kept past the session's end and forgotten by
age."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import (
    GUARDS,
    MANY,
    event,
    run_in_process,
    run_process,
    start,
    warm_helper,
)

from harnessweaver.hookcmd.lifetime import DEFAULT_TTL
from harnessweaver.hookcmd.store import Store

TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}


@pytest.fixture(params=["cold", "warm"])
def hook_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Each process answers in-process (cold), or through a warm helper (docs/integrations/
    coding-agents.md, "Start-up"): the state is the same either way."""
    if request.param == "cold":
        yield {}
        return
    with warm_helper() as env:
        yield env


def _denied(agent: str, answer: Any) -> bool:
    if answer is None:
        return False
    if agent == "gemini":
        return bool(answer["decision"] == "deny")
    return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")


def _rows(state: Path) -> list[tuple[str, str]]:
    store = Store(state)
    try:
        return store.sessions()
    finally:
        store.close()


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_loop_guard_blocks_the_third_identical_call_across_three_processes(
    agent: str, tmp_path: Path, hook_env: dict[str, str]
) -> None:
    state = tmp_path / "st.db"
    doc = event(agent, TOOL_EVENT[agent], "s-loop")
    answers = [run_process(agent, doc, GUARDS, state, hook_env) for _ in range(3)]
    assert [ran.code for ran in answers] == [0, 0, 0]
    assert [_denied(agent, ran.answer) for ran in answers] == [False, False, True]
    assert "loop_detected" in answers[2].stdout
    other_doc = event(agent, TOOL_EVENT[agent], "s-other")
    other = run_process(agent, other_doc, GUARDS, state, hook_env)
    assert not _denied(agent, other.answer)  # another session has its own count


def test_budget_guard_adds_up_model_responses_across_invocations(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    for _ in range(2):  # 150 tokens each, against a budget of 250, one turn (step) each:
        # the same response again in the same step would be a redelivery, charged once
        run_in_process("gemini", event("gemini", "BeforeAgent", "s-b"), GUARDS, state)
        assert (
            run_in_process("gemini", event("gemini", "BeforeModel", "s-b"), GUARDS, state).code == 0
        )
        after = run_in_process("gemini", event("gemini", "AfterModel", "s-b"), GUARDS, state)
        assert (after.code, after.stdout) == (0, "")
    ran = run_in_process("gemini", event("gemini", "BeforeModel", "s-b"), GUARDS, state)
    assert ran.answer["decision"] == "deny"
    assert "budget_exceeded" in ran.answer["reason"]


def test_tool_failure_guard_counts_failures_across_invocations(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    for _ in range(2):
        failed = event("claude-code", "PostToolUseFailure", "s-f")
        assert run_in_process("claude-code", failed, GUARDS, state).stdout == ""
    call = event("claude-code", "PreToolUse", "s-f", tool_input={"command": "make"})
    ran = run_in_process("claude-code", call, GUARDS, state)
    assert "tool_failing" in ran.answer["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_session_end_keeps_the_session(agent: str, tmp_path: Path) -> None:
    """``SessionEnd`` ends an invocation (every ``-p`` run ends with it); ``--resume`` goes on
    under the same id, so the session's rows stay: they go by age (test_hook_state_lifetime)."""
    state = tmp_path / "st.db"
    doc = event(agent, TOOL_EVENT[agent], "s-end")
    run_in_process(agent, doc, GUARDS, state)
    run_in_process(agent, event(agent, TOOL_EVENT[agent], "s-kept"), GUARDS, state)
    assert _rows(state) == [(agent, "s-end"), (agent, "s-kept")]
    ended = run_in_process(agent, event(agent, "SessionEnd", "s-end"), GUARDS, state)
    assert (ended.code, ended.stdout) == (0, "")
    assert _rows(state) == [(agent, "s-end"), (agent, "s-kept")]
    answers = [run_in_process(agent, doc, GUARDS, state) for _ in range(2)]
    assert [_denied(agent, ran.answer) for ran in answers] == [False, True]  # counted on


def test_sessions_that_never_end_expire(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    run_in_process("codex", event("codex", "PreToolUse", "s-old"), GUARDS, state)
    store = Store(state)
    try:
        assert store.expire(time.time() + DEFAULT_TTL - 60) == 0
        assert store.sessions() == [("codex", "s-old")]
        assert store.expire(time.time() + DEFAULT_TTL + 60) == 1
        assert store.sessions() == []
    finally:
        store.close()


def test_a_changed_harness_starts_its_guards_afresh(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    spec = tmp_path / "harness.yaml"
    spec.write_text(GUARDS.read_text())
    doc = event("claude-code", "PreToolUse", "s-change")
    for _ in range(2):
        run_in_process("claude-code", doc, spec, state)
    spec.write_text(GUARDS.read_text().replace("block_after: 3", "block_after: 4"))
    ran = run_in_process("claude-code", doc, spec, state)
    assert ran.stdout == ""  # a new harness: the count is 1, not 3


def _recent(state: Path, session: str) -> list[str]:
    """The loop guard's window of the session: its record in the state tables of the file
    (``hw1/app/loops/run/<session>~<harness>.<generation>/calls``)."""
    with closing(sqlite3.connect(state)) as db:
        rows = db.execute(
            "SELECT key, value FROM hw_state_record WHERE key LIKE ?",
            (f"hw1/app/loops/run/{session}~%/calls",),
        ).fetchall()
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    [(_, text)] = rows  # the session's only record
    return list(json.loads(text)["recent"])


def _finish(proc: Any) -> tuple[int, bytes, bytes]:
    with proc:  # closes the pipes
        out, err = proc.stdout.read(), proc.stderr.read()
        return proc.wait(timeout=120), out, err


def test_concurrent_invocations_lose_no_update(tmp_path: Path, hook_env: dict[str, str]) -> None:
    state = tmp_path / "st.db"
    count = 8
    procs = [start("claude-code", MANY, state, hook_env) for _ in range(count)]
    for number, proc in enumerate(procs):
        doc = event("claude-code", "PreToolUse", "s-many", tool_input={"command": f"echo {number}"})
        proc.stdin.write(json.dumps(doc).encode())
        proc.stdin.close()
    outcomes = [_finish(proc) for proc in procs]
    assert outcomes == [(0, b"", b"")] * count
    assert len(_recent(state, "s-many")) == count
    assert len(set(_recent(state, "s-many"))) == count


def test_concurrent_identical_calls_are_counted_one_after_another(
    tmp_path: Path, hook_env: dict[str, str]
) -> None:
    state = tmp_path / "st.db"
    count = 6
    procs = [start("gemini", GUARDS, state, hook_env) for _ in range(count)]
    doc = json.dumps(event("gemini", "BeforeTool", "s-race")).encode()
    for proc in procs:
        proc.stdin.write(doc)
        proc.stdin.close()
    finished = [_finish(proc) for proc in procs]
    assert [code for code, _, _ in finished] == [0] * count
    answers = [out for _, out, _ in finished]
    denied = [b'"deny"' in answer for answer in answers]
    assert denied.count(False) == 2  # the 1st and 2nd in lock order; the 3rd on are loops
    assert len(_recent(state, "s-race")) == count
