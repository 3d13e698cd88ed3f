"""Tools: schemas from type hints, arguments validated before the function runs, failures
returned to the model (types only, R9), long outputs truncated with a note."""

from __future__ import annotations

from typing import Annotated

import pytest
from agent_support import S, harness, last_tool_message
from pydantic import BaseModel, Field

import harnessweaver as hw

pytestmark = pytest.mark.anyio


class Address(BaseModel):
    city: str
    zip: str = ""


@hw.tool
async def ship(
    order: Annotated[int, Field(description="the order number")],
    to: Address,
    express: bool = False,
) -> str:
    """Ship an order.

    Only this first paragraph describes the tool."""
    return f"{order} to {to.city}{' express' if express else ''}"


def test_the_schema_comes_from_the_type_hints_and_the_docstring() -> None:
    spec = ship.spec
    assert spec.name == "ship"
    assert spec.description == "Ship an order."
    params = spec.parameters
    assert params["required"] == ["order", "to"]
    assert params["additionalProperties"] is False
    properties = params["properties"]
    assert isinstance(properties, dict)
    assert properties["order"] == {
        "description": "the order number",
        "title": "Order",
        "type": "integer",
    }
    assert properties["express"] == {"default": False, "title": "Express", "type": "boolean"}
    assert properties["to"] == {"$ref": "#/$defs/Address"}


async def test_valid_arguments_are_parsed_into_the_annotated_types() -> None:
    call = hw.ToolCall(name="ship", arguments={"order": "42", "to": {"city": "Oslo"}})
    result = await ship.invoke(call)
    assert result == hw.ToolResult(output="42 to Oslo")


async def test_invalid_arguments_never_reach_the_function() -> None:
    ran: list[int] = []

    @hw.tool
    def refund(amount_usd: float) -> str:
        ran.append(1)
        return "refunded"

    call = hw.ToolCall(name="refund", arguments={"amount_usd": "lots", "note": "x"})
    result = await refund.invoke(call)
    assert ran == []
    assert result.is_error
    # where and which rule, by pydantic's error codes; never the input (R9)
    assert result.output == (
        "invalid arguments for tool 'refund': amount_usd: float_parsing; note: extra_forbidden"
    )


async def test_a_raise_becomes_an_error_result_naming_only_the_type() -> None:
    @hw.tool
    def explode() -> str:
        raise KeyError("secret-token-123")

    result = await explode.invoke(hw.ToolCall(name="explode"))
    assert result == hw.ToolResult(output="tool 'explode' failed: KeyError", is_error=True)


async def test_an_output_that_is_not_json_is_a_failure_too() -> None:
    @hw.tool
    def opaque() -> object:
        return object()

    result = await opaque.invoke(hw.ToolCall(name="opaque"))
    assert result.is_error
    assert result.output == "tool 'opaque' failed: PydanticSerializationError"


async def test_structured_output_stays_json() -> None:
    @hw.tool
    def status(order: int) -> Address:
        return Address(city="Oslo", zip=str(order))

    result = await status.invoke(hw.ToolCall(name="status", arguments={"order": 7}))
    assert result.output == {"city": "Oslo", "zip": "7"}


async def test_long_output_is_truncated_with_a_note() -> None:
    @hw.tool
    def dump() -> str:
        return "x" * 50

    result = await dump.invoke(hw.ToolCall(name="dump"), limit=10)
    assert result.truncated
    assert result.output == (
        "xxxxxxxxxx\n[truncated: the output had 50 characters; the limit is 10]"
    )


async def test_a_tools_own_limit_wins_over_the_harness_limit() -> None:
    @hw.tool(max_output_chars=5)
    def dump() -> list[int]:
        return list(range(10))

    result = await dump.invoke(hw.ToolCall(name="dump"), limit=1000)
    assert result.truncated
    assert isinstance(result.output, str) and result.output.startswith("[0, 1")


async def test_the_harness_limit_applies_in_a_run() -> None:
    @hw.tool
    def dump() -> str:
        return "y" * 100

    h = harness(script=[S.tool_call("dump"), "done"], tools=[dump], max_tool_output=20)
    result = await h.run("go")
    reply = last_tool_message(result)
    assert reply.content.startswith("y" * 20 + "\n[truncated: the output had 100 characters")


async def test_a_validation_error_goes_back_to_the_model_and_the_run_goes_on() -> None:
    h = harness(script=[S.tool_call("ship", {"order": "x"}), "sorry"], tools=[ship])
    result = await h.run("ship it")
    assert result.exit_reason == "completed"
    assert result.output == "sorry"
    assert last_tool_message(result).content == (
        "invalid arguments for tool 'ship': order: int_parsing; to: missing"
    )


def test_parameter_names_that_pydantic_uses_itself_are_fine() -> None:
    @hw.tool
    def query(json: str, model_name: str, schema: int = 0) -> str:
        return json

    assert query(json="a", model_name="b") == "a"  # the tool object calls the function
    assert set(query.spec.parameters["properties"]) == {"json", "model_name", "schema"}  # type: ignore[arg-type]


def test_a_parameter_without_a_type_is_refused() -> None:
    def loose(order) -> str:  # type: ignore[no-untyped-def]
        return ""

    with pytest.raises(hw.AgentError) as caught:
        hw.tool(loose)
    assert caught.value.kind == "invalid_tool"
    assert "parameter 'order' has no type annotation" in str(caught.value)
    assert str(caught.value).endswith("(tools)")


def test_var_arguments_are_refused() -> None:
    def spread(*orders: int) -> str:
        return ""

    with pytest.raises(hw.AgentError, match=r"parameter 'orders' is variadic positional"):
        hw.tool(spread)


def test_two_tools_with_one_name_are_refused() -> None:
    first = hw.tool(name="same")(lambda: "a")
    second = hw.tool(name="same")(lambda: "b")
    with pytest.raises(hw.AgentError, match=r"two tools are named 'same'") as caught:
        hw.AgentOptions(tools=[first, second])
    assert caught.value.kind == "duplicate_tool"


def test_a_bad_output_limit_names_the_value() -> None:
    with pytest.raises(hw.AgentError, match=r"invalid max_output_chars 0"):
        hw.tool(max_output_chars=0)
