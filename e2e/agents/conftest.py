"""pytest configuration of the end-to-end tests with the real coding agents.

Every test gets a :class:`common.Sandbox` (a throwaway HOME and project). One private socket
folder serves the warm helpers of the whole session, whose helpers are stopped (by process id)
when the session ends. Wall times of hook events that tests record with :func:`hook_times` are
printed at the end as a report (p50/p99 per agent and event) and written to
``results/agents/hook-times.json``; they are never asserted.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from common import AGENTS_DIR, Sandbox, percentile, private_dir, stop_helpers

_TIMES: dict[str, dict[str, list[float]]] = {}
"""agent -> hook event -> wall times in milliseconds, as the agent measured them."""


@pytest.fixture(scope="session")
def warm_dir() -> Iterator[Path]:
    folder = private_dir("hw-e2e-warm-")
    yield folder
    stop_helpers(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox.make(tmp_path)


@pytest.fixture(autouse=True)
def _outside_any_repository(tmp_path: Path) -> None:
    """The agents take the git repository around their working folder for the project (Claude
    Code keys its trust and permission settings by it): a test folder inside one is not the
    project the test set up. ``nox -s agents`` puts them in the system's temp folder."""
    inside = [p for p in tmp_path.parents if (p / ".git").exists()]
    if inside:
        pytest.fail(f"{tmp_path} is inside the git repository {inside[0]}: use --basetemp")


@pytest.fixture(scope="session")
def hook_times() -> dict[str, dict[str, list[float]]]:
    """Where tests add what they measured: ``hook_times[agent][event].append(ms)``."""
    return _TIMES


def _report() -> list[str]:
    lines = []
    for agent, events in sorted(_TIMES.items()):
        lines.append(f"{agent}:")
        for event, values in sorted(events.items()):
            lines.append(
                f"  {event:20} n={len(values):3}  p50={percentile(values, 50):7.1f} ms"
                f"  p99={percentile(values, 99):7.1f} ms  max={max(values):7.1f} ms"
            )
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TIMES:
        return
    terminalreporter.section("wall time per hook event, as the agent measured it")
    for line in _report():
        terminalreporter.write_line(line)
    out = AGENTS_DIR.parents[1] / "results" / "agents" / "hook-times.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        agent: {
            event: {
                "n": len(values),
                "p50_ms": percentile(values, 50),
                "p99_ms": percentile(values, 99),
                "samples_ms": values,
            }
            for event, values in events.items()
        }
        for agent, events in _TIMES.items()
    }
    out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    terminalreporter.write_line(f"written to {out}")
