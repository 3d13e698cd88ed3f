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


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_run_loop_and_the_ai_sdk_adapter_share_one_budget(
    backend: str, servers: Servers, node: int, tmp_path: Path
) -> None:
    """Python's run loop and Node's AI SDK (``generateText`` through harnessweaver/ai, the
    SDK's mock model) on one org budget: 15 tokens a call, 15 reserved."""
    if not node:
        pytest.skip("needs Node and ts-runner/dist")
    url = servers.url(backend)
    # Python's 4 calls are fewer than the budget's 6: Node's calls go through too.
    plan = Plan(python=(1,), calls=4, node=2, hooks=0, amounts=(15,), node_mode="ai")
    attempts = 1 * 4 + 2 * 4
    fleet = Fleet(budget=attempts // 2 * 15, rate=10 * attempts, reserve=15)
    tally = run_fleet(fleet, plan, backend, url, tmp_path)
    tokens, _ = totals(backend, url, fleet)
    assert len(tally.allowed) == attempts // 2, tally  # exactly the budget went out
    assert tokens == 15 * len(tally.allowed) <= fleet.budget  # each charged once, none lost
    assert set(tally.codes) == {"budget_exceeded"}, tally
    assert tally.by_kind["node"] > 0, tally


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("binding", ["budget", "rate"])
def test_the_run_loop_and_the_openai_agents_adapter_share_one_budget_and_one_rate_limit(
    backend: str, binding: str, servers: Servers, node: int, tmp_path: Path
) -> None:
    """Python's run loop and Node's OpenAI Agents SDK (``@openai/agents``: runs of a guarded
    agent through harnessweaver/openai-agents, the SDK's ScriptedModel answering, 15 tokens a
    run) on one org budget and one org rate limit.

    The budget does not warn (``warn_at: null``): the warning is a note added to the request,
    which the SDK cannot carry out, so the adapter would end the run (``not_expressible``,
    docs/integrations/openai-agents-js.md) with the request's reservation still held."""
    if not node:
        pytest.skip("needs Node and ts-runner/dist")
    url = servers.url(backend)
    plan = Plan(python=(1,), calls=4, node=2, hooks=0, amounts=(15,), node_mode="openai-agents")
    attempts = 1 * 4 + 2 * 4
    limit = attempts // 2  # more than Python's 4: Node's runs go through too
    fleet = Fleet(budget=limit * 15, rate=10 * attempts, reserve=15, warn=False)
    if binding == "rate":
        fleet = Fleet(budget=10 * attempts * 15, rate=limit, reserve=15, warn=False)
    tally = run_fleet(fleet, plan, backend, url, tmp_path)
    tokens, _ = check(backend, url, fleet, tally)
    assert len(tally.allowed) == limit, tally  # exactly the limit went through
    assert tokens == 15 * limit  # the store holds each run's charge once, none lost
    code = "budget_exceeded" if binding == "budget" else "rate_limited"
    assert set(tally.codes) == {code}, tally
    assert sum(tally.codes.values()) == attempts - limit, tally
    assert tally.by_kind["node"] >= limit - plan.calls, tally  # the SDK's runs went through
