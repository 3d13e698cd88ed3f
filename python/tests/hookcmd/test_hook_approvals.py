"""A Suspend at a tool call, through the real ``harnessweaver hook`` process, as a durable
approval: filed in the hook command's state file, decided by the real ``harnessweaver
approvals`` CLI in another process, and consulted when the agent makes the same call again
(docs/approvals.md, "The hook command").

Each agent's own answer form: Claude Code asks in its UI (the reason names the record) and
allows an approved call; Codex and Gemini CLI, which cannot ask, deny naming the record and let
the approved call run (their neutral answer). Approved → the identical call runs exactly once;
the next identical call asks again (a new record). Denied → denied. Changed arguments → a new
pending record, not the approval. A store that cannot answer → denied, never allowed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import SCRIPTED, SUPPORT, Ran, event, run_process

SUSPEND = {"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "suspend"}
ID = re.compile(r"ap_[0-9a-f]{16}_[0-9]+")
TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
AGENTS = pytest.mark.parametrize("agent", sorted(TOOL_EVENT))


def call(agent: str, call_id: str, **tool_input: Any) -> dict[str, Any]:
    """The agent's recorded tool-call document, as call ``call_id`` (a call made again has a
    new id), with ``tool_input`` when given."""
    changes: dict[str, Any] = {"tool_use_id": call_id}
    if tool_input:
        changes["tool_input"] = tool_input
    return event(agent, TOOL_EVENT[agent], "session-ap", **changes)


def hook(agent: str, doc: dict[str, Any], spec: Path, state: Path) -> Ran:
    ran = run_process(agent, doc, spec, state, env=SUSPEND)
    assert ran.code == 0, ran.stderr
    return ran


def approvals(*argv: str, spec: Path, state: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI, in a process of its own: ``harnessweaver approvals ARGV --spec S
    --state-file F``."""
    command = [sys.executable, "-m", "harnessweaver.cli", "approvals", *argv]
    command += ["--spec", str(spec), "--state-file", str(state)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, env=dict(os.environ)
    )


def reason(agent: str, ran: Ran) -> str:
    """The refusal or question the agent shows (its reason text)."""
    answer = ran.answer
    assert isinstance(answer, dict), ran
    if agent == "gemini":
        return str(answer["reason"])
    return str(answer["hookSpecificOutput"]["permissionDecisionReason"])


def asked(agent: str, ran: Ran) -> str:
    """The call was not allowed: asked (Claude Code) or denied naming a pending approval
    (Codex, Gemini CLI); the id of that approval."""
    answer = ran.answer
    if agent == "gemini":
        assert answer["decision"] == "deny"
    else:
        verdict = answer["hookSpecificOutput"]["permissionDecision"]
        assert verdict == ("ask" if agent == "claude-code" else "deny")
    text = reason(agent, ran)
    assert text.startswith("a person must approve this; approval ap_")
    assert "is pending" in text
    found = ID.findall(text)
    assert found and set(found) == {found[0]}
    assert f"harnessweaver approvals approve {found[0]}" in text
    return found[0]


def allowed(agent: str, ran: Ran, approval: str) -> None:
    """The call runs: Claude Code's ``allow`` naming the approval; Codex's and Gemini CLI's
    neutral answer (nothing on stdout, exit 0)."""
    if agent == "claude-code":
        out = ran.answer["hookSpecificOutput"]
        assert out["permissionDecision"] == "allow"
        assert approval in out["permissionDecisionReason"]
        assert "updatedInput" not in out
    else:
        assert (ran.code, ran.answer) == (0, None)


def denied(agent: str, ran: Ran) -> str:
    answer = ran.answer
    if agent == "gemini":
        assert answer["decision"] == "deny"
    else:
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    return reason(agent, ran)


@AGENTS
def test_an_approval_from_the_cli_lets_the_same_call_run_exactly_once(
    agent: str, tmp_path: Path
) -> None:
    state = tmp_path / "state.sqlite3"
    first = asked(agent, hook(agent, call(agent, "call-1"), SCRIPTED, state))
    assert first.endswith("_1")
    again = asked(agent, hook(agent, call(agent, "call-2"), SCRIPTED, state))
    assert again == first  # still pending: the same record, not a second one

    shown = approvals("show", first, spec=SCRIPTED, state=state)
    assert shown.returncode == 0, shown.stderr
    decided = approvals("approve", first, "--by", "alice", spec=SCRIPTED, state=state)
    assert decided.returncode == 0, decided.stderr

    allowed(agent, hook(agent, call(agent, "call-3"), SCRIPTED, state), first)
    third = asked(agent, hook(agent, call(agent, "call-4"), SCRIPTED, state))
    assert third != first
    assert third.endswith("_2")  # the binding's next record: the approval was used

    listed = approvals("list", "--format", "json", spec=SCRIPTED, state=state)
    assert listed.returncode == 0, listed.stderr
    records = {item["id"]: item for item in json.loads(listed.stdout)}
    assert records[first]["status"] == "used"
    assert records[first]["used"]["by"] == f"session:{agent}/session-ap#call-3"
    assert records[first]["filed_by"] == f"hook command ({agent})"
    assert records[first]["subject"] == f"session:{agent}/session-ap"
    assert records[third]["status"] == "pending"


@AGENTS
def test_a_denial_from_the_cli_denies_the_same_call(agent: str, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    first = asked(agent, hook(agent, call(agent, "call-1"), SCRIPTED, state))
    decided = approvals("deny", first, "--reason", "not today", spec=SCRIPTED, state=state)
    assert decided.returncode == 0, decided.stderr
    text = denied(agent, hook(agent, call(agent, "call-2"), SCRIPTED, state))
    assert text == f"approval {first} was denied: not today (approval_denied)"
    # The denial is spent (closed): the call made again is a new question, not a denial.
    later = asked(agent, hook(agent, call(agent, "call-3"), SCRIPTED, state))
    assert later != first


@AGENTS
def test_changed_arguments_are_a_new_question_not_the_approval(agent: str, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    original = call(agent, "call-1")
    first = asked(agent, hook(agent, original, SCRIPTED, state))
    assert approvals("approve", first, spec=SCRIPTED, state=state).returncode == 0
    changed_input = {**original["tool_input"], "harnessweaver_test": "changed"}
    changed = asked(agent, hook(agent, call(agent, "call-2", **changed_input), SCRIPTED, state))
    assert changed != first
    # The approval still waits for the call it was given for, and lets it run once.
    allowed(agent, hook(agent, call(agent, "call-3"), SCRIPTED, state), first)


@AGENTS
def test_another_session_does_not_inherit_the_approval(agent: str, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    first = asked(agent, hook(agent, call(agent, "call-1"), SCRIPTED, state))
    assert approvals("approve", first, spec=SCRIPTED, state=state).returncode == 0
    other = {**call(agent, "call-2"), "session_id": "session-other"}
    assert asked(agent, hook(agent, other, SCRIPTED, state)) != first


def test_an_edited_approval_runs_the_edited_call_in_claude_code(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    agent = "claude-code"
    first = asked(agent, hook(agent, call(agent, "call-1"), SCRIPTED, state))
    edit = approvals(
        "edit", first, "--arguments", json.dumps({"command": "ls"}), spec=SCRIPTED, state=state
    )
    assert edit.returncode == 0, edit.stderr
    out = hook(agent, call(agent, "call-2"), SCRIPTED, state).answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    assert out["updatedInput"]["command"] == "ls"


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed when the block ends: nobody listens


@AGENTS
def test_a_store_that_cannot_answer_denies(agent: str, tmp_path: Path) -> None:
    """The spec's ``state:`` names a Redis server that is not there: the Suspend cannot be
    filed or consulted, so the call is denied (Claude Code too: never asked, never allowed)."""
    spec = tmp_path / "harness.yaml"
    spec.write_text(
        SCRIPTED.read_text()
        + f"state: {{backend: redis, url: 'redis://127.0.0.1:{_closed_port()}/0'}}\n"
    )
    (tmp_path / "hooktest_plugin.py").write_text((SUPPORT / "hooktest_plugin.py").read_text())
    ran = hook(agent, call(agent, "call-1"), spec, tmp_path / "state.sqlite3")
    text = denied(agent, ran)
    assert text.endswith("(state_unavailable)")
    assert not ID.search(text)
