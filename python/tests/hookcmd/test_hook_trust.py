"""Codex hook trust: the entries Codex 0.169 needs before it runs a hook, printed beside the
hooks, written with ``--install``, and checked (an untrusted hook is skipped silently)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hookcmd_support import SCRIPTED

from harnessweaver.cli import main
from harnessweaver.hookcmd.config import command_line, snippet
from harnessweaver.hookcmd.trust import check, entries, event_label, render

WIRED = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]

# What Codex 0.169.1's own review ("Trust all and continue") wrote into config.toml for the
# hooks `--print-config` printed for the spec /tmp/cx1/spec.yaml, saved as
# /tmp/cx1/codex/hooks.json (recorded from the real binary).
RECORDED_COMMAND = "harnessweaver hook --agent codex --spec /tmp/cx1/spec.yaml"
RECORDED_FILE = Path("/tmp/cx1/codex/hooks.json")
RECORDED = {
    "/tmp/cx1/codex/hooks.json:pre_tool_use:0:0": (
        "sha256:3fa2c0e98af74c95e996a16e86f5790b0ac4012261fe802d8f8d0bbe8bcaab5c"
    ),
    "/tmp/cx1/codex/hooks.json:post_tool_use:0:0": (
        "sha256:466e9e3aa324ebfafc3d79f03a4a577cfab0f192ce364a40d07e21805bda1105"
    ),
    "/tmp/cx1/codex/hooks.json:session_start:0:0": (
        "sha256:3c266888f8874968195a5eddca3bf1f2004e020d72815a4198cf2836355fdbb9"
    ),
    "/tmp/cx1/codex/hooks.json:user_prompt_submit:0:0": (
        "sha256:36fb4b0f8298792d3a01ef4b1c3493eefce3f7111d45e4daa61b821c9008bce8"
    ),
    "/tmp/cx1/codex/hooks.json:stop:0:0": (
        "sha256:1001dae6fe4dafdf570b51d1068eaf07de342f44f3254ad96c0dd7c4248c5c70"
    ),
}


def _codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_entries_match_what_codex_recorded() -> None:
    wired = snippet("codex", "/tmp/cx1/spec.yaml", None, None)
    assert command_line("codex", "/tmp/cx1/spec.yaml", None, None) == RECORDED_COMMAND
    found = {e.key: e.trusted_hash for e in entries(wired, RECORDED_FILE, RECORDED_COMMAND)}
    # The recording predates wiring SessionEnd (whose hash the clamp test below covers).
    end = f"{RECORDED_FILE}:session_end:0:0"
    assert set(found) == {*RECORDED, end}
    assert {key: found[key] for key in RECORDED} == RECORDED


def test_event_labels_are_codex_snake_case() -> None:
    assert [event_label(e) for e in WIRED] == [
        "session_start",
        "user_prompt_submit",
        "pre_tool_use",
        "post_tool_use",
        "stop",
        "session_end",
    ]


def test_trust_covers_the_command_text() -> None:
    wired = snippet("codex", "/elsewhere/spec.yaml", None, None)
    moved = entries(wired, RECORDED_FILE)
    assert {e.key for e in moved} == {*RECORDED, f"{RECORDED_FILE}:session_end:0:0"}
    assert not {e.trusted_hash for e in moved} & set(RECORDED.values())


def test_print_config_prints_the_trust_beside_the_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _codex_home(tmp_path, monkeypatch)
    assert main(["hook", "--print-config", "--agent", "codex", "--spec", str(SCRIPTED)]) == 0
    out, err = capsys.readouterr()
    hooks = json.loads(out)
    (home / "hooks.json").write_text(out)
    printed = tomllib.loads(err)  # the comment lines and the tables parse as TOML
    command = command_line("codex", str(SCRIPTED.resolve()), None, None)
    want = {e.key: {"trusted_hash": e.trusted_hash} for e in entries(hooks, home / "hooks.json")}
    assert printed == {"hooks": {"state": want}}
    (home / "config.toml").write_text(err)
    assert check(home / "hooks.json", home / "config.toml", command, WIRED).ok


def test_install_writes_trusted_hooks_and_keeps_the_users_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _codex_home(tmp_path, monkeypatch)
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}}
    (home / "hooks.json").write_text(json.dumps(mine))
    (home / "config.toml").write_text('model = "m"\n\n[projects."/p"]\ntrust_level = "trusted"')
    argv = ["hook", "--install", "--agent", "codex", "--spec", str(SCRIPTED)]
    assert main(argv) == 0
    config = tomllib.loads((home / "config.toml").read_text())
    hooks = json.loads((home / "hooks.json").read_text())
    assert config["model"] == "m" and config["projects"] == {"/p": {"trust_level": "trusted"}}
    assert hooks["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]  # the user's hook, first
    assert list(hooks["hooks"]) == ["Stop", *[e for e in WIRED if e != "Stop"]]
    command = command_line("codex", str(SCRIPTED.resolve()), None, None)
    result = check(home / "hooks.json", home / "config.toml", command, WIRED)
    assert result.ok, result.problems()
    assert len(result.hooks) == len(WIRED)
    # the user's own hook is not trusted on their behalf
    assert "notify-me" not in json.dumps(config["hooks"]["state"])
    assert all(":stop:1:0" in key or ":stop:" not in key for key in config["hooks"]["state"])
    before = ((home / "hooks.json").read_text(), (home / "config.toml").read_text())
    assert main(argv) == 0  # once more: nothing changes
    assert ((home / "hooks.json").read_text(), (home / "config.toml").read_text()) == before


def test_install_replaces_an_older_hash_of_the_same_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _codex_home(tmp_path, monkeypatch)
    argv = ["hook", "--install", "--agent", "codex", "--spec", str(SCRIPTED)]
    assert main(argv) == 0
    hooks = json.loads((home / "hooks.json").read_text())
    del hooks["hooks"]["SessionEnd"]  # Codex clamps its timeout to 3 s: 31 hashes as 30 does
    for groups in hooks["hooks"].values():
        groups[0]["hooks"][0]["timeout"] = 31  # the hooks changed since they were trusted
    (home / "hooks.json").write_text(json.dumps(hooks))
    command = command_line("codex", str(SCRIPTED.resolve()), None, None)
    stale = check(home / "hooks.json", home / "config.toml", command, WIRED)
    assert {h.status for h in stale.hooks} == {"modified"} and not stale.ok
    for groups in hooks["hooks"].values():
        groups[0]["hooks"][0]["timeout"] = 30
    (home / "hooks.json").write_text(json.dumps(hooks))
    text = (home / "config.toml").read_text()
    first = next(iter(RECORDED.values()))
    key = next(iter(tomllib.loads(text)["hooks"]["state"]))
    old = tomllib.loads(text)["hooks"]["state"][key]["trusted_hash"]
    (home / "config.toml").write_text(text.replace(old, first))
    assert main(argv) == 0
    assert tomllib.loads((home / "config.toml").read_text())["hooks"]["state"][key] == {
        "trusted_hash": old
    }
    assert check(home / "hooks.json", home / "config.toml", command, WIRED).ok


def test_install_refuses_what_it_cannot_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _codex_home(tmp_path, monkeypatch)
    (home / "config.toml").write_text("hooks = [1]\n")  # not a table: no trust can be added
    argv = ["hook", "--install", "--agent", "codex", "--spec", str(SCRIPTED)]
    assert main(argv) == 2
    assert "config.toml" in capsys.readouterr().err
    assert (home / "config.toml").read_text() == "hooks = [1]\n"
    assert not (home / "hooks.json").exists()  # no hook without its trust
    other = ["hook", "--install", "--agent", "gemini", "--spec", str(SCRIPTED)]
    assert main(other) == 2


def test_check_reports_untrusted_disabled_missing_and_unreadable(tmp_path: Path) -> None:
    hooks_file, config_file = tmp_path / "hooks.json", tmp_path / "config.toml"
    command = command_line("codex", "/s.yaml", None, None)
    wired = snippet("codex", "/s.yaml", None, None)
    del wired["hooks"]["Stop"]
    hooks_file.write_text(json.dumps(wired))
    untrusted = check(hooks_file, config_file, command, WIRED)  # no config.toml at all
    assert not untrusted.ok and untrusted.missing == ("Stop",)
    assert {h.status for h in untrusted.hooks} == {"untrusted"}
    problems = untrusted.problems()
    assert len(problems) == 1 + len(WIRED) - 1 and "Stop" in problems[0]
    assert all("skips it silently" in line for line in problems[1:])
    [pre] = [e for e in entries(wired, hooks_file) if e.event == "PreToolUse"]
    config_file.write_text(render(entries(wired, hooks_file)))
    last = entries(wired, hooks_file)[-1].event
    with config_file.open("a") as out:
        out.write("enabled = false\n")  # appended to the last table: that hook is disabled
    judged = {h.entry.event: h.status for h in check(hooks_file, config_file, command, WIRED).hooks}
    assert last != "PreToolUse"
    assert judged["PreToolUse"] == "trusted" and judged[last] == "disabled"
    other = check(hooks_file, config_file, "harnessweaver hook --agent codex --spec /x", WIRED)
    assert other.hooks == () and other.missing == tuple(WIRED)
    config_file.write_text("[[[")
    broken = check(hooks_file, config_file, command, WIRED)
    assert not broken.ok and "TOMLDecodeError" in broken.problems()[0]
    assert pre.key == f"{hooks_file}:pre_tool_use:0:0"


def test_a_session_end_handler_is_trusted_with_codex_clamped_timeout(tmp_path: Path) -> None:
    # Codex 0.169.1 warns "clamping SessionEnd hook timeout to 3s" and hashes the clamped
    # handler: trust written for 30 s left the real binary skipping the hook.
    handler = {"type": "command", "command": RECORDED_COMMAND, "timeout": 30}
    hooks = {"hooks": {"SessionEnd": [{"hooks": [handler]}]}}
    [entry] = entries(hooks, tmp_path / "hooks.json")
    three = {"hooks": {"SessionEnd": [{"hooks": [{**handler, "timeout": 3}]}]}}
    assert entry.trusted_hash == entries(three, tmp_path / "hooks.json")[0].trusted_hash
    stop = {"hooks": {"Stop": [{"hooks": [handler]}]}}
    assert entries(stop, RECORDED_FILE)[0].trusted_hash == RECORDED[f"{RECORDED_FILE}:stop:0:0"]


def test_install_refuses_a_spec_that_does_not_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _codex_home(tmp_path, monkeypatch)
    argv = ["hook", "--install", "--agent", "codex", "--spec", str(SCRIPTED), "--task", "nope"]
    assert main(argv) == 2
    assert "does not load" in capsys.readouterr().err
    assert not (home / "hooks.json").exists() and not (home / "config.toml").exists()
