"""p50 and p99 of one ``tool.before`` emit through ``shell_guard``, ``tool_denylist`` and
``tool_allowlist`` (the floor: a set lookup), each alone on a bus.

    PYTHONPATH=python python tools/bench_guards.py [N]

Commands: a typical one (``git status && ls -la``), one the guard refuses (``rm -rf /``), and
a hostile 256 KiB one (the longest it reads: thousands of words, quotes and pipes). A figure
for the notes, not a test: this machine is shared, so read the ratios to the floor measured
in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

import harnessweaver as hw
from harnessweaver.builtins import ShellGuard, ToolAllowlist, ToolDenylist
from harnessweaver.builtins.shell import MAX_COMMAND

_HOSTILE_UNIT = "echo 'a \"b | rm -r x\"' | grep -v ; "
COMMANDS = {
    "typical": "git status && ls -la",
    "refused": "rm -rf /",
    "hostile-256k": (_HOSTILE_UNIT * (MAX_COMMAND // len(_HOSTILE_UNIT)))[:MAX_COMMAND],
}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _event(command: str) -> hw.ToolCallEvent:
    call = hw.ToolCall(id="c1", name="Bash", arguments={"command": command})
    return hw.ToolCallEvent(step=1, tool=hw.ToolSpec(name="Bash"), call=call)


async def _times(bus: hw.HookBus, event: hw.ToolCallEvent, n: int) -> list[float]:
    ctx = hw.RunContext(trace=hw.Trace(limit=1024))
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await bus.emit("tool.before", event, ctx)
        times.append(time.perf_counter() - start)
    return times


def _bus(middleware: Any, settings: dict[str, Any]) -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(middleware, settings=settings or None)
    return bus


async def main(n: int) -> None:
    floor = _bus(ToolAllowlist, {"allow": ["Bash"]})
    guards = {
        "tool_denylist": _bus(ToolDenylist, {"deny": ["delete_repository"]}),
        "shell_guard": _bus(ShellGuard, {}),
    }
    base = statistics.median(await _times(floor, _event("ls"), n))
    print(f"floor (tool_allowlist): p50 {base * 1e6:.1f} us  [{hw.CORE} core]")
    for name, bus in guards.items():
        for label, command in COMMANDS.items():
            rounds = n if len(command) < 1000 else max(10, n // 100)
            xs = await _times(bus, _event(command), rounds)
            p50 = statistics.median(xs)
            print(
                f"{name} {label} ({len(command)} chars): p50 {p50 * 1e6:.1f} us"
                f" p99 {_quantile(xs, 0.99) * 1e6:.1f} us  ratio {p50 / base:.2f}"
            )
            if name == "tool_denylist":
                break


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
