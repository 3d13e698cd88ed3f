"""Every built-in profile (and ``tool_denylist``, ``shell_guard``) through the hook command:
real ``harnessweaver hook`` processes fed the documents recorded from Claude Code, Codex and
Gemini CLI (``e2e/agents/recorded``), each answering with its characteristic decision in
the agent's own format (issue 32). The frameworks: ``test_profiles_frameworks.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkout import require_checkout
from hookcmd.hookcmd_support import run_process  # the real hook process, as hookcmd tests run it
from matrix_support import EMAIL, SCENARIOS, SECRET, builtin_profiles

RECORDED = require_checkout() / "e2e" / "agents" / "recorded"  # the agents' own documents
TOOL_DOC = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
AGENTS = sorted(TOOL_DOC)


def recorded(agent: str, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RECORDED / agent / f"{name}.json").read_text())
    return doc


def shell_call(agent: str, command: str) -> dict[str, Any]:
    """The agent's recorded shell tool call (Bash, run_shell_command) running ``command``."""
    doc = recorded(agent, TOOL_DOC[agent])
    doc["tool_input"] = {**doc["tool_input"], "command": command}
    return doc


def hook(agent: str, spec: Path, state: Path, doc: dict[str, Any]) -> tuple[str, Any]:
    """One real hook process; its answer as ``(kind, detail)``: ``allow`` (nothing said),
    ``deny`` (the reason) or ``rewrite`` (what the agent is told to use instead)."""
    done = run_process(agent, doc, spec, state)
    assert (done.code, done.stderr) == (0, ""), done
    if not done.stdout.strip():
        return "allow", None
    answer = json.loads(done.stdout)
    specific = answer.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":
        return "deny", specific["permissionDecisionReason"]
    if answer.get("decision") == "deny":
        return "deny", answer["reason"]
    for key in ("updatedInput", "tool_input", "llm_request"):
        if key in specific:
            return "rewrite", specific[key]
    if specific.get("permissionDecision") == "allow":
        return "allow", None
    raise AssertionError(f"an answer the matrix does not read: {answer}")


Check = Callable[[str, Path, Path], None]


def _agent_guards(agent: str, spec: Path, state: Path) -> None:
    # loop_guard: the same call, made again and again, is refused from the 5th on
    doc = recorded(agent, TOOL_DOC[agent])
    answers = [hook(agent, spec, state, doc) for _ in range(5)]
    assert [kind for kind, _ in answers] == ["allow"] * 4 + ["deny"], answers
    assert "(loop_detected)" in answers[-1][1]
    if agent == "gemini":  # redact_pii at model.before: the one agent with a model hook
        model = recorded(agent, "BeforeModel-after-tool-call")
        model["llm_request"]["messages"][-1]["content"] = f"reply to {EMAIL}"
        kind, request = hook(agent, spec, state, model)
        assert kind == "rewrite"
        assert request["messages"][-1]["content"] == "reply to [redacted:email]"


def _rag(agent: str, spec: Path, state: Path) -> None:
    # redact_secrets at tool.before: the call runs without the key
    kind, tool_input = hook(agent, spec, state, shell_call(agent, f"deploy --key {SECRET}"))
    assert (kind, tool_input["command"]) == ("rewrite", "deploy --key [redacted]")


def _denied(code: str) -> Check:
    def check(agent: str, spec: Path, state: Path) -> None:
        kind, reason = hook(agent, spec, state, shell_call(agent, "ls"))
        assert kind == "deny" and reason.endswith(f"({code})"), (kind, reason)

    return check


def _shell_guard(agent: str, spec: Path, state: Path) -> None:
    kind, reason = hook(agent, spec, state, shell_call(agent, "rm -rf /"))
    assert kind == "deny" and "rule 'rm_recursive_force'" in reason, (kind, reason)
    assert "rm -rf" not in reason  # the rule, never the command text
    assert hook(agent, spec, state, shell_call(agent, "ls"))[0] == "allow"


DENYLIST = "middleware:\n  - {use: harnessweaver.tool_denylist, id: deny, deny: [%s]}\n"
CHECKS: dict[str, tuple[Check, Callable[[str], str]]] = {
    "agent-guards": (_agent_guards, lambda agent: SCENARIOS["agent-guards"].spec),
    "rag": (_rag, lambda agent: SCENARIOS["rag"].spec),
    "safe-tools": (_denied("tool_not_allowed"), lambda agent: SCENARIOS["safe-tools"].spec),
    "harnessweaver.tool_denylist": (
        _denied("tool_denied"),
        lambda agent: DENYLIST % ("run_shell_command" if agent == "gemini" else "Bash"),
    ),
    "harnessweaver.shell_guard": (
        _shell_guard,
        lambda agent: SCENARIOS["harnessweaver.shell_guard"].spec,
    ),
}


def test_every_builtin_profile_is_in_the_hook_command_matrix() -> None:
    assert set(builtin_profiles()) <= set(CHECKS)
    assert set(CHECKS) == set(SCENARIOS)  # the same matrix as the frameworks'


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_profile_runs_in_the_hook_command(name: str, agent: str, tmp_path: Path) -> None:
    check, spec_text = CHECKS[name]
    spec = tmp_path / "harness.yaml"
    spec.write_text(spec_text(agent), encoding="utf-8")
    check(agent, spec, tmp_path / "state.db")
