"""``harnessweaver hook`` inside the real Gemini CLI (0.61.0), wired as ``--print-config``
prints it, driven by a scripted fake Gemini API on 127.0.0.1.

Each test is one agent run (two for the resumed session) and checks what the agent really
did: whether the shell command ran (its effect on the working folder) and what the model was
sent next. They assert the target behaviour of issue 27 even where today's hook command
misses it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _gemini import (
    GEMINI,
    GeminiBox,
    GeminiRun,
    hook_timings,
    quantile,
    shell,
    tool_results,
    warm_helpers,
)
from fakemodel.server import Turn

pytestmark = pytest.mark.skipif(not GEMINI.exists(), reason="npm ci in e2e/agents first")

SECRET = "sk-e2eGEMINIsecret0123456789"

PLUGIN = f'''
import json
import harnessweaver as hw

SECRET = {SECRET!r}


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def approve_shell(event, env):
    """A person must approve every shell command."""
    return hw.Suspend("a person must approve run_shell_command", code="needs_approval")


def _scrub(value):
    if isinstance(value, str):
        return value.replace(SECRET, "[redacted]")
    if isinstance(value, dict):
        return {{key: _scrub(item) for key, item in value.items()}}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


@hw.middleware(hooks=["tool.after"], fail_mode="closed")
async def redact_output(event, env):
    """The secret never reaches the model in a tool's result."""
    if SECRET not in json.dumps(event.result.output):
        return None
    return hw.Continue(modified=event.updated({{"result.output": _scrub(event.result.output)}}))


plugin = hw.Plugin(namespace="e2e", version="1.0.0", middleware=[approve_shell, redact_output])
'''

LOOPS = """
middleware:
  - {use: harnessweaver.loop_guard, id: loops, warn_after: null, block_after: 3, window: 10}
"""


@pytest.fixture(scope="module")
def warm_dir() -> Iterator[Path]:
    with warm_helpers() as folder:
        yield folder


def box(tmp_path: Path, warm_dir: Path, spec: str) -> GeminiBox:
    return GeminiBox(tmp_path, spec, warm_dir, **{"e2e_plugin.py": PLUGIN})


def last_results(run: GeminiRun) -> list[str]:
    """The tool results of the last model request of ``run``."""
    conversation = run.conversation()
    assert conversation, f"the model was never asked:\n{run.output[-3000:]}"
    return tool_results(conversation[-1])


def test_a_blocked_tool_never_runs_and_the_model_reads_why(tmp_path: Path, warm_dir: Path) -> None:
    world = box(
        tmp_path,
        warm_dir,
        "middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [read_file]}\n",
    )
    with world.serving([shell("echo ran > marker.txt"), Turn(text="ok")]) as server:
        run = world.run(server, "make the marker")
    assert not (world.work / "marker.txt").exists(), "the blocked command ran"
    results = last_results(run)
    assert len(results) == 1, results
    assert "tool 'run_shell_command' is not allowed (tool_not_allowed)" in results[0]


def test_suspend_is_a_deny_the_model_reads(tmp_path: Path, warm_dir: Path) -> None:
    """Gemini CLI has no ask for the hook command to use: Suspend is documented as a deny."""
    world = box(
        tmp_path,
        warm_dir,
        'plugins: {local: ["e2e_plugin"]}\nmiddleware:\n  - {use: e2e.approve_shell, id: ask}\n',
    )
    with world.serving([shell("echo ran > marker.txt"), Turn(text="ok")]) as server:
        run = world.run(server, "make the marker")
    assert not (world.work / "marker.txt").exists(), "the suspended command ran"
    results = last_results(run)
    assert len(results) == 1, results
    assert "a person must approve run_shell_command (needs_approval)" in results[0]


def test_a_rewritten_tool_call_runs_as_rewritten(tmp_path: Path, warm_dir: Path) -> None:
    world = box(tmp_path, warm_dir, "middleware:\n  - {use: harnessweaver.redact_secrets}\n")
    turns = [shell(f"echo {SECRET} > marker.txt"), Turn(text="ok")]
    with world.serving(turns) as server:
        run = world.run(server, "write the key down")
    marker = world.work / "marker.txt"
    assert marker.exists(), f"the rewritten command did not run:\n{run.output[-3000:]}"
    assert marker.read_text().strip() == "[redacted]"
    assert SECRET not in last_results(run)[0]


def test_a_rewritten_model_request_is_what_the_model_is_sent(
    tmp_path: Path, warm_dir: Path
) -> None:
    """``redact_secrets`` at ``model.before`` (BeforeModel): the prompt's secret never reaches
    the model API."""
    world = box(tmp_path, warm_dir, "middleware:\n  - {use: harnessweaver.redact_secrets}\n")
    with world.serving([Turn(text="noted")]) as server:
        run = world.run(server, f"remember my key {SECRET}")
    sent = run.conversation()
    assert sent, run.output[-3000:]
    assert all(SECRET not in json.dumps(body) for body in sent)
    assert "[redacted]" in json.dumps(sent[0]["contents"])


def test_a_rewritten_tool_result_is_what_the_model_reads(tmp_path: Path, warm_dir: Path) -> None:
    """A Continue(modified) at ``tool.after`` (AfterTool): the model reads the rewritten
    result, or the result is refused; never the original one."""
    world = box(
        tmp_path,
        warm_dir,
        'plugins: {local: ["e2e_plugin"]}\nmiddleware:\n  - {use: e2e.redact_output, id: out}\n',
    )
    key_file = world.root / "key.txt"
    key_file.write_text(SECRET + "\n")
    with world.serving([shell(f"cat {key_file}"), Turn(text="ok")]) as server:
        run = world.run(server, "show the key")
    results = last_results(run)
    assert len(results) == 1, results
    assert SECRET not in results[0], "the model read the result the harness rewrote"


def count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_the_loop_guard_refuses_the_third_identical_call(tmp_path: Path, warm_dir: Path) -> None:
    world = box(tmp_path, warm_dir, LOOPS)
    again = shell("echo x >> count.txt", "count")
    with world.serving([again, again, again, Turn(text="ok")]) as server:
        run = world.run(server, "count three times")
    assert count_lines(world.work / "count.txt") == 2, run.output[-3000:]
    results = last_results(run)
    assert len(results) == 3, results
    assert "loop_detected" in results[2] and "loop_detected" not in results[1]


def test_the_tool_failure_guard_sees_a_failed_shell_command(tmp_path: Path, warm_dir: Path) -> None:
    """Gemini reports a failing command as ``Exit Code: N`` inside ``llmContent``, with no
    ``error`` field: two failures in a row take the shell out of the session."""
    world = box(
        tmp_path,
        warm_dir,
        "middleware:\n  - {use: harnessweaver.tool_failure_guard, id: f, max_consecutive: 2}\n",
    )
    turns = [
        shell("ls /nonexistent-e2e-1", "fail"),
        shell("ls /nonexistent-e2e-2", "fail again"),
        shell("echo ran > marker.txt"),
        Turn(text="ok"),
    ]
    with world.serving(turns) as server:
        run = world.run(server, "try the shell")
    results = last_results(run)
    assert len(results) == 3, results
    assert "Exit Code: 2" in results[1]  # the command did fail, as Gemini reports it
    assert not (world.work / "marker.txt").exists(), "a call after two failures ran"
    assert "tool_failing" in results[2], results[2]


SESSION = "0e2e0000-6e61-4e69-8000-000000000027"


def test_the_loop_guard_counts_across_a_resumed_session(tmp_path: Path, warm_dir: Path) -> None:
    """``gemini -p`` ends each invocation with SessionEnd and ``--resume`` continues the same
    session: the two calls of the first invocation and the one of the resumed invocation are
    three identical calls of one session."""
    world = box(tmp_path, warm_dir, LOOPS)
    again = shell("echo x >> count.txt", "count")
    turns = [again, again, Turn(text="twice"), again, Turn(text="ok")]
    with world.serving(turns) as server:
        first = world.run(server, "count twice", "--session-id", SESSION)
        assert count_lines(world.work / "count.txt") == 2, first.output[-3000:]
        resumed = world.run(server, "once more", "--resume", SESSION)
    # (a resumed Gemini CLI 0.61 sends each earlier functionResponse twice: only the last
    # result is the resumed invocation's own call)
    results = last_results(resumed)
    assert count_lines(world.work / "count.txt") == 2, "the third identical call ran"
    assert "loop_detected" in results[-1], results[-1]


def test_a_spec_that_does_not_load_fails_closed_and_says_so(tmp_path: Path, warm_dir: Path) -> None:
    # --print-config refuses a spec that does not load, so this one breaks after it is wired
    # (edited in the project, or a plugin gone).
    world = box(tmp_path, warm_dir, "middleware:\n  - {use: harnessweaver.redact_secrets}\n")
    world.spec.write_text("middleware:\n  - {use: harnessweaver.no_such_guard}\n")
    with world.serving([shell("echo ran > marker.txt"), Turn(text="ok")]) as server:
        run = world.run(server, "make the marker", debug=False)
    assert not (world.work / "marker.txt").exists(), "a tool ran under a spec that does not load"
    assert "the harness spec does not load" in run.output, run.output[-3000:]


def test_wall_time_per_hook_event(
    tmp_path: Path, warm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reported, never asserted: p50/p99 of the CLI's own figure for each hook event (it
    waits for the command), beside a bare ``python3 -c pass`` measured now."""
    world = box(
        tmp_path,
        warm_dir,
        LOOPS + "  - {use: harnessweaver.redact_secrets}\n",
    )
    turns = [shell(f"echo {n} >> count.txt", f"step {n}") for n in range(2)] + [Turn(text="ok")]
    with world.serving(turns) as server:
        run = world.run(server, "count twice")
    assert count_lines(world.work / "count.txt") == 2, run.output[-3000:]
    timings = hook_timings(run.output)
    wired = set(world.printed_config()["hooks"])
    assert {name for name, _ in timings} == wired, timings
    bare = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(round((time.perf_counter() - start) * 1000))
    lines = [
        f"gemini hook wall time (ms), {len(timings)} events; bare python3 -c pass "
        f"p50 {quantile(bare, 0.5)}"
    ]
    for name in sorted(wired):
        values = [ms for event, ms in timings if event == name]
        lines.append(
            f"  {name:12} n={len(values):2} p50={quantile(values, 0.5):5} "
            f"p99={quantile(values, 0.99):5}"
        )
    every = [ms for _, ms in timings]
    lines.append(
        f"  {'all':12} n={len(every):2} p50={quantile(every, 0.5):5} "
        f"p99={quantile(every, 0.99):5} first two: {[ms for _, ms in timings[:2]]}"
    )
    report = "\n".join(lines)
    with capsys.disabled():
        print("\n" + report)
