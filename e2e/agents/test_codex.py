"""``harnessweaver hook`` inside the real Codex CLI 0.169.1, driven by a scripted fake OpenAI
Responses server on 127.0.0.1, the hooks wired exactly as ``--print-config`` prints them (the
hooks as ``$CODEX_HOME/hooks.json``, the trust tables it prints beside them appended to
``$CODEX_HOME/config.toml``).

Each test is one or two ``codex exec`` runs of a few seconds. They assert what the harness must
do inside Codex; where today's hook command falls short the test fails and says why.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from _codex import CODEX, CodexBox, CodexRun, Turn, percentiles, shell

from harnessweaver.hookcmd.config import command_line
from harnessweaver.hookcmd.trust import check, entries, render

WIRED = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
RECORDED = Path(__file__).parent / "recorded" / "codex"
GATE = """\
plugins:
  local: ["e2e_plugin"]
middleware:
  - {use: e2e.gate, id: gate}
"""
PRECIOUS = "precious data\n"

TIMES: dict[str, list[float]] = defaultdict(list)
"""Every hook call's wall time, by event, over the whole file (reported, never asserted)."""


@pytest.fixture
def box(tmp_path: Path) -> Iterator[CodexBox]:
    assert CODEX.exists(), f"{CODEX} is missing: npm ci in e2e/agents"
    with CodexBox(tmp_path) as made:
        (made.project / "precious.txt").write_text(PRECIOUS)
        yield made


def _timed(run: CodexRun) -> CodexRun:
    for call in run.hooks:
        TIMES[call.event].append(call.seconds)
    return run


def _calls(run: CodexRun, event: str) -> list[str]:
    return [
        str(c.document.get("tool_input", {}).get("command")) for c in run.hooks if c.event == event
    ]


def test_a_blocked_command_never_runs_and_the_model_reads_why(box: CodexBox) -> None:
    box.wire(box.spec(GATE))
    destroy = "printf gone > precious.txt # HW_BLOCK"
    run = _timed(box.run([shell(destroy), Turn(text="done")]))
    assert run.status == 0, run.stderr
    assert (box.project / "precious.txt").read_text() == PRECIOUS
    assert _calls(run, "PreToolUse") == [destroy] and _calls(run, "PostToolUse") == []
    [result] = run.tool_results()
    assert "e2e: destructive command refused" in result


def test_suspend_is_a_deny_in_codex(box: CodexBox) -> None:
    box.wire(box.spec(GATE))
    destroy = "printf gone > precious.txt # HW_SUSPEND"
    run = _timed(box.run([shell(destroy), Turn(text="done")]))
    assert (box.project / "precious.txt").read_text() == PRECIOUS
    [pre] = [c for c in run.hooks if c.event == "PreToolUse"]
    answer = json.loads(pre.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"  # Codex has no ask: it would run the tool
    [result] = run.tool_results()
    assert "a person must approve this command" in result


def test_a_rewrite_runs_as_rewritten(box: CodexBox) -> None:
    box.wire(
        box.spec(
            """\
            middleware:
              - {use: harnessweaver.redact_secrets, id: secrets, patterns: ["sk-[A-Za-z0-9]{8,}"]}
            """
        )
    )
    leak = "echo sk-abcdefgh12345678 > out.txt"
    run = _timed(box.run([shell(leak), Turn(text="done")]))
    assert run.status == 0, run.stderr
    assert (box.project / "out.txt").read_text() == "[redacted]\n"
    [post] = [c for c in run.hooks if c.event == "PostToolUse"]
    assert post.document["tool_input"] == {"command": "echo [redacted] > out.txt"}
    assert all("sk-abcdefgh" not in result for result in run.tool_results())


LOOPS = """\
middleware:
  - {use: harnessweaver.loop_guard, id: loops, warn_after: null, block_after: 3, window: 10}
"""
TICK = "echo tick >> ticks.txt"


def test_the_loop_guard_blocks_the_third_repeat_within_a_session(box: CodexBox) -> None:
    box.wire(box.spec(LOOPS))
    run = _timed(box.run([shell(TICK), shell(TICK), shell(TICK), Turn(text="done")]))
    assert (box.project / "ticks.txt").read_text() == "tick\n" * 2
    assert len(_calls(run, "PreToolUse")) == 3 and len(_calls(run, "PostToolUse")) == 2
    assert "with the same arguments 3 times" in run.tool_results()[-1]


def test_the_loop_guard_counts_across_a_resumed_session(box: CodexBox) -> None:
    box.wire(box.spec(LOOPS))
    first = _timed(box.run([shell(TICK), shell(TICK), Turn(text="paused")]))
    assert first.session and (box.project / "ticks.txt").read_text() == "tick\n" * 2
    turns = [shell(TICK), shell(TICK), shell(TICK), Turn(text="done")]
    second = _timed(box.run(turns, "go on", resume=first.session))
    assert {c.document["session_id"] for c in second.hooks} == {first.session}
    assert _calls(second, "PreToolUse") == [TICK]
    assert (box.project / "ticks.txt").read_text() == "tick\n" * 2  # the third never ran
    assert "with the same arguments 3 times" in second.tool_results()[-1]


def test_a_spec_that_does_not_load_fails_closed_and_says_so(box: CodexBox) -> None:
    spec = box.spec(GATE)
    box.wire(spec)
    spec.write_text("middleware:\n  - {use: harnessweaver.no_such_guard, id: x}\n")  # broken later
    run = _timed(box.run([shell("printf gone > precious.txt"), Turn(text="done")]))
    assert (box.project / "precious.txt").read_text() == PRECIOUS
    assert run.hooks, "Codex ran no hook"
    for call in run.hooks:  # every event refused, with one line naming the spec's problem
        assert call.status == 2, call
        assert "spec does not load" in call.stderr and "no_such_guard" in call.stderr
    # Codex 0.169.1 refuses the prompt ("hook: UserPromptSubmit Blocked"): no model request at
    # all. `codex exec` shows no hook's reason anywhere (stderr, --json, transcript).
    assert "hook: UserPromptSubmit Blocked" in run.stderr
    assert run.requests == []


def test_untrusted_hooks_are_detected_and_codex_runs_none_of_them(box: CodexBox) -> None:
    spec = box.spec(GATE)
    box.wire(spec, trust=False)  # the hooks as printed, the trust tables left out
    command = command_line("codex", str(spec.resolve()), None, None)
    hooks_file, config = box.codex_home / "hooks.json", box.codex_home / "config.toml"
    found = check(hooks_file, config, command, WIRED)
    assert not found.ok and found.missing == ()
    assert [h.status for h in found.hooks] == ["untrusted"] * len(WIRED)
    # What Codex does with them: nothing, silently; the refused command runs (fail open).
    destroy = "printf gone > precious.txt # HW_BLOCK"
    run = box.run([shell(destroy), Turn(text="done")])
    assert run.hooks == [] and "hook:" not in run.stderr
    assert (box.project / "precious.txt").read_text() == "gone"
    # Trusted as printed: detected as such, and Codex runs them.
    box.wire(spec)
    assert check(hooks_file, config, command, WIRED).ok
    (box.project / "precious.txt").write_text(PRECIOUS)
    run = _timed(box.run([shell(destroy), Turn(text="done")]))
    assert run.events()[:3] == ["SessionStart", "UserPromptSubmit", "PreToolUse"]
    assert (box.project / "precious.txt").read_text() == PRECIOUS


def test_the_documents_codex_sends_keep_their_recorded_shape(box: CodexBox) -> None:
    """One session with SessionEnd wired too (trusted as ``trust.entries`` computes it): each
    event document has the fields recorded in ``recorded/codex``; a failing command's
    PostToolUse carries its output as a bare string (the failure is not visible)."""
    spec = box.spec(LOOPS)
    box.wire(spec, trust=False)
    hooks_file = box.codex_home / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    if "SessionEnd" not in hooks["hooks"]:
        handler = dict(hooks["hooks"]["Stop"][0]["hooks"][0])
        hooks["hooks"]["SessionEnd"] = [{"hooks": [handler]}]
        hooks_file.write_text(json.dumps(hooks, indent=2))
    with (box.codex_home / "config.toml").open("a") as config:
        config.write(render(entries(hooks, hooks_file)))
    run = _timed(box.run([shell("echo one"), shell("ls /nonexistent-dir"), Turn(text="done")]))
    events = run.events()
    assert events == WIRED[:2] + ["PreToolUse", "PostToolUse"] * 2 + ["Stop", "SessionEnd"]
    posts = [c.document for c in run.hooks if c.event == "PostToolUse"]
    assert posts[1]["tool_response"] == (
        "ls: cannot access '/nonexistent-dir': No such file or directory\n"
    )
    named = {"PostToolUse": posts[0], "PostToolUse.failed": posts[1]}
    for call in run.hooks:
        named.setdefault(call.event, call.document)
    for name, document in named.items():
        recorded = json.loads((RECORDED / f"{name}.json").read_text())
        assert sorted(document) == sorted(recorded), name
        assert {k: type(v) for k, v in document.items()} == {
            k: type(v) for k, v in recorded.items()
        }, name
    [end] = [c for c in run.hooks if c.event == "SessionEnd"]
    assert end.status == 0, f"SessionEnd answered {end.status}: {end.stderr.strip()}"


def test_zz_report_the_wall_time_per_hook_event(capsys: pytest.CaptureFixture[str]) -> None:
    """p50/p99 of the hook command's wall time per event inside Codex, over this file's runs
    (printed; never asserted)."""
    assert TIMES, "no hook ran in this file"
    lines = ["", "harnessweaver hook inside Codex 0.169.1, wall time per event (s):"]
    for event, seconds in sorted(TIMES.items()):
        p50, p99 = percentiles(seconds)
        lines.append(f"  {event:<17} n={len(seconds):<3} p50={p50:.3f} p99={p99:.3f}")
    bare = []
    for _ in range(5):  # the yardstick, measured in the same run
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    lines.append(f"  bare python -c pass    p50={statistics.median(bare):.3f}")
    with capsys.disabled():
        print("\n".join(lines))
