"""The emit benchmark behind the choice between an abi3 wheel and per-version wheels.

Times ``await bus.emit("tool.before", event, ctx)`` over N = 0, 1, 8 and 32 no-op middleware,
each declared with a 2 s timeout, and, in the same process, the plain loop
``for f in fns: await f(event, env)`` over the same functions: the ratio emit / loop says what
the bus costs over calling the middleware by hand, and comparing it across builds of the
extension (per-version, abi3-py311, abi3-py312) says what the limited API costs. Each figure
is the median over rounds of the mean time per emit in a round. With ``--instructions`` it
also counts instructions per emit and per loop under valgrind's callgrind (the difference
between 2,200 and 200 iterations, over 2,000): a figure that other work on the machine does
not move. ``nox -s abi3`` builds the variants and runs this under each interpreter;
docs/packaging.md has the figures.

    python tools/abi3_bench.py --label per-version --json results.json [--instructions]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import harnessweaver as hw

SIZES = (0, 1, 8, 32)
Fn = Callable[[Any, Any], Awaitable[None]]


def make_fns(count: int) -> list[Fn]:
    def make(i: int) -> Fn:
        async def noop(event: Any, env: Any) -> None:
            return None

        noop.__name__ = f"noop_{i}"
        return noop

    return [make(i) for i in range(count)]


def setup(size: int) -> tuple[list[Fn], hw.HookBus, hw.ToolCallEvent, hw.Envelope]:
    fns = make_fns(size)
    bus = hw.HookBus()
    for fn in fns:
        bus.register(hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="2s")(fn))
    event = hw.ToolCallEvent(
        tool=hw.ToolSpec(name="lookup"), call=hw.ToolCall(name="lookup", arguments={"id": 1})
    )
    return fns, bus, event, hw.Envelope(clock=hw.FixedClock("2026-11-30T12:00:00+00:00"))


async def repeat(what: str, size: int, count: int) -> None:
    """``count`` emits (or loops) and nothing else: what callgrind counts."""
    fns, bus, event, envelope = setup(size)
    ctx = hw.RunContext(envelope=envelope)
    for _ in range(count):
        if what == "emit":
            await bus.emit("tool.before", event, ctx)
        else:
            for f in fns:
                await f(event, envelope)


def instructions(what: str, size: int) -> float:
    """Instructions per emit (or loop), from two callgrind runs."""

    def collected(count: int) -> int:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        command += [sys.executable, __file__, "--run", what, "--n", str(size)]
        done = subprocess.run(
            [*command, "--count", str(count)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},  # the same dict layouts every run
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from callgrind:\n{done.stderr}")
        return int(found.group(1))

    return (collected(2200) - collected(200)) / 2000


async def measure(size: int, rounds: int, per_round: int) -> dict[str, Any]:
    fns, bus, event, envelope = setup(size)
    emit = bus.emit

    async def emits(count: int) -> float:
        ctx = hw.RunContext(envelope=envelope)  # a fresh trace per round
        started = time.perf_counter_ns()
        for _ in range(count):
            await emit("tool.before", event, ctx)
        return (time.perf_counter_ns() - started) / count

    async def loops(count: int) -> float:
        started = time.perf_counter_ns()
        for _ in range(count):
            for f in fns:
                await f(event, envelope)
        return (time.perf_counter_ns() - started) / count

    await emits(per_round // 10)  # warm up
    await loops(per_round // 10)
    emit_ns: list[float] = []
    loop_ns: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):  # interleaved, so drift hits both alike
            emit_ns.append(await emits(per_round))
            loop_ns.append(await loops(per_round))
    finally:
        gc.enable()
    emit_median = statistics.median(emit_ns)
    loop_median = statistics.median(loop_ns)
    return {
        "n": size,
        "emit_ns": round(emit_median, 1),
        "loop_ns": round(loop_median, 1),
        "ratio": round(emit_median / loop_median, 3) if size else None,
        "ratios_median": (
            round(statistics.median(e / lp for e, lp in zip(emit_ns, loop_ns, strict=True)), 3)
            if size
            else None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", help="the build being measured")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--per-round", type=int, default=4000, help="emits per round")
    parser.add_argument("--json", type=Path, help="append the result to this JSON file")
    parser.add_argument("--instructions", action="store_true", help="count with callgrind too")
    parser.add_argument("--run", choices=("emit", "loop"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        asyncio.run(repeat(args.run, args.n, args.count))
        return 0
    if not args.label:
        parser.error("--label is required")
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    core = sys.modules["harnessweaver._core"] if hw.CORE == "rust" else None
    if core is None:
        raise SystemExit("the compiled core is not in use")
    results = [asyncio.run(measure(n, args.rounds, args.per_round)) for n in SIZES]
    if args.instructions:
        for row in results:
            row["emit_instructions"] = round(instructions("emit", row["n"]))
            row["loop_instructions"] = round(instructions("loop", row["n"])) if row["n"] else 0
    python = platform.python_version()
    extension = Path(core.__file__ or "").name
    record = {"label": args.label, "python": python, "extension": extension, "results": results}
    for row in results:
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] is not None else "-"
        counted = (
            f"  instructions: emit {row['emit_instructions']:>7} loop {row['loop_instructions']:>6}"
            if args.instructions
            else ""
        )
        print(
            f"{args.label:12} {python:8} N={row['n']:<3} emit {row['emit_ns']:>9.0f} ns  "
            f"loop {row['loop_ns']:>8.0f} ns  emit/loop {ratio}{counted}"
        )
    if args.json:
        previous = json.loads(args.json.read_text()) if args.json.exists() else []
        args.json.write_text(json.dumps([*previous, record], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
