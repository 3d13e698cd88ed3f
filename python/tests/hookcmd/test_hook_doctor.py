"""``harnessweaver hook doctor``: a hook the agent would not run, or whose answer it would not
act on, is found and named with its fix."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from hookcmd_support import SCRIPTED

from harnessweaver.cli import main
from harnessweaver.hookcmd.config import snippet
from harnessweaver.hookcmd.doctor import Report, answer_problems, diagnose
from harnessweaver.hookcmd.options import HookOptions

SETTINGS = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME, and `harnessweaver` on PATH as this interpreter's command."""
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "harnessweaver"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m harnessweaver.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_TRUST_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def wire(project: Path, agent: str, config: dict[str, object]) -> Path:
    path = project / SETTINGS[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    return path


def printed(agent: str, spec: Path = SCRIPTED) -> dict[str, object]:
    return snippet(agent, str(spec.resolve()), None, None)


def trust_gemini(home: Path, project: Path) -> None:
    folder = home / ".gemini"
    folder.mkdir(exist_ok=True)
    (folder / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))


def checks(report: Report) -> list[str]:
    return [finding.check for finding in report.findings]


def test_claude_wired_as_printed_is_ok(home: Path, project: Path) -> None:
    wire(project, "claude-code", printed("claude-code"))
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home)
    assert report.findings == []
    assert any("answers a tool call" in line for line in report.passed)


def test_gemini_wired_and_trusted_is_ok(home: Path, project: Path) -> None:
    wire(project, "gemini", printed("gemini"))
    trust_gemini(home, project)
    report = diagnose(HookOptions("gemini", SCRIPTED), project, home)
    assert report.findings == []


def test_gemini_untrusted_folder_is_found(home: Path, project: Path) -> None:
    wire(project, "gemini", printed("gemini"))
    report = diagnose(HookOptions("gemini", SCRIPTED), project, home, dry_run=False)
    [finding] = report.findings
    assert finding.check == "trust"
    assert "TRUST_FOLDER" in finding.fix


def test_gemini_trusted_parent_counts(home: Path, project: Path) -> None:
    wire(project, "gemini", printed("gemini"))
    folder = home / ".gemini"
    folder.mkdir()
    (folder / "trustedFolders.json").write_text(json.dumps({str(project / "x"): "TRUST_PARENT"}))
    assert diagnose(HookOptions("gemini", SCRIPTED), project, home, dry_run=False).ok


def test_broken_and_missing_spec(home: Path, project: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("middleware:\n  - {use: no.such.thing}\n")
    wire(project, "claude-code", printed("claude-code", broken))
    report = diagnose(HookOptions("claude-code", broken), project, home, dry_run=False)
    assert checks(report) == ["spec"]
    assert "does not load" in report.findings[0].problem
    missing = tmp_path / "missing.yaml"
    report = diagnose(HookOptions("claude-code", missing), project, home, dry_run=False)
    assert "spec" in checks(report)
    assert "does not exist" in report.findings[0].problem


def test_an_unwired_event_is_named(home: Path, project: Path) -> None:
    config = printed("claude-code")
    hooks = config["hooks"]
    assert isinstance(hooks, dict)
    del hooks["PreToolUse"]
    wire(project, "claude-code", config)
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home, dry_run=False)
    [finding] = report.findings
    assert finding.check == "wiring"
    assert "PreToolUse is not wired" in finding.problem
    assert "--print-config" in finding.fix


def test_nothing_wired_names_every_event(home: Path, project: Path) -> None:
    report = diagnose(HookOptions("codex", SCRIPTED), project, home, dry_run=False)
    wired = [f.problem.split()[0] for f in report.findings if f.check == "wiring"]
    assert wired == list(printed("codex")["hooks"])  # type: ignore[arg-type]


def test_a_matcher_for_some_tools_only(home: Path, project: Path) -> None:
    config = printed("claude-code")
    hooks = config["hooks"]
    assert isinstance(hooks, dict)
    hooks["PreToolUse"][0]["matcher"] = "Bash"
    wire(project, "claude-code", config)
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home, dry_run=False)
    [finding] = report.findings
    assert "only for the tools matching 'Bash'" in finding.problem


def test_another_spec_or_agent(home: Path, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(SCRIPTED.read_text())
    wire(project, "claude-code", printed("claude-code", other))
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home, dry_run=False)
    assert set(checks(report)) == {"wiring"}
    assert any(str(other) in f.problem for f in report.findings)


def test_project_variable_is_expanded(home: Path, project: Path) -> None:
    spec = project / "harness.yaml"
    spec.write_text(SCRIPTED.read_text())
    (project / "hooktest_plugin.py").write_text(
        (SCRIPTED.parent / "hooktest_plugin.py").read_text()
    )
    config = json.loads(
        json.dumps(printed("claude-code", spec)).replace(
            str(spec), '\\"$CLAUDE_PROJECT_DIR\\"/harness.yaml'
        )
    )
    wire(project, "claude-code", config)
    report = diagnose(HookOptions("claude-code", spec), project, home)
    assert report.findings == []


def test_claude_disable_all_hooks(home: Path, project: Path) -> None:
    wire(project, "claude-code", {**printed("claude-code"), "disableAllHooks": True})
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home, dry_run=False)
    assert checks(report) == ["enabled"]


def test_gemini_hooks_switched_off(home: Path, project: Path) -> None:
    trust_gemini(home, project)
    config = {**printed("gemini"), "hooksConfig": {"enabled": False, "disabled": ["harnessweaver"]}}
    wire(project, "gemini", config)
    report = diagnose(HookOptions("gemini", SCRIPTED), project, home, dry_run=False)
    assert checks(report) == ["enabled", "enabled"]


def test_command_not_on_path(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wire(project, "claude-code", printed("claude-code"))
    monkeypatch.setenv("PATH", str(project))
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home, dry_run=False)
    assert checks(report) == ["command"]
    assert "full path" in report.findings[0].fix


def test_a_command_that_exits_1_is_found(home: Path, project: Path, tmp_path: Path) -> None:
    """A wrapper that crashes (exit 1) is 'go on' for every agent: the dry run finds it."""
    wrapper = tmp_path / "bin" / "harnessweaver-wrapped"
    wrapper.write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")
    wrapper.chmod(0o755)
    config = json.loads(
        json.dumps(printed("claude-code")).replace('"harnessweaver hook', f'"{wrapper} hook')
    )
    wire(project, "claude-code", config)
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home)
    assert checks(report) == ["answer"]
    assert "exit status 1" in report.findings[0].problem


@pytest.mark.parametrize(
    ("agent", "code", "stdout", "found"),
    [
        ("gemini", 1, b"", "exit status 1"),
        ("claude-code", 0, b"not json", "not JSON"),
        ("claude-code", 0, b"[]", "not an object"),
        (
            "claude-code",
            0,
            b'{"hookSpecificOutput": {"permissionDecision": "deny"}}',
            "without hookEventName",
        ),
        (
            "codex",
            0,
            b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}',
            "Codex rejects it",
        ),
        (
            "codex",
            0,
            b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {}}}',
            "without permissionDecision 'allow'",
        ),
    ],
)
def test_protocol_traps(agent: str, code: int, stdout: bytes, found: str) -> None:
    [problem] = answer_problems(agent, code, stdout)
    assert found in problem


@pytest.mark.parametrize(
    ("agent", "code", "stdout"),
    [
        ("claude-code", 2, b""),
        ("claude-code", 0, b""),
        (
            "codex",
            0,
            b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
            b'"permissionDecision": "allow", "updatedInput": {}}}',
        ),
        ("gemini", 0, b'{"decision": "deny", "reason": "no"}'),
    ],
)
def test_answers_the_agents_act_on(agent: str, code: int, stdout: bytes) -> None:
    assert answer_problems(agent, code, stdout) == []


def test_command_line(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wire(project, "claude-code", printed("claude-code"))
    args = ["hook", "doctor", "--agent", "claude-code", "--spec", str(SCRIPTED)]
    assert main([*args, "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("no problems found")
    assert main([*args, "--project", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  [wiring] PreToolUse is not wired" in out
    assert "fix: merge the `hooks` of" in out


def install_codex(home: Path, spec: Path = SCRIPTED) -> None:
    """Wire and trust the hooks as ``harnessweaver hook --agent codex --install`` does."""
    from harnessweaver.hookcmd.codex_setup import install
    from harnessweaver.hookcmd.config import command_line

    wired = printed("codex", spec)
    install(wired, command_line("codex", str(spec.resolve()), None, None), home / ".codex")


def test_codex_installed_is_ok(home: Path, project: Path) -> None:
    install_codex(home)
    report = diagnose(HookOptions("codex", SCRIPTED), project, home)
    assert report.findings == []
    assert any("Codex trusts every hook" in line for line in report.passed)


def test_codex_untrusted_hooks_are_found(home: Path, project: Path) -> None:
    """Wired as printed but never reviewed: Codex would skip every hook without a word."""
    hooks = home / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(json.dumps(printed("codex")))
    report = diagnose(HookOptions("codex", SCRIPTED), project, home, dry_run=False)
    assert set(checks(report)) == {"trust"}
    assert len(report.findings) == len(printed("codex")["hooks"])  # type: ignore[arg-type]
    assert all("is not trusted" in f.problem for f in report.findings)


def test_codex_hooks_changed_since_trusted(home: Path, project: Path, tmp_path: Path) -> None:
    install_codex(home)
    config = home / ".codex" / "config.toml"
    moved = tmp_path / "moved.yaml"
    moved.write_text(SCRIPTED.read_text())
    hooks = home / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text().replace(str(SCRIPTED.resolve()), str(moved)))
    report = diagnose(HookOptions("codex", moved), project, home, dry_run=False)
    assert checks(report) and set(checks(report)) == {"trust"}
    assert "changed since trusted" in report.findings[0].problem
    assert config.is_file()


def test_codex_project_hooks_need_a_trusted_project(home: Path, project: Path) -> None:
    install_codex(home)
    (home / ".codex" / "hooks.json").rename(project / "hooks.json")
    (project / ".codex").mkdir()
    (project / "hooks.json").rename(project / ".codex" / "hooks.json")
    report = diagnose(HookOptions("codex", SCRIPTED), project, home, dry_run=False)
    assert any("is not trusted" in f.problem and "projects" in f.fix for f in report.findings)


def test_cursor_wired_as_printed_fails_closed(home: Path, project: Path) -> None:
    wire_at(project / ".cursor" / "hooks.json", printed("cursor"))
    report = diagnose(HookOptions("cursor", SCRIPTED), project, home)
    assert report.findings == []
    assert "every Cursor handler fails closed" in report.passed


def test_cursor_without_fail_closed_is_found(home: Path, project: Path) -> None:
    """Cursor lets the call through when a hook crashes or times out unless failClosed."""
    config = json.loads(json.dumps(printed("cursor")).replace('"failClosed": true', '"x": 1'))
    wire_at(project / ".cursor" / "hooks.json", config)
    report = diagnose(HookOptions("cursor", SCRIPTED), project, home)
    wired = printed("cursor")["hooks"]
    assert checks(report) == ["fail-closed"] * len(wired)  # type: ignore[arg-type]


@pytest.mark.parametrize("agent", ["copilot", "vscode"])
def test_github_hook_files(agent: str, home: Path, project: Path) -> None:
    report = diagnose(HookOptions(agent, SCRIPTED), project, home)
    assert report.findings and set(checks(report)) == {"wiring"}
    assert ".github/hooks/harnessweaver.json" in report.findings[0].fix
    wire_at(project / ".github" / "hooks" / "harnessweaver.json", printed(agent))
    assert diagnose(HookOptions(agent, SCRIPTED), project, home).ok


def wire_at(path: Path, config: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


def test_settings_and_hooks_nested_too_deeply_are_reported_not_raised(
    home: Path, project: Path
) -> None:
    """The parser's RecursionError (issue 28) is a finding like any unreadable file."""
    deep = "[" * 100_000 + "]" * 100_000
    path = project / SETTINGS["claude-code"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(deep)
    report = diagnose(HookOptions("claude-code", SCRIPTED), project, home)
    assert any(f"{path} cannot be read: RecursionError" in f.problem for f in report.findings)
    hooks = home / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(deep)
    report = diagnose(HookOptions("codex", SCRIPTED), project, home)
    assert any(f"{hooks} cannot be read: RecursionError" in f.problem for f in report.findings)


def test_codex_files_nested_too_deeply_are_refused_not_raised(tmp_path: Path) -> None:
    """The trust check reports the hooks file unreadable; installing refuses to merge into it
    (each raised the parser's RecursionError, issue 28)."""
    from harnessweaver.hookcmd.codex_setup import CodexSetupError, install
    from harnessweaver.hookcmd.trust import check

    hooks = tmp_path / "hooks.json"
    hooks.write_text("[" * 100_000 + "]" * 100_000)
    result = check(hooks, tmp_path / "config.toml", "harnessweaver", ["PreToolUse"])
    assert f"{hooks}: cannot read the hooks (RecursionError)" in result.unreadable
    with pytest.raises(CodexSetupError, match="is not valid JSON; fix it first"):
        install(printed("codex"), "harnessweaver", tmp_path)
