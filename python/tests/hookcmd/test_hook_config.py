"""``harnessweaver hook --print-config``: each agent's settings snippet."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harnessweaver.cli import main

WIRED = {
    "claude-code": [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ],
    "codex": [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ],
    "gemini": [
        "SessionStart",
        "BeforeAgent",
        "BeforeModel",
        "AfterModel",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
        "SessionEnd",
    ],
}


@pytest.mark.parametrize("agent", list(WIRED))
def test_print_config(agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"  # outside the project (the current directory): absolute
    spec.write_text("tasks: {t: {}}\nmiddleware:\n  - {use: harnessweaver.loop_guard, id: l}\n")
    code = main(["hook", "--print-config", "--agent", agent, "--spec", str(spec), "--task", "t"])
    assert code == 0
    config = json.loads(capsys.readouterr().out)
    assert list(config) == ["hooks"]
    assert list(config["hooks"]) == WIRED[agent]
    for event, groups in config["hooks"].items():
        [group] = groups
        [handler] = group["hooks"]
        assert handler["type"] == "command"
        words = shlex.split(handler["command"])
        assert words[:4] == ["harnessweaver", "hook", "--agent", agent]
        assert words[4:] == ["--spec", str(spec.resolve()), "--task", "t"]
        assert handler["timeout"] == (30_000 if agent == "gemini" else 30)
        tool_event = "Tool" in event
        assert ("matcher" in group) == tool_event
        if tool_event:
            assert group["matcher"] == (".*" if agent == "gemini" else "*")


def test_print_config_in_a_process(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text("middleware: []\n")
    args = ["hook", "--print-config", "--agent", "codex", "--spec", "harness.yaml"]
    done = subprocess.run(
        [sys.executable, "-m", "harnessweaver.cli", *args],
        capture_output=True,
        cwd=tmp_path,
        check=True,
    )
    config = json.loads(done.stdout)
    command = config["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert str(tmp_path / "harness.yaml") in command  # an absolute path: hooks run anywhere


def test_hook_needs_an_agent(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["hook", "--spec", "harness.yaml"])
    assert exc.value.code == 2
    assert "--agent" in capsys.readouterr().err
