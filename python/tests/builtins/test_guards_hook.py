"""The guards in the hook command: a real ``harnessweaver hook`` process answers each agent's
recorded tool document (python/tests/hookcmd/events/), with the command changed, as that
agent's own refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookcmd.hookcmd_support import run_process  # the real hook process, as hookcmd tests run it

EVENTS = Path(__file__).resolve().parents[1] / "hookcmd" / "events"
SPEC = """\
middleware:
  - {use: harnessweaver.shell_guard, id: shell}
  - {use: harnessweaver.tool_denylist, id: deny, deny: [WebFetch]}
"""
REFUSED = "tool {tool!r}: command matches rule 'rm_recursive_force' (shell_command_denied)"


def hook(agent: str, doc: dict[str, Any], tmp_path: Path) -> Any:
    spec = tmp_path / "harness.yaml"
    spec.write_text(SPEC)
    ran = run_process(agent, doc, spec, tmp_path / "state")
    assert ran.code == 0, ran.stderr
    return json.loads(ran.stdout) if ran.stdout.strip() else None


def recorded(agent: str, name: str, command: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((EVENTS / agent / f"{name}.json").read_text())
    return {**doc, "tool_input": {**doc["tool_input"], "command": command}}


@pytest.mark.parametrize(
    ("agent", "name"),
    [("claude-code", "PreToolUse"), ("codex", "PreToolUse"), ("gemini", "BeforeTool")],
)
def test_a_destructive_command_is_refused_and_a_harmless_one_runs(
    agent: str, name: str, tmp_path: Path
) -> None:
    doc = recorded(agent, name, "sudo rm -fr ~/")
    refused = json.dumps(hook(agent, doc, tmp_path))
    assert REFUSED.format(tool=doc["tool_name"]) in refused
    assert "deny" in refused
    assert "~/" not in refused  # the reason names the rule, never the command
    allowed = hook(agent, recorded(agent, name, "ls -la"), tmp_path)
    assert "deny" not in json.dumps(allowed)


def test_a_denied_tool_is_refused_as_claude_code_s_deny(tmp_path: Path) -> None:
    doc = {**recorded("claude-code", "PreToolUse", "ls"), "tool_name": "WebFetch"}
    answer = hook("claude-code", doc, tmp_path)
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "tool 'WebFetch' is denied (tool_denied)",
        }
    }
