"""A fleet shares one org budget and one rate limit (issue 30, "Done when"): Python workers
(the run loop), Node workers (ts-runner) and hook-command invocations charge them at once,
through Redis and through PostgreSQL, real servers on loopback (servers.py); none overspends
and no charge is lost. (The property test with random fleets: test_fleet_property.py.)

Each test names its items with a fresh tag, so its keys are its own on the shared server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet import RESERVE, Fleet, Plan, Servers, node_count, run_fleet, totals

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

BACKENDS = ("redis", "postgres")


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with contextlib.ExitStack() as stack:
        yield Servers(stack)


@pytest.fixture(scope="module")
def node() -> int:
    return node_count()


def check(backend: str, url: str, fleet: Fleet, tally: object) -> tuple[float, float]:
    tokens, calls = totals(backend, url, fleet)
    allowed = sum(tally.allowed)  # type: ignore[attr-defined]
    codes = tally.codes  # type: ignore[attr-defined]
    # No overspend: what was let through fits the budget and the limit.
    assert allowed <= fleet.budget, (allowed, fleet.budget, tally)
    assert tokens <= fleet.budget
    # No lost charge, none twice: the store holds exactly what was let through.
    assert tokens == allowed, (tokens, allowed, tally)
    # The rate limit counted every call it let through (the budget refused some of those).
    passed_rate = len(tally.allowed) + codes.get("budget_exceeded", 0)  # type: ignore[attr-defined]
    assert calls == passed_rate, (calls, passed_rate, tally)
    assert calls <= fleet.rate
    assert set(codes) <= {"budget_exceeded", "rate_limited"}, codes
    return tokens, calls


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("binding", ["budget", "rate"])
def test_python_node_and_hook_workers_share_one_budget_and_one_rate_limit(
    backend: str, binding: str, servers: Servers, node: int, tmp_path: Path
) -> None:
    url = servers.url(backend)
    plan = Plan(python=(3, 3), calls=4, node=node, hooks=6)
    attempts = sum(plan.python) * plan.calls + plan.node * plan.calls + plan.hooks
    # The binding limit is about half the attempts; the other one is out of reach.
    half = attempts // 2
    fleet = Fleet(budget=half * RESERVE, rate=10 * attempts)
    if binding == "rate":
        fleet = Fleet(budget=10 * attempts * RESERVE, rate=half)
    tally = run_fleet(fleet, plan, backend, url, tmp_path)
    check(backend, url, fleet, tally)
    # The binding limit was reached exactly: every refusal is that limit's.
    assert len(tally.allowed) == half, tally
    code = "budget_exceeded" if binding == "budget" else "rate_limited"
    assert set(tally.codes) == {code}, tally
    assert sum(tally.codes.values()) == attempts - half
    assert set(tally.by_kind) <= {"python", "node", "hook"}
