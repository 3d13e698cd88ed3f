"""Middleware of the bench tests (a plugin module: ``plugins: {local: [bench_support]}``):
a light one, a heavy one that does far more work per call (hashing 100 KB), a blocker; and
helpers that write a spec and run the command in process."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

import harnessweaver as hw
from harnessweaver.cli import main

PAYLOAD = bytes(range(256)) * 400
"""What ``heavy`` hashes on every call: 100 KB, hundreds of times the work of ``light``."""


@hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="open")
async def light(event: hw.Event, env: hw.Envelope) -> None:
    return None


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def heavy(event: hw.Event, env: hw.Envelope) -> None:
    hashlib.sha256(PAYLOAD).digest()


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def blocker(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
    return hw.Block(reason="refunds are off", code="refunds_off")


@hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="50ms")
async def stuck(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    """Never answers: the bus cuts it off at 50 ms; awaited bare, it would wait for ever."""
    await anyio.sleep_forever()


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
class Quota:
    """Lets 3 calls through, then blocks every one: a stateful guard (one count per load)."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        self.calls += 1
        return hw.Block(reason="quota spent", code="quota") if self.calls > 3 else None


plugin = hw.Plugin(
    namespace="benchy", version="1.0.0", middleware=[light, heavy, blocker, stuck, Quota]
)

QUICK = ("--rounds", "3", "--per", "10")
"""The smallest run that still has a timed round: every test uses it."""


def write_spec(folder: Path, middleware: str) -> Path:
    """A spec loading this module's plugin, with ``middleware`` (YAML list items)."""
    path = folder / "harness.yaml"
    body = "plugins: {local: [bench_support]}\nmiddleware:\n" + textwrap.dedent(middleware)
    path.write_text(body, encoding="utf-8")
    return path


def bench(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """``harnessweaver bench ARGS...`` in process: status, stdout, stderr."""
    status = main(["bench", *map(str, args), *QUICK])
    out, err = capsys.readouterr()
    return status, out, err


def bench_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> dict[str, Any]:
    status, out, err = bench(capsys, *args, "--format", "json")
    assert status == 0, err
    document: dict[str, Any] = json.loads(out)
    return document
