"""Shared scopes through the hook command: a ``user``-scoped rate limit counts every session
of the user (``$HARNESSWEAVER_USER``) in the state file, and an ``org`` budget every session;
a guard whose scope needs an attribute the hook command was not given fails as its fail mode
says (closed: refused), never counting nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from hookcmd_support import event, run_in_process

SPEC = """\
middleware:
  - {use: harnessweaver.rate_limit, id: per_user, scope: user, limit: 3, per: 1h}
"""


def _denied(ran: object) -> bool:
    answer = ran.answer  # type: ignore[attr-defined]
    return answer is not None and answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_user_rate_limit_counts_every_session_of_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, state = tmp_path / "harness.yaml", tmp_path / "st.db"
    spec.write_text(SPEC)
    monkeypatch.setenv("HARNESSWEAVER_USER", "dana")
    runs = [
        run_in_process(
            "claude-code",
            event("claude-code", "PreToolUse", f"s-{n}", tool_input={"command": f"echo {n}"}),
            spec,
            state,
        )
        for n in range(5)
    ]
    assert [_denied(ran) for ran in runs] == [False, False, False, True, True]
    assert "rate_limited" in runs[3].stdout
    monkeypatch.setenv("HARNESSWEAVER_USER", "lee")  # another user: a count of their own
    other = event("claude-code", "PreToolUse", "s-lee", tool_input={"command": "echo 9"})
    assert not _denied(run_in_process("claude-code", other, spec, state))


def test_a_user_scope_without_a_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, state = tmp_path / "harness.yaml", tmp_path / "st.db"
    spec.write_text(SPEC)
    monkeypatch.delenv("HARNESSWEAVER_USER", raising=False)
    ran = run_in_process("claude-code", event("claude-code", "PreToolUse", "s-x"), spec, state)
    assert ran.code == 2 or _denied(ran), ran
