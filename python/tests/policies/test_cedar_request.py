"""The I38 mapping of an event and its envelope's attributes to a Cedar request."""

from __future__ import annotations

import math
from typing import Any

import pytest

import harnessweaver as hw
from harnessweaver.policies import CedarRequestError, cedar_request, to_cedar_value
from harnessweaver.policies.request import MAX_DEPTH, MAX_LONG


def call(name: str = "refund", spec_name: str | None = None, **arguments: Any) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        step=3,
        tool=hw.ToolSpec(name=spec_name or name),
        call=hw.ToolCall(id="c1", name=name, arguments=arguments),
    )


def test_tool_before_maps_principal_action_resource_and_context() -> None:
    request = cedar_request("tool.before", call(amount=12), {"user": "bob", "tenant": "acme"}, None)
    assert request == {
        "principal": {"type": "User", "id": "bob"},
        "action": {"type": "Action", "id": "tool.before"},
        "resource": {"type": "Tool", "id": "refund"},
        "context": {
            "hook": "tool.before",
            "step": 3,
            "attributes": {"user": "bob", "tenant": "acme"},
            "tool": "refund",
            "arguments": {"amount": 12},
        },
    }


def test_principal_is_user_then_agent_then_anonymous_agent() -> None:
    def principal(attributes: dict[str, Any] | None) -> Any:
        return cedar_request("tool.before", call(), attributes, None)["principal"]

    assert principal({"user": "ann", "agent": "bot"}) == {"type": "User", "id": "ann"}
    assert principal({"user": 7, "agent": "bot"}) == {"type": "Agent", "id": "bot"}
    assert principal({"agent": ["x"]}) == {"type": "Agent", "id": "anonymous"}
    assert principal(None) == {"type": "Agent", "id": "anonymous"}


def test_namespace_prefixes_every_type() -> None:
    request = cedar_request("tool.before", call(), {"agent": "a"}, "Acme::Agents")
    assert request["principal"]["type"] == "Acme::Agents::Agent"
    assert request["action"] == {"type": "Acme::Agents::Action", "id": "tool.before"}
    assert request["resource"]["type"] == "Acme::Agents::Tool"


def test_tool_after_adds_is_error_and_an_empty_call_name_uses_the_tool_name() -> None:
    event = hw.ToolResultEvent(
        tool=hw.ToolSpec(name="search"),
        call=hw.ToolCall(name=""),
        result=hw.ToolResult(output="x", is_error=True),
    )
    request = cedar_request("tool.after", event, {}, None)
    assert request["resource"] == {"type": "Tool", "id": "search"}
    assert request["context"]["is_error"] is True
    assert request["context"]["tool"] == "search" and request["context"]["arguments"] == {}


def test_model_before_maps_the_model_the_offered_tools_and_the_message_count() -> None:
    event = hw.ModelRequestEvent(
        step=1,
        request=hw.ModelRequest(
            model="gpt-x",
            messages=(hw.Message(role="user", content="hi"), hw.Message(role="user")),
            tools=(hw.ToolSpec(name="a"), hw.ToolSpec(name="b")),
        ),
    )
    request = cedar_request("model.before", event, {}, None)
    assert request["resource"] == {"type": "Model", "id": "gpt-x"}
    assert request["context"] == {
        "hook": "model.before",
        "step": 1,
        "attributes": {},
        "model": "gpt-x",
        "tools": ["a", "b"],
        "messages": 2,
    }


@pytest.mark.parametrize("number", [12, 12.0, 1e3, -(2**53 - 1), float(2**53 - 1)])
def test_whole_numbers_within_2_53_are_longs(number: float) -> None:
    assert to_cedar_value(number, "x") == int(number)
    assert type(to_cedar_value(number, "x")) is int


@pytest.mark.parametrize("number", [1.5, 2**53, -(2**53), 1e300, math.inf, math.nan])
def test_other_numbers_cannot_be_built(number: float) -> None:
    with pytest.raises(CedarRequestError) as caught:
        cedar_request("tool.before", call(amount=number), {}, None)
    assert caught.value.path == "context.arguments.amount"
    assert str(number) not in str(caught.value)  # the path, never the value


def test_null_is_left_out_of_records_and_sets_and_bools_stay_bools() -> None:
    value = {"a": None, "b": [1, None, True], "c": {"d": None}, "e": False}
    assert to_cedar_value(value, "x") == {"b": [1, True], "c": {}, "e": False}
    assert MAX_LONG == 2**53 - 1


@pytest.mark.parametrize("key", ["__entity", "__extn", "__expr"])
def test_a_cedar_json_escape_key_cannot_be_built(key: str) -> None:
    secret = "sk-live-secret"
    with pytest.raises(CedarRequestError) as caught:
        cedar_request(
            "tool.before", call(x={"y": [{key: {"type": "User", "id": secret}}]}), {}, None
        )
    assert caught.value.path == f"context.arguments.x.y[0].{key}"
    assert secret not in str(caught.value)


def test_an_escape_key_in_the_attributes_cannot_be_built() -> None:
    with pytest.raises(CedarRequestError) as caught:
        cedar_request("tool.before", call(), {"__entity": {"type": "User", "id": "root"}}, None)
    assert caught.value.path == "context.attributes.__entity"


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


def test_nesting_is_bounded_at_32_levels() -> None:
    assert to_cedar_value(nested(MAX_DEPTH), "x") == nested(MAX_DEPTH)
    with pytest.raises(CedarRequestError):
        to_cedar_value(nested(MAX_DEPTH + 1), "x")
    deep_list: Any = 1
    for _ in range(MAX_DEPTH + 1):
        deep_list = [deep_list]
    with pytest.raises(CedarRequestError):
        to_cedar_value(deep_list, "x")
    # the arguments object is level 1: 31 objects inside it are fine, 32 are not
    cedar_request("tool.before", call(a=nested(MAX_DEPTH - 1)), {}, None)
    with pytest.raises(CedarRequestError):
        cedar_request("tool.before", call(a=nested(MAX_DEPTH)), {}, None)


def test_lone_surrogates_cannot_be_built_anywhere() -> None:
    with pytest.raises(CedarRequestError) as caught:
        cedar_request("tool.before", call(note="a\ud800b"), {}, None)
    assert caught.value.path == "context.arguments.note"
    with pytest.raises(CedarRequestError) as key:
        arguments: dict[str, Any] = {"k\udfff": 1}
        cedar_request("tool.before", call("t", None, **arguments), {}, None)
    assert key.value.path.startswith("context.arguments[")
    with pytest.raises(CedarRequestError) as user:
        cedar_request("tool.before", call(), {"user": "\ud800"}, None)
    assert user.value.path == "principal"
    with pytest.raises(CedarRequestError) as tool:
        cedar_request("tool.before", call(name="t\udc00"), {}, None)
    assert tool.value.path == "resource"


def test_ten_mebibyte_strings_pass_unchanged() -> None:
    big = "x" * (10 * 1024 * 1024)
    request = cedar_request("tool.before", call(body=big), {}, None)
    assert request["context"]["arguments"]["body"] is big


def test_odd_keys_are_quoted_in_the_path_and_cut_short() -> None:
    with pytest.raises(CedarRequestError) as caught:
        to_cedar_value({"a b": {"k" * 100: 0.5}}, "context.arguments")
    assert caught.value.path == 'context.arguments["a b"]["' + "k" * 64 + '\\u2026"]'


def test_other_hook_points_are_refused() -> None:
    with pytest.raises(ValueError, match=r"model\.after"):
        cedar_request("model.after", call(), {}, None)
