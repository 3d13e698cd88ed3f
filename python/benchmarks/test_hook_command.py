"""``harnessweaver hook``: the wall time of one event, a whole process (a coding agent starts
one per event), side by side with a bare ``python -c pass`` of the same interpreter timed in
the same round (the floor: what any Python hook pays before doing anything).

Three rows (docs/performance.md, "The hook command"):

- ``hook-command``: a warm helper already serves (``hookcmd/warm.py``), the hook started as
  ``warm.command_line()`` runs it (``python -S -P .../hookcmd/warm.py``): the target, <= 2x.
- ``hook-command-cli``: the same through the ``harnessweaver`` command line (``python -m
  harnessweaver.cli hook``, what the console script runs): ``site``, the package and argparse.
- ``hook-command-cold``: no helper (``HARNESSWEAVER_HOOK_WARM=0``): the whole start-up in the
  process, what an event pays where no helper can run: the target, <= 10x.

The event is a ``PreToolUse`` of Claude Code through ``profile://agent-guards`` (loop guard,
tool-failure guard, PII redaction), with the session's state in SQLite: what a hook pays on
every tool call. Each call has other arguments, so the loop guard lets all of them through,
which the benchmark checks. Bytecode is written once (a warm-up), as an installed wheel has
it, even where ``PYTHONDONTWRITEBYTECODE`` is set. Besides the paired ratio of the rounds,
each process is timed alone: p50 and p99 of the hooks and of the floors go in ``extra_info``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conftest import ROUNDS, measure

from harnessweaver.hookcmd import warm

PER = 3
"""Processes per round (each 0.1-0.5 s)."""

_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _event(number: int) -> bytes:
    doc = {
        "session_id": "bench-session",
        "transcript_path": "/tmp/bench.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"echo {number}"},
        "tool_use_id": f"toolu_{number}",
    }
    return json.dumps(doc).encode()


def _spawn(command: list[str], env: dict[str, str], number: int) -> tuple[int, bytes, bytes]:
    done = subprocess.run(command, input=_event(number), capture_output=True, env=env, check=False)
    return done.returncode, done.stdout, done.stderr


def _percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``times`` in milliseconds (nearest rank)."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1e3, p99 * 1e3


def _per_event(
    benchmark: Any,
    runner: asyncio.Runner,
    tmp_path: Path,
    env: dict[str, str],
    workload: str,
    start: list[str],
    rounds: int,
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("profiles: [profile://agent-guards]\n")
    command = [*start, "--agent", "claude-code"]
    command += ["--spec", str(spec), "--state", str(tmp_path / "state.sqlite3")]
    numbers = itertools.count()
    answers: list[tuple[int, bytes, bytes]] = []
    hooks: list[float] = []
    floors: list[float] = []

    def hook() -> None:
        started = time.perf_counter()
        answers.append(_spawn(command, env, next(numbers)))
        hooks.append(time.perf_counter() - started)

    async def batch() -> None:
        for _ in range(PER):
            hook()

    async def floor() -> None:
        for _ in range(PER):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            floors.append(time.perf_counter() - started)

    hook()  # writes the bytecode, creates the database (and starts the warm helper)
    folder = env.get(warm.DIR_ENV)
    if folder is not None:
        _wait(lambda: any(serving(path) for path in Path(folder).glob("hook-*.sock")))
    hooks.clear()
    measure(
        benchmark,
        runner,
        batch,
        group="hook-command",
        floor=floor,
        rounds=rounds,
        workload=workload,
        kind="claude-code PreToolUse",
        n=None,
        per=PER,
    )
    assert answers and all(answer == (0, b"", b"") for answer in answers), answers[-1]
    (p50, p99), (floor_p50, floor_p99) = _percentiles(hooks), _percentiles(floors)
    benchmark.extra_info.update(
        p50_ms=p50, p99_ms=p99, floor_p50_ms=floor_p50, floor_p99_ms=floor_p99
    )


def serving(path: Path) -> bool:
    """Whether a helper acknowledges a connection on ``path`` (it is ready, not starting)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(path))
            return conn.recv(1) == warm.ACK
        except OSError:
            return False


def _wait(ready: Any) -> None:
    deadline = time.monotonic() + 120  # a helper that never comes fails the benchmark
    while not ready():
        assert time.monotonic() < deadline, "the warm helper did not start"
        time.sleep(0.05)


CLI = [sys.executable, "-m", "harnessweaver.cli", "hook"]


def _warm_rows(
    benchmark: Any, runner: asyncio.Runner, tmp_path: Path, workload: str, start: list[str]
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="hw-"))  # short: Unix socket paths are limited
    env = {**_ENV, warm.ENV: "1", warm.DIR_ENV: str(folder)}
    try:
        _per_event(benchmark, runner, tmp_path, env, workload, start, ROUNDS)
    finally:
        for lock in folder.glob("hook-*.sock.lock"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(lock.read_text()), signal.SIGTERM)
        shutil.rmtree(folder, ignore_errors=True)


def test_hook_command_per_event(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    """A helper already serves (every event of a session but the machine's first)."""
    _warm_rows(benchmark, runner, tmp_path, "hook-command", warm.command_line())


def test_hook_command_per_event_cli(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    """A helper already serves; the hook started through the ``harnessweaver`` command line."""
    _warm_rows(benchmark, runner, tmp_path, "hook-command-cli", CLI)


def test_hook_command_per_event_cold(
    benchmark: Any, runner: asyncio.Runner, tmp_path: Path
) -> None:
    """No helper (``HARNESSWEAVER_HOOK_WARM=0``): the whole start-up."""
    env = {**_ENV, warm.ENV: "0"}
    start = warm.command_line()
    _per_event(benchmark, runner, tmp_path, env, "hook-command-cold", start, min(ROUNDS, 11))
