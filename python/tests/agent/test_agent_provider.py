"""The provider protocol, the scripted provider and pricing."""

from __future__ import annotations

import pytest

import harnessweaver as hw

pytestmark = pytest.mark.anyio

S = hw.ScriptedProvider


async def test_the_script_is_answered_in_order_and_requests_are_kept() -> None:
    provider = S([S.tool_call("lookup", {"order": 1}, id="c1"), "done"])
    first = await provider.complete(hw.ModelRequest(model="a"))
    second = await provider.complete(hw.ModelRequest(model="b"))
    assert first.message.tool_calls == (
        hw.ToolCall(id="c1", name="lookup", arguments={"order": 1}),
    )
    assert first.stop_reason == "tool_use"
    assert second == S.text("done")
    assert [r.model for r in provider.requests] == ["a", "b"]
    assert provider.remaining == 0


async def test_asking_past_the_script_says_how_many_there_were() -> None:
    provider = S(["only one"])
    await provider.complete(hw.ModelRequest())
    with pytest.raises(hw.ScriptExhaustedError) as caught:
        await provider.complete(hw.ModelRequest())
    assert str(caught.value) == (
        "model call 2 asked the ScriptedProvider for a response, but it was given 1: script "
        "one response per model call, retries included (provider)"
    )
    assert (caught.value.kind, caught.value.rule) == ("script_exhausted", "provider")


def test_a_script_holds_responses_or_strings() -> None:
    with pytest.raises(hw.AgentError, match=r"invalid scripted response 42"):
        S([42])  # type: ignore[list-item]


def test_providers_are_recognised_by_their_complete_method() -> None:
    assert isinstance(S([]), hw.ModelProvider)
    with pytest.raises(hw.AgentError, match=r"invalid provider 'gpt'"):
        hw.AgentOptions(provider="gpt")  # type: ignore[arg-type]


def test_pricing_is_per_million_tokens() -> None:
    pricing = hw.Pricing(input_per_million=2.0, output_per_million=8.0)
    assert pricing.usage(500_000, 250_000) == hw.Usage(
        input_tokens=500_000, output_tokens=250_000, cost_usd=3.0
    )
    with pytest.raises(hw.AgentError, match=r"invalid output_per_million -1"):
        hw.Pricing(input_per_million=1, output_per_million=-1)
