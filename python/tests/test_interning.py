"""Codes and exception type names made anew per call stay exact in the trace, and the Rust
core's interner does not grow with them (issue 13): it keeps declared names, the rules' names
and a fixed budget of other texts for good; past that, a text lives only while a trace record
(or an emit under way) names it."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from checkout import needs_compiled_core
from conftest import tool_call

import harnessweaver as hw

EMITS = 40_000
"""Emits with a new code and a new exception type each, through fresh contexts: 38 times the
budget of permanent texts, and each one-context scenario (a quarter of it) still names more
texts than the counted bound allows, so a leak of either kind fails."""
ROUND = 1_000
"""Emits between two looks at a shared context's trace."""
BUDGET = 1024 + 16
"""Texts the Rust core keeps for good before it counts them (`TEXT_BUDGET` in symbol.rs), and
room for the names the scenarios declare and the rules' fixed names."""


def _bus(seen: list[int]) -> hw.HookBus:
    """A bus whose middleware fail with a new exception type and block with a new code on
    every emit, numbered by ``seen[0]``."""
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open", band="platform")
    async def raiser(event: Any, env: hw.Envelope) -> None:
        raise type(f"Err{seen[0]}", (Exception,), {})("secret-message")

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def blocker(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Block("blocked", code=f"code-{seen[0]}")

    bus.register(raiser)
    bus.register(blocker)
    return bus


def _check(records: list[dict[str, Any]], first: int) -> None:
    """Each emit's three records (numbered from ``first``) name exactly that emit's texts."""
    assert records and len(records) % 3 == 0
    for i, record in enumerate(records):
        n = first + i // 3
        if record["kind"] == "failure":
            assert record["error"] == f"Err{n}", record
            assert "code" not in record, "a failure open has no code (ruling 9)"
        else:
            assert record["code"] == f"code-{n}", record
            assert "error" not in record


def _fresh_contexts(look: Callable[[], None]) -> None:
    """EMITS emits, each through a new context whose trace is checked and dropped."""
    seen = [0]
    bus = _bus(seen)

    async def go() -> None:
        for i in range(EMITS):
            seen[0] = i
            ctx = hw.RunContext()
            await bus.emit("tool.before", tool_call(), ctx)
            records = list(ctx.trace)
            _check(records, i)
            if i % 10_000 == 0:
                back = hw.Trace.from_jsonl(ctx.trace.to_jsonl())
                assert list(back) == records
                look()

    anyio.run(go)


def _one_context(look: Callable[[], None], *, limit: int | None, drain: bool) -> None:
    """EMITS // 4 emits through one context: with a small limit, or drained every ROUND."""
    seen = [0]
    bus = _bus(seen)
    trace = hw.Trace(limit=limit)
    ctx = hw.RunContext(trace=trace)
    taken: list[dict[str, Any]] = []

    async def go() -> None:
        for i in range(EMITS // 4):
            seen[0] = i
            await bus.emit("tool.before", tool_call(), ctx)
            if (i + 1) % ROUND == 0:
                text = trace.to_jsonl()
                records = trace.drain() if drain else list(trace)
                _check(records, i + 1 - len(records) // 3)
                back = hw.Trace.from_jsonl(hw.Trace.from_jsonl(text).to_jsonl())
                assert list(back) == records
                taken.extend(records)
                look()

    anyio.run(go)
    if drain:
        assert len(taken) == 3 * (EMITS // 4)
        assert [r["emit"] for r in taken[::3]] == list(range(1, EMITS // 4 + 1))
    else:
        assert trace.dropped == 3 * (EMITS // 4) - limit if limit else trace.dropped == 0


def _scenarios(look: Callable[[], None]) -> None:
    _fresh_contexts(look)
    _one_context(look, limit=30, drain=False)
    _one_context(look, limit=None, drain=True)


def test_new_codes_and_exception_types_read_back_exactly() -> None:
    """On the core the suite runs on: every record names its own emit's code and type name,
    through fresh contexts, a small limit and drain(), and after a JSON Lines round trip."""
    _scenarios(lambda: None)


def bounded_on_rust() -> None:
    """The scenarios on the Rust core, watching its interner (run in a child interpreter)."""
    from harnessweaver import _core

    assert hw.CORE == "rust"
    gc.collect()
    permanent0, counted0 = _core._interned()
    most = 0

    def look() -> None:
        nonlocal most
        permanent, counted = _core._interned()
        # Permanent strings: no more than the budget's worth of these texts, ever.
        assert permanent - permanent0 <= BUDGET, (permanent, permanent0)
        # Counted ones: only those named by records still held (one round of two texts an
        # emit at most, and a round trip's copies), never growing with the emits made.
        assert counted - counted0 <= 4 * 2 * ROUND, (counted, counted0)
        most = max(most, counted)

    _scenarios(look)
    gc.collect()
    permanent, counted = _core._interned()
    assert permanent - permanent0 <= BUDGET
    assert counted <= counted0, "every trace was dropped, so were the texts only they named"
    assert most > counted0, "the scenarios reached the counted texts"


@needs_compiled_core
def test_the_rust_core_interner_stays_bounded() -> None:
    """Always on the Rust core (a child interpreter with HARNESSWEAVER_CORE=rust), whichever
    core this suite runs: 60,000 emits with a new code and exception type each."""
    tests = Path(__file__).resolve().parent
    code = (
        f"import sys; sys.path.insert(0, {str(tests)!r}); "
        "import test_interning; test_interning.bounded_on_rust(); print('bounded')"
    )
    env = {**os.environ, "HARNESSWEAVER_CORE": "rust"}
    command = [sys.executable, "-c", code]
    # A generous bound that only a deadlock reaches (the run takes seconds).
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == "bounded", done.stdout
