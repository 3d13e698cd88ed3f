"""``harnessweaver bench SPEC`` on the refunds example: the table, the JSON document of the
shared contract (issue 34), the spec's task and env, ``--hook``, and the refusals (exit 2).
Nothing here judges a time: only the structure, and that every figure is finite and > 0."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_support import QUICK, bench, bench_json, write_spec
from checkout import require_checkout

import harnessweaver as hw
from harnessweaver.cli import main

ROOT = require_checkout()
REFUNDS = ROOT / "examples" / "refunds"
SPEC = REFUNDS / "harness.yaml"
ORG = ("--org-profiles", str(REFUNDS / "org"))
LABEL = "python-rust" if hw.CORE == "rust" else "python-pure"
KEYS = [
    "harnessweaver_bench",
    "implementation",
    "spec",
    "task",
    "env",
    "events",
    "rounds",
    "per",
    "hooks",
]
HOOK_KEYS = [
    "hook",
    "middleware",
    "events",
    "emit",
    "floor",
    "ratio",
    "outcomes",
    "dominant",
    "each",
]


def chains(**selection: str) -> dict[str, list[str]]:
    """The refunds chains as the loader builds them (every hook point has middleware)."""
    harness = hw.load(SPEC, org_profiles=[REFUNDS / "org"], **selection)  # type: ignore[arg-type]
    return {hook: [d.name for d in harness.bus.chain(hook)] for hook in hw.EVENT_TYPES}


def positive(value: Any) -> bool:
    return isinstance(value, float) and math.isfinite(value) and value > 0


def test_the_json_document_has_every_key_and_names_every_chain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = bench_json(capsys, SPEC, *ORG)
    assert list(doc) == KEYS
    assert doc["harnessweaver_bench"] == 1
    assert doc["implementation"] == LABEL
    assert (doc["spec"], doc["task"], doc["env"], doc["events"]) == (
        str(SPEC),
        None,
        None,
        "samples",
    )
    assert (doc["rounds"], doc["per"]) == (3, 10)
    expected = chains()
    assert [entry["hook"] for entry in doc["hooks"]] == list(expected)
    for entry in doc["hooks"]:
        assert list(entry) == HOOK_KEYS
        assert entry["middleware"] == expected[entry["hook"]]
        assert entry["events"] == 1
        for figure in (entry["emit"], entry["floor"]):
            assert list(figure) == ["p50_ns", "p99_ns"]
            assert all(positive(value) for value in figure.values())
            assert figure["p99_ns"] >= figure["p50_ns"]
        assert positive(entry["ratio"])
        assert sum(entry["outcomes"].values()) == 10  # one timed round of 10 emits
        assert [item["name"] for item in entry["each"]] == entry["middleware"]
        for item in entry["each"]:
            assert list(item) == ["name", "use", "p50_ns", "share"]
            assert positive(item["p50_ns"]) and 0 < item["share"] <= 1
        assert math.isclose(sum(item["share"] for item in entry["each"]), 1.0)
        top = max(entry["each"], key=lambda item: item["share"])
        assert entry["dominant"] == {k: top[k] for k in ("name", "use", "share")}
    uses = {item["name"]: item["use"] for entry in doc["hooks"] for item in entry["each"]}
    assert uses["audit"] == "acme.audit_tracer" and uses["cap"] == "acme.refund_cap"


def test_the_table_shows_every_hook_point_and_what_to_act_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = bench(capsys, SPEC, *ORG)
    assert status == 0, err
    assert err == ""  # no progress bar off a terminal
    assert LABEL in out and "events: samples" in out
    for column in ("emit p50", "emit p99", "floor p50", "ratio", "dominant (share)", "outcomes"):
        assert column in out
    rows = {line.split()[0] for line in out.splitlines() if line.split()}
    assert set(hw.EVENT_TYPES) <= rows
    assert "of the chain's own time" in out  # tool.before has 5 middleware: one dominates
    assert "floor = the same middleware awaited in a plain loop" in out


def test_task_and_env_select_their_middleware(capsys: pytest.CaptureFixture[str]) -> None:
    doc = bench_json(capsys, SPEC, *ORG, "--task", "refund", "--env", "staging")
    assert (doc["task"], doc["env"]) == ("refund", "staging")
    tool = next(entry for entry in doc["hooks"] if entry["hook"] == "tool.before")
    assert tool["middleware"] == chains(task="refund", env="staging")["tool.before"]
    assert {"staging_tools", "pii", "small_cap"} <= set(tool["middleware"])


def test_hook_narrows_to_the_hook_points_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    doc = bench_json(capsys, SPEC, *ORG, "--hook", "task.end", "--hook", "tool.before")
    assert [entry["hook"] for entry in doc["hooks"]] == ["tool.before", "task.end"]


@pytest.mark.parametrize("hook", ["tool.middle", ""])
def test_an_unknown_hook_is_refused_by_name(capsys: pytest.CaptureFixture[str], hook: str) -> None:
    status, out, err = bench(capsys, SPEC, *ORG, "--hook", hook)
    assert (status, out) == (2, "")
    assert f"--hook {hook!r} is not a hook point" in err


def test_a_hook_point_without_middleware_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, "  - {use: benchy.light, id: only}\n")
    status, out, err = bench(capsys, spec, "--hook", "task.start")
    assert (status, out) == (2, "")
    assert "--hook task.start: no middleware runs there" in err


def test_a_spec_that_does_not_load_exits_2_with_its_problems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, "  - {use: benchy.nothing_here}\n")
    status, out, err = bench(capsys, spec)
    assert (status, out) == (2, "")
    assert str(spec) in err and "benchy.nothing_here" in err


def test_the_spec_s_own_org_folder_when_no_org_profiles_are_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``harnessweaver bench examples/refunds/harness.yaml`` as the issue writes it: its
    ``org://`` profiles come from the ``org/`` folder beside it, and the command says so. A
    directory given (flag or variable) is the only one looked in; no ``org/`` beside: the
    loader's problem, exit 2."""
    monkeypatch.delenv("HARNESSWEAVER_ORG_PROFILES", raising=False)
    status, out, err = bench(capsys, SPEC, "--hook", "task.start")
    assert status == 0 and "audit" in out
    assert f"org:// profiles from {REFUNDS / 'org'}, the spec's own org/ folder" in err
    status, _, err = bench(capsys, SPEC, "--hook", "task.start", *ORG)
    assert status == 0 and "org/ folder" not in err
    monkeypatch.setenv("HARNESSWEAVER_ORG_PROFILES", str(tmp_path))
    status, _, err = bench(capsys, SPEC, "--hook", "task.start")
    assert status == 2 and "org://acme/baseline" in err and "org/ folder" not in err
    monkeypatch.delenv("HARNESSWEAVER_ORG_PROFILES")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "harness.yaml").write_text("profiles: [org://acme/baseline]\n", encoding="utf-8")
    status, _, err = bench(capsys, lone / "harness.yaml")
    assert status == 2 and "no org-profile directories are set" in err


def test_the_spec_and_events_are_named_as_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_spec(tmp_path, "  - {use: benchy.light, id: only}\n")
    monkeypatch.chdir(tmp_path)
    doc = bench_json(capsys, "./harness.yaml")
    assert doc["spec"] == "./harness.yaml"


@pytest.mark.parametrize(("option", "value"), [("--rounds", "2"), ("--per", "0")])
def test_too_few_rounds_or_emits_are_refused(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["bench", str(SPEC), option, value])
    assert done.value.code == 2
    assert f"{option}: must be at least" in capsys.readouterr().err


def test_the_installed_command_prints_one_json_document() -> None:
    command = [sys.executable, "-m", "harnessweaver", "bench", str(SPEC), *ORG, *QUICK]
    done = subprocess.run(
        [*command, "--format", "json", "--hook", "tool.before"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["implementation"] == LABEL and [e["hook"] for e in doc["hooks"]] == ["tool.before"]
