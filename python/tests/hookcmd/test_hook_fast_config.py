"""``--print-config --fast``: the hook wired as this interpreter on ``hookcmd/hook.py`` without
``site`` (the warm client of built-in modules only); the same answers as ``harnessweaver
hook``, and ``doctor`` recognises it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hookcmd_support import GUARDS, event

from harnessweaver.cli import main
from harnessweaver.hookcmd.doctor import diagnose
from harnessweaver.hookcmd.options import HookOptions


def printed(agent: str, capsys: pytest.CaptureFixture[str], project: Path) -> dict[str, object]:
    argv = ["hook", "--print-config", "--fast", "--agent", agent, "--spec", str(GUARDS)]
    argv += ["--project-dir", str(project)]  # the spec outside the project: its absolute path
    assert main(argv) == 0
    config: dict[str, object] = json.loads(capsys.readouterr().out)
    return config


def first_command(config: dict[str, object]) -> str:
    hooks = config["hooks"]
    assert isinstance(hooks, dict)
    return str(next(iter(hooks.values()))[0]["hooks"][0]["command"])


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_the_fast_command_line(
    agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = shlex.split(first_command(printed(agent, capsys, tmp_path)))
    assert words[:3] == [sys.executable, "-S", "-P"]
    assert Path(words[3]).parts[-3:] == ("harnessweaver", "hookcmd", "hook.py")
    assert words[4:] == ["--agent", agent, "--spec", str(GUARDS.resolve())]


def test_it_answers_as_the_hook_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The guards' spec refuses the third identical call, as the fast command too."""
    command = first_command(printed("claude-code", capsys, tmp_path))
    doc = json.dumps(event("claude-code", "PreToolUse", "s-fast")).encode()
    env = {"HARNESSWEAVER_HOOK_STATE": str(tmp_path / "st.db"), "HARNESSWEAVER_HOOK_WARM": "0"}
    runs = [
        subprocess.run(
            ["/bin/sh", "-c", command], input=doc, capture_output=True, env=env, check=False
        )
        for _ in range(3)
    ]
    assert [run.returncode for run in runs] == [0, 0, 0]
    assert runs[0].stdout == b""
    answer = json.loads(runs[2].stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "loop" in answer["permissionDecisionReason"]


def test_doctor_recognises_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    config = printed("claude-code", capsys, project)
    (project / ".claude" / "settings.json").write_text(json.dumps(config))
    report = diagnose(HookOptions("claude-code", GUARDS), project, home)
    assert report.findings == []
