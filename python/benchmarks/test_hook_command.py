"""``harnessweaver hook``: the wall time of one event, a whole process (a coding agent starts
one per event), side by side with a bare ``python -c pass`` of the same interpreter timed in
the same round (the floor: what any Python hook pays before doing anything).

The event is a ``PreToolUse`` of Claude Code through ``profile://agent-guards`` (loop guard,
tool-failure guard, PII redaction), with the session's state in SQLite: what a hook pays on
every tool call. Each call has other arguments, so the loop guard lets all of them through,
which the benchmark checks. Bytecode is written once (a warm-up), as an installed wheel has
it, even where ``PYTHONDONTWRITEBYTECODE`` is set.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROUNDS, measure

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


def test_hook_command_per_event(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("profiles: [profile://agent-guards]\n")
    command = [sys.executable, "-m", "harnessweaver.cli", "hook", "--agent", "claude-code"]
    command += ["--spec", str(spec), "--state", str(tmp_path / "state.sqlite3")]
    numbers = itertools.count()
    answers: list[tuple[int, bytes, bytes]] = []

    def hook() -> None:
        done = subprocess.run(
            command, input=_event(next(numbers)), capture_output=True, env=_ENV, check=False
        )
        answers.append((done.returncode, done.stdout, done.stderr))

    async def batch() -> None:
        for _ in range(PER):
            hook()

    async def floor() -> None:
        for _ in range(PER):
            subprocess.run([sys.executable, "-c", "pass"], env=_ENV, check=True)

    hook()  # writes the bytecode, creates the database
    measure(
        benchmark,
        runner,
        batch,
        group="hook-command",
        floor=floor,
        rounds=min(ROUNDS, 11),
        workload="hook-command",
        kind="claude-code PreToolUse",
        n=None,
        per=PER,
    )
    assert answers and all(answer == (0, b"", b"") for answer in answers), answers[-1]
