"""``harnessweaver hook``: the wall time of one event, a whole process (a coding agent starts
one per event), side by side with a bare ``python -c pass`` of the same interpreter timed in
the same round (the floor: what any Python hook pays before doing anything).

Two rows: with a warm helper already serving (``hookcmd/warm.py``: what every event but a
machine's first pays; the target), and cold (``HARNESSWEAVER_HOOK_WARM=0``: the whole
start-up, what the first event pays).

The event is a ``PreToolUse`` of Claude Code through ``profile://agent-guards`` (loop guard,
tool-failure guard, PII redaction), with the session's state in SQLite: what a hook pays on
every tool call. Each call has other arguments, so the loop guard lets all of them through,
which the benchmark checks. Bytecode is written once (a warm-up), as an installed wheel has
it, even where ``PYTHONDONTWRITEBYTECODE`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
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


def _per_event(
    benchmark: Any,
    runner: asyncio.Runner,
    tmp_path: Path,
    env: dict[str, str],
    workload: str,
    kind: str,
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("profiles: [profile://agent-guards]\n")
    command = [sys.executable, "-m", "harnessweaver.cli", "hook", "--agent", "claude-code"]
    command += ["--spec", str(spec), "--state", str(tmp_path / "state.sqlite3")]
    numbers = itertools.count()
    answers: list[tuple[int, bytes, bytes]] = []

    def hook() -> None:
        answers.append(_spawn(command, env, next(numbers)))

    async def batch() -> None:
        for _ in range(PER):
            hook()

    async def floor() -> None:
        for _ in range(PER):
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)

    hook()  # writes the bytecode, creates the database (and starts the warm helper)
    folder = env.get(warm.DIR_ENV)
    if folder is not None:
        _wait(lambda: any(Path(folder).glob("hook-*.sock")))
    measure(
        benchmark,
        runner,
        batch,
        group="hook-command",
        floor=floor,
        rounds=min(ROUNDS, 11),
        workload=workload,
        kind=kind,
        n=None,
        per=PER,
    )
    assert answers and all(answer == (0, b"", b"") for answer in answers), answers[-1]


def _wait(ready: Any) -> None:
    deadline = time.monotonic() + 120  # a helper that never comes fails the benchmark
    while not ready():
        assert time.monotonic() < deadline, "the warm helper did not start"
        time.sleep(0.05)


def test_hook_command_per_event(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    """A helper already serves (every event of a session but the machine's first)."""
    folder = Path(tempfile.mkdtemp(prefix="hw-"))  # short: Unix socket paths are limited
    env = {**_ENV, warm.ENV: "1", warm.DIR_ENV: str(folder)}
    try:
        _per_event(benchmark, runner, tmp_path, env, "hook-command", "claude-code PreToolUse")
    finally:
        for lock in folder.glob("hook-*.sock.lock"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(lock.read_text()), signal.SIGTERM)
        shutil.rmtree(folder, ignore_errors=True)


def test_hook_command_per_event_cold(
    benchmark: Any, runner: asyncio.Runner, tmp_path: Path
) -> None:
    """No helper (``HARNESSWEAVER_HOOK_WARM=0``, or the first event): the whole start-up."""
    env = {**_ENV, warm.ENV: "0"}
    _per_event(benchmark, runner, tmp_path, env, "hook-command-cold", "claude-code PreToolUse")
