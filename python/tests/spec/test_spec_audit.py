"""Audit mode in a harness spec (I25): an item's ``mode:``, a harness-wide ``mode:`` and an env
overlay's, the baseline rule by layer, and what ``harnessweaver hooks`` shows."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from spec_support import only_problem, plugged, tool_call, write

import harnessweaver as hw
from harnessweaver.cli import EXIT_OK, main

SPEC = """
profiles:
  - org://acme/base
  - profile://acme.baseline
mode: audit
middleware:
  - {use: acme.guard}
  - {use: acme.refund_cap, id: cap, max_usd: 500, mode: enforce}
envs:
  prod:
    mode: enforce
tasks:
  refund:
    mode: audit
    validation:
      rules:
        - {use: acme.refund_cap, id: small_cap, max_usd: 50}
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    write(tmp_path / "org", "middleware: [{use: acme.guard, id: org_guard, mode: audit}]\n",
          "acme/base.yaml")  # fmt: skip
    return write(tmp_path, plugged(SPEC))


def modes(harness: hw.Harness) -> dict[str, str]:
    return {entry.name: entry.declaration.mode for entry in harness.entries}


def test_harness_mode_audits_items_without_their_own_and_never_reaches_profiles(
    spec: Path, tmp_path: Path
) -> None:
    harness = hw.load(spec, org_profiles=[tmp_path / "org"])
    assert harness.mode == "audit"
    assert modes(harness) == {
        "org_guard": "audit",  # the org's own item says so
        "acme_trace": "enforce",  # a plugin profile's item: the harness mode stops at baseline
        "acme.guard": "audit",  # the harness-wide mode
        "cap": "enforce",  # its own mode wins
    }


def test_an_env_overlay_flips_the_harness_mode(spec: Path, tmp_path: Path) -> None:
    harness = hw.load(spec, env="prod", org_profiles=[tmp_path / "org"])
    assert harness.mode == "enforce"
    assert modes(harness)["acme.guard"] == "enforce"
    assert modes(harness)["org_guard"] == "audit"


def test_a_task_mode_wins_over_the_env_for_the_harness_it_selects(
    spec: Path, tmp_path: Path
) -> None:
    harness = hw.load(spec, env="prod", task="refund", org_profiles=[tmp_path / "org"])
    assert harness.mode == "audit"
    assert modes(harness) == {
        "org_guard": "audit",
        "acme_trace": "enforce",
        "acme.guard": "audit",
        "cap": "enforce",
        "small_cap": "audit",
    }


def test_audited_items_run_and_are_traced_but_do_not_block(spec: Path, tmp_path: Path) -> None:
    harness = hw.load(spec, org_profiles=[tmp_path / "org"])
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="r"))

    async def go() -> hw.HookResult:
        return await harness.bus.emit("tool.before", tool_call(blocked=True), ctx)

    result = anyio.run(go)
    assert isinstance(result.outcome, hw.Continue)
    audited = [r["middleware"] for r in ctx.trace.records() if r.get("audit")]
    assert audited == ["org_guard", "acme.guard"]
    assert {r["outcome"] for r in ctx.trace.records() if r.get("audit")} == {"block"}


def test_hooks_shows_a_mode_column_json_and_mermaid(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESSWEAVER_ORG_PROFILES", str(tmp_path / "org"))
    assert main(["hooks", str(spec)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "(task: none, env: none, mode: audit)" in out
    section = out.split("tool.before  (inbound, outermost first)\n")[1].split("\n\n")[0]
    header, *rows = section.splitlines()
    assert header.split()[6:9] == ["timeout", "mode", "layer"]
    assert [row.split()[1] for row in rows if " audit " in row] == ["org_guard", "acme.guard"]
    assert main(["hooks", str(spec), "--format", "json"]) == EXIT_OK
    chain = json.loads(capsys.readouterr().out)["hooks"][4]["chain"]
    assert [entry.get("mode") for entry in chain] == ["audit", None, "audit", None]
    assert main(["hooks", str(spec), "--format", "mermaid"]) == EXIT_OK
    assert "org_guard<br/>baseline, closed, 2s, audit" in capsys.readouterr().out
    assert main(["hooks", str(spec), "--env", "prod"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "mode: enforce)" in out


def test_no_mode_anywhere_shows_no_mode_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(tmp_path, plugged("middleware: [{use: acme.guard}]\n"))
    assert main(["hooks", str(spec)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "audit" not in out
    header = out.split("tool.before  (inbound, outermost first)\n")[1].splitlines()[0]
    assert header.split()[6:8] == ["timeout", "layer"]  # no mode column between them
    assert main(["hooks", str(spec), "--format", "json"]) == EXIT_OK
    assert '"mode"' not in capsys.readouterr().out


@pytest.mark.parametrize(
    "profile",
    [
        "profile: acme.extra\nmiddleware: [{use: acme.guard, id: g, mode: audit}]\n",
        "middleware:\n  - use: acme.guard\n    mode: audit\n",
    ],
)
def test_a_profile_file_cannot_audit_baseline(tmp_path: Path, profile: str) -> None:
    write(tmp_path, profile, "profiles/extra.yaml")
    spec = write(tmp_path, plugged("profiles: [./profiles/extra.yaml]\n"))
    problem = only_problem(spec)
    assert (problem.kind, problem.rule) == ("baseline_audit_not_org", "I25")
    # Reported at the item's mode: line of the profile file.
    assert (problem.file, problem.line) == ("profiles/extra.yaml", len(profile.splitlines()))


def test_a_bad_mode_is_reported_at_its_line(tmp_path: Path) -> None:
    spec = write(tmp_path, plugged("middleware:\n  - use: acme.guard\n    mode: loud\n"))
    problem = only_problem(spec)
    assert (problem.kind, problem.rule, problem.line) == ("invalid_mode", "I25", 4)
    assert "'loud'" in problem.message
    text = "mode: dry_run\nenvs:\n  prod: {mode: Audit}\ntasks:\n  t: {mode: 1}\n"
    spec = write(tmp_path, plugged(text))
    with pytest.raises(hw.SpecError) as caught:
        hw.load(spec)
    assert [(p.kind, p.item, p.line) for p in caught.value.problems] == [
        ("invalid_mode", "mode", 2),
        ("invalid_mode", "envs.prod.mode", 4),
        ("invalid_mode", "tasks.t.mode", 6),
    ]
