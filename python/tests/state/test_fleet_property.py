"""The fleet as a property (issue 30, "Concurrency"): N workers in M processes, Python and
Node together, random amounts, limits and pauses, on Redis or PostgreSQL (real servers on
loopback): no overspend, no lost charge, none charged twice. The fixed fleets:
test_fleet.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

pytest.importorskip("hypothesis")

from fleet import RESERVE, Fleet, Plan, Servers, node_count, run_fleet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fleet import BACKENDS, check


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with contextlib.ExitStack() as stack:
        yield Servers(stack)


@pytest.fixture(scope="module")
def node() -> int:
    return node_count()


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    python=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    nodes=st.integers(0, 2),
    calls=st.integers(1, 5),
    amounts=st.lists(st.integers(1, RESERVE), min_size=1, max_size=5),
    delays=st.lists(st.integers(0, 4), max_size=4),
    budget=st.integers(1, 30 * RESERVE),
    rate=st.integers(1, 40),
    backend=st.sampled_from(BACKENDS),
)
def test_random_fleets_never_overspend_and_lose_no_charge(
    python: list[int],
    nodes: int,
    calls: int,
    amounts: list[int],
    delays: list[int],
    budget: int,
    rate: int,
    backend: str,
    servers: Servers,
    node: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    plan = Plan(
        python=tuple(python),
        calls=calls,
        node=min(nodes, node),
        hooks=0,
        mode="bus",
        amounts=tuple(amounts),
        delays_ms=tuple(delays),
    )
    fleet = Fleet(budget=budget, rate=rate)
    url = servers.url(backend)
    tally = run_fleet(fleet, plan, backend, url, tmp_path_factory.mktemp("fleet"))
    check(backend, url, fleet, tally)
    attempts = sum(plan.python) * calls + plan.node * calls
    assert len(tally.allowed) + sum(tally.codes.values()) == attempts
