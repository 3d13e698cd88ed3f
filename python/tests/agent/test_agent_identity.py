"""A pending approval names the event it holds (I27), and a decision that echoes another one is
refused: an approval is never applied to an event the approver did not see."""

from __future__ import annotations

from typing import Any

import pytest
from agent_support import Counted, S, answering, once

import harnessweaver as hw

pytestmark = pytest.mark.anyio

APPROVAL = hw.Suspend(reason="refunds need approval", approver_role="finance")


def _note(event: hw.ToolCallEvent) -> hw.Outcome:
    """Changes the call, so the pending event is not the event the model asked for."""
    call = event.call.model_copy(update={"arguments": {"order": 6}})
    return hw.Continue(modified=event.model_copy(update={"call": call}))


async def suspended(identity: Any) -> tuple[hw.Harness, Counted, hw.RunResult]:
    lookup = Counted()
    bus = hw.HookBus(identity=identity)
    tagged: list[int] = []

    def tag_once(event: Any) -> hw.Outcome | None:
        tagged.append(1)
        return _note(event) if len(tagged) == 1 else None

    bus.register(answering("tool.before", tag_once, name="tagger"), band="platform")
    bus.register(answering("tool.before", once(APPROVAL), name="gate"))
    provider = hw.ScriptedProvider([S.tool_call("lookup", {"order": 5}), "done"])
    h = hw.Harness.from_bus(bus, task="test", provider=provider, tools=[lookup.tool])
    return h, lookup, await h.run("go")


async def test_the_pending_approval_names_the_event_the_chain_left() -> None:
    _, _, result = await suspended("jcs-sha256")
    pending = result.pending
    assert pending is not None and pending.identity is not None
    assert pending.event["call"]["arguments"] == {"order": 6}
    assert pending.identity == hw.content_identity(pending.event)
    (suspending,) = [r for r in result.trace if r["kind"] == "hook" and r["hook"] == "tool.before"]
    assert suspending["outcome"] == "suspend"
    assert suspending["enforced_identity"] == pending.identity
    assert suspending["input_identity"] != pending.identity  # the change is in what waits
    again = hw.RunState.model_validate_json(result.state.model_dump_json())
    assert again.pending is not None and again.pending.identity == pending.identity


async def test_a_decision_echoing_the_identity_resumes_the_run() -> None:
    h, lookup, result = await suspended("jcs-sha256")
    assert result.pending is not None
    echo = result.pending.identity
    resumed = await h.resume(result.state, hw.Decision.approve(role="finance", identity=echo))
    assert (resumed.exit_reason, lookup.calls) == ("completed", [6])


@pytest.mark.parametrize("echo", ["sha256:" + "0" * 64, "not an identity"])
async def test_a_decision_about_another_event_is_refused_and_nothing_runs(echo: str) -> None:
    h, lookup, result = await suspended("jcs-sha256")
    with pytest.raises(hw.AgentError) as caught:
        await h.resume(result.state, hw.Decision.approve(role="finance", identity=echo))
    assert (caught.value.kind, caught.value.rule) == ("identity_mismatch", "I27")
    assert echo in str(caught.value) and str(result.pending and result.pending.identity) in str(
        caught.value
    )
    assert lookup.calls == []


async def test_without_a_scheme_nothing_is_named_and_an_echo_is_refused() -> None:
    h, lookup, result = await suspended(None)
    assert result.pending is not None and result.pending.identity is None
    assert all("enforced_identity" not in r for r in result.trace)
    with pytest.raises(hw.AgentError) as caught:
        await h.resume(
            result.state, hw.Decision.deny(role="finance", identity=hw.content_identity({}))
        )
    assert caught.value.kind == "identity_mismatch"
    resumed = await h.resume(result.state, hw.Decision.approve(role="finance"))
    assert (resumed.exit_reason, lookup.calls) == ("completed", [6])
