"""Shared fixtures. The whole suite runs once per core (``nox -s tests`` sets
``HARNESSWEAVER_CORE``), and async tests run under asyncio and trio."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
import pytest

import harnessweaver as hw


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def pytest_report_header() -> str:
    asked = os.environ.get("HARNESSWEAVER_CORE")
    return f"harnessweaver core: {hw.CORE} (HARNESSWEAVER_CORE={asked!r})"


@pytest.fixture
def bus() -> hw.HookBus:
    return hw.HookBus()


@pytest.fixture
def ctx() -> hw.RunContext:
    return hw.RunContext(envelope=hw.Envelope(clock=hw.FixedClock("2026-11-30T12:00:00+00:00")))


def tool_call(name: str = "refund_payment", **arguments: object) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name=name), call=hw.ToolCall(name=name, arguments=arguments)
    )


def untimed(trace: hw.Trace) -> list[dict[str, object]]:
    return [{k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in trace]


def sleeper(
    name: str,
    seconds: float,
    log: list[str],
    *,
    timeout: str | None = None,
    fail_mode: str = "open",
) -> Any:
    """A ``tool.before`` middleware that really suspends for ``seconds``, logging its start,
    its end, and a cancellation (which it lets through)."""

    async def body(event: Any, env: hw.Envelope) -> None:
        log.append(f"{name} start")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            log.append(f"{name} cancelled")
            raise
        log.append(f"{name} done")

    body.__name__ = name
    return hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, timeout=timeout)(body)


def run_unless_stuck(code: str, stuck: str) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a child interpreter (on the core this suite runs on). A child still
    running after a minute is deadlocked: the test fails with ``stuck`` instead of hanging."""
    command = [sys.executable, "-c", code]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(stuck)


@pytest.fixture(autouse=True)
def _no_warm_hook_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """``harnessweaver hook`` processes answer cold unless a test starts a warm helper
    (hookcmd_support.warm_helper): no helper outlives the suite."""
    monkeypatch.setenv("HARNESSWEAVER_HOOK_WARM", "0")
