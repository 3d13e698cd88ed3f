"""The AuthZEN interop Todo scenario (``conformance/authzen-interop``) through
``harnessweaver.authzen`` as the PEP: each of the 40 published decisions becomes a tool call,
is mapped by the PEP (I38), decided by the local Cedar decision point on the scenario's
policies, and must come out as published."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from checkout import require_checkout
from test_authzen_support import event_call, pdp, run

import harnessweaver as hw
from harnessweaver.policies.authzen import DENIED, AuthZen, AuthZenSettings, authzen_request

pytestmark = pytest.mark.anyio

SCENARIO = require_checkout() / "conformance" / "authzen-interop"
DECISIONS: list[dict[str, Any]] = json.loads((SCENARIO / "decisions.json").read_text())["decisions"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with pdp([SCENARIO / "policies.cedar"], SCENARIO / "entities.json") as base:
        yield base


def as_event(decision: dict[str, Any]) -> tuple[hw.ToolCallEvent, hw.RunContext]:
    """The published request as the PEP sees it: a call of the tool named by the action, the
    resource as its argument, the subject as the run's user."""
    request = decision["request"]
    event = event_call(request["action"]["name"], resource=request["resource"])
    return event, run(user=request["subject"]["id"])


def test_the_scenario_is_whole() -> None:
    assert len(DECISIONS) == 40
    assert sum(d["expected"] for d in DECISIONS) == 26
    assert len({d["request"]["subject"]["id"] for d in DECISIONS}) == 5


async def test_every_published_decision_one_by_one(url: str) -> None:
    bus = hw.HookBus()
    bus.register(AuthZen, settings={"url": url, "batch": False})
    got = []
    for decision in DECISIONS:
        event, ctx = as_event(decision)
        outcome = (await bus.emit("tool.before", event, ctx)).outcome
        assert outcome in (hw.Continue(), DENIED), outcome
        got.append(outcome == hw.Continue())
    assert got == [d["expected"] for d in DECISIONS]


async def test_every_published_decision_in_one_batch(url: str) -> None:
    questions = []
    for decision in DECISIONS:
        event, ctx = as_event(decision)
        questions.append(authzen_request("tool.before", event, ctx.envelope.attributes))
    got = await AuthZen(AuthZenSettings(url=url)).evaluate_many(questions)
    assert got == [d["expected"] for d in DECISIONS]
