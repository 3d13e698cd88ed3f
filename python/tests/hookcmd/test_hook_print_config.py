"""``harnessweaver hook --print-config``: only for a spec that loads, the spec written relative
to the agent's project variable where it has one (and the shell still finds it), and quiet
when its reader stops early."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hookcmd_support import SCRIPTED

from harnessweaver.cli import main

GOOD = "middleware:\n  - {use: harnessweaver.loop_guard, id: loops}\n"


def _print(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnessweaver.cli", "hook", "--print-config", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _command(out: str) -> str:
    return str(json.loads(out)["hooks"]["SessionStart"][0]["hooks"][0]["command"])


def _spec_in_shell(command: str, agent: str, project: Path) -> str:
    """The path the agent's shell hands the command as --spec, with the project variable as
    the agent provides it: Claude Code sets it in the environment; Gemini CLI replaces it in
    the command text with the directory, shell-quoted."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    if agent == "gemini":
        command = command.replace("$GEMINI_PROJECT_DIR", shlex.quote(str(project)))
    script = "set -- " + command.removeprefix("harnessweaver ") + '\nshift 4\nprintf %s "$1"'
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, check=True)
    return done.stdout


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_missing_spec_is_refused_naming_it(agent: str, tmp_path: Path) -> None:
    done = _print("--agent", agent, "--spec", "harness.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert str(tmp_path / "harness.yaml") in done.stderr
    assert "Traceback" not in done.stderr


def test_a_spec_that_does_not_load_is_refused_with_its_problems(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text("middleware:\n  - {use: harnessweaver.no_such}\n")
    done = _print("--agent", "codex", "--spec", "harness.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "does not load" in done.stderr
    assert "harnessweaver.no_such" in done.stderr  # the loader's problem, as hooks prints it


@pytest.mark.parametrize(
    ("agent", "prefix"),
    [("claude-code", '"$CLAUDE_PROJECT_DIR"/'), ("gemini", "$GEMINI_PROJECT_DIR/")],
)
def test_a_spec_in_the_project_is_relative_to_its_variable(
    agent: str, prefix: str, tmp_path: Path
) -> None:
    project = tmp_path / "my project"
    (project / "conf dir").mkdir(parents=True)
    (project / "conf dir" / "harness.yaml").write_text(GOOD)
    done = _print("--agent", agent, "--spec", "conf dir/harness.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    command = _command(done.stdout)
    assert f"--spec {prefix}'conf dir/harness.yaml'" in command
    assert str(project) not in command
    resolved = _spec_in_shell(command, agent, project)
    assert resolved == str(project / "conf dir" / "harness.yaml")


def test_the_project_directory_can_be_given(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text(GOOD)
    code_dir = tmp_path / "elsewhere"
    code_dir.mkdir()
    spec = str(tmp_path / "harness.yaml")
    done = _print("--agent", "claude-code", "--spec", spec, "--project-dir", str(tmp_path),
                  cwd=code_dir)  # fmt: skip
    assert '--spec "$CLAUDE_PROJECT_DIR"/harness.yaml' in _command(done.stdout)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_spec_outside_the_project_stays_absolute(agent: str, tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text(GOOD)
    project = tmp_path / "project"
    project.mkdir()
    done = _print("--agent", agent, "--spec", str(tmp_path / "harness.yaml"), cwd=project)
    words = shlex.split(_command(done.stdout))
    assert words[4:6] == ["--spec", str(tmp_path / "harness.yaml")]


def test_codex_has_no_project_variable(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text(GOOD)
    done = _print("--agent", "codex", "--spec", "harness.yaml", cwd=tmp_path)
    assert shlex.split(_command(done.stdout))[5] == str(tmp_path / "harness.yaml")


def test_the_trace_option_is_written_into_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["hook", "--print-config", "--agent", "codex", "--spec", str(SCRIPTED),
                 "--trace", "/var/log/hw.jsonl"])  # fmt: skip
    assert code == 0
    words = shlex.split(_command(capsys.readouterr().out))
    assert words[-2:] == ["--trace", "/var/log/hw.jsonl"]


def test_a_reader_that_stops_early_ends_it_quietly(tmp_path: Path) -> None:
    """``--print-config | head -c 10``: the pipe is closed before the snippet is written."""
    (tmp_path / "harness.yaml").write_text(GOOD)
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harnessweaver.cli", "hook", "--print-config", "--agent",
             "gemini", "--spec", "harness.yaml"],
            stdout=write, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.stderr == b""
    assert done.returncode == 1
