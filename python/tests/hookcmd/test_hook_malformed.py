"""Input the agent would never send, a spec that does not load, a broken state database:
one line on stderr naming what is wrong, and the blocking exit status (fail closed)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import SCRIPTED, event, run_in_process, run_process

BAD: list[tuple[str, Any, str]] = [
    ("claude-code", b"{not json", "stdin is not a JSON document: JSONDecodeError"),
    ("claude-code", b"", "stdin is not a JSON document"),
    ("codex", b"\xff\xfe", "stdin is not a JSON document"),
    ("gemini", b"[1, 2]", "stdin must hold a JSON object, got a list"),
    ("claude-code", {"session_id": "s"}, "field 'hook_event_name' must be a string, got missing"),
    # an event the table does not map is answered neutrally (test_hook_protocol2.py)
    ("gemini", {"hook_event_name": "BeforeTool"}, "BeforeTool: field 'session_id'"),
    ("gemini", {"hook_event_name": "BeforeTool", "session_id": ""}, "must not be empty"),
    (
        "claude-code",
        {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash"},
        "PreToolUse: field 'tool_input' must be a JSON object, got missing",
    ),
    (
        "codex",
        {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": 3, "tool_input": {}},
        "PreToolUse: field 'tool_name' must be a string, got a int",
    ),
    (
        "gemini",
        {"hook_event_name": "BeforeAgent", "session_id": "s"},
        "BeforeAgent: field 'prompt' must be a string, got missing",
    ),
    (
        "gemini",
        {"hook_event_name": "BeforeModel", "session_id": "s", "llm_request": {"messages": 3}},
        "llm_request.messages' must be a list",
    ),
    (
        "claude-code",
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": {},
        },
        "field 'tool_response' is missing",
    ),
]


@pytest.mark.parametrize(("agent", "doc", "message"), BAD)
def test_malformed_input_fails_closed(agent: str, doc: Any, message: str, tmp_path: Path) -> None:
    ran = run_in_process(agent, doc, SCRIPTED, tmp_path / "st.db")
    assert ran.code == 2
    assert ran.stdout == ""
    assert message in ran.stderr
    assert ran.stderr.startswith("harnessweaver hook: invalid ")
    assert ran.stderr.rstrip().endswith("(failing closed)")


def test_malformed_input_fails_closed_in_a_real_process(tmp_path: Path) -> None:
    ran = run_process("gemini", b"{oops", SCRIPTED, tmp_path / "st.db")
    assert (ran.code, ran.stdout) == (2, "")
    assert "stdin is not a JSON document" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_a_spec_that_does_not_load_fails_closed(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.no_such_guard}\n")
    ran = run_process("claude-code", event("claude-code", "PreToolUse"), spec, tmp_path / "st.db")
    assert (ran.code, ran.stdout) == (2, "")
    assert "the harness spec does not load" in ran.stderr
    assert "unknown middleware 'harnessweaver.no_such_guard'" in ran.stderr


def test_an_event_with_no_hook_point_does_not_load_the_spec(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: 3\n")  # broken, and never read for a Notification
    ran = run_in_process("claude-code", event("claude-code", "Notification"), spec, tmp_path / "s")
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")


def test_an_unreadable_state_fails_closed(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    state.write_bytes(b"this is not an SQLite database, not at all" * 100)
    ran = run_in_process("claude-code", event("claude-code", "PreToolUse"), SCRIPTED, state)
    assert (ran.code, ran.stdout) == (2, "")
    assert "state database" in ran.stderr


def test_a_state_that_is_no_database_leaves_no_connection_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python 3.13 warns of a connection collected unclosed: the refused one is closed at once.
    from harnessweaver.hookcmd import store

    made: list[sqlite3.Connection] = []
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        made.append(real_connect(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(store.sqlite3, "connect", connect)
    state = tmp_path / "st.db"
    state.write_bytes(b"this is not an SQLite database, not at all" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        store.Store(state)
    assert len(made) == 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        made[0].execute("select 1")


def test_a_state_store_that_fails_blocks_as_the_guards_fail_mode_says(tmp_path: Path) -> None:
    """The guards keep their state in the file's ``hw_state_*`` tables; one that cannot be
    read is a failure of each guard that asks it, under its fail mode (closed: a refusal with
    code ``state_unavailable``), never a silent allow (docs/state.md)."""
    from hookcmd_support import GUARDS

    state = tmp_path / "st.db"
    first = run_in_process("claude-code", event("claude-code", "PreToolUse"), GUARDS, state)
    assert first.code == 0
    with closing(sqlite3.connect(state)) as db:
        db.execute("DROP TABLE hw_state_record")
        db.execute("CREATE VIEW hw_state_record AS SELECT 1 AS broken")
        db.commit()
    ran = run_in_process("claude-code", event("claude-code", "PreToolUse"), GUARDS, state)
    assert ran.code == 0
    output = ran.answer["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    assert "state store unavailable (sqlite)" in reason and "state_unavailable" in reason
