"""Events are immutable all the way down (I18): in-place changes raise TypeError, the dumped
form is what it always was, and the only way to change an event is a changed copy."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from conftest import tool_call
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.frozen import FrozenDict, FrozenList

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)

MUTATIONS: dict[str, Callable[[Any], object]] = {
    "set item": lambda v: v.__setitem__(0 if isinstance(v, list) else "k", 1),
    "delete item": lambda v: v.__delitem__(0 if isinstance(v, list) else "k"),
    "clear": lambda v: v.clear(),
    "pop": lambda v: v.pop(),
    "in-place or": lambda v: v.__ior__({}) if isinstance(v, dict) else v.__iadd__([]),
    "update or append": lambda v: v.update(k=1) if isinstance(v, dict) else v.append(1),
    "setdefault or insert": lambda v: v.setdefault("k") if isinstance(v, dict) else v.insert(0, 1),
    "re-init": lambda v: v.__init__({"k": 1}) if isinstance(v, dict) else v.__init__([1]),
}


def containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value``, ``value`` included."""
    found: list[Any] = []
    if isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found += containers(item)
    elif isinstance(value, list):
        found.append(value)
        for item in value:
            found += containers(item)
    return found


@given(JSON, st.dictionaries(st.text(), JSON, max_size=4))
def test_every_json_value_inside_an_event_refuses_change(output: Any, arguments: Any) -> None:
    event = hw.ToolResultEvent(
        tool=hw.ToolSpec(name="t"),
        call=hw.ToolCall(name="t", arguments=arguments),
        result=hw.ToolResult(output=output),
    )
    before = event.model_dump(mode="json")
    for value in containers(event.result.output) + containers(event.call.arguments):
        assert type(value) in (FrozenDict, FrozenList)
        snapshot = json.dumps(value)
        for name, mutate in MUTATIONS.items():
            try:
                mutate(value)
            except TypeError:
                pass
            else:
                assert json.dumps(value) == snapshot, name  # re-init with no change is allowed
    assert event.model_dump(mode="json") == before
    # The dumped form is what it always was: plain dicts and lists, equal to what was given.
    assert before["result"]["output"] == output and before["call"]["arguments"] == arguments
    assert event.result.output == output and event.call.arguments == arguments
    assert json.loads(json.dumps(event.call.arguments)) == arguments


def test_a_plain_dump_holds_plain_containers() -> None:
    event = tool_call(order={"items": [1, 2]})
    dumped = event.model_dump()
    assert type(dumped["call"]["arguments"]) is dict
    assert type(dumped["call"]["arguments"]["order"]["items"]) is list
    assert hw.ToolCallEvent.model_validate(dumped) == event
    assert hw.ToolCallEvent.model_validate_json(event.model_dump_json()) == event


@pytest.mark.parametrize(
    ("target", "name"),
    [
        (lambda e: e, "step"),
        (lambda e: e.call, "arguments"),
        (lambda e: e.tool, "name"),
    ],
)
def test_setting_or_deleting_an_attribute_raises_type_error(
    target: Callable[[Any], Any], name: str
) -> None:
    event = tool_call(amount_usd=120)
    with pytest.raises(TypeError, match="immutable"):
        setattr(target(event), name, 0)
    with pytest.raises(TypeError, match="immutable"):
        delattr(target(event), name)
    assert event == tool_call(amount_usd=120)


def test_message_lists_are_tuples() -> None:
    event = hw.ModelRequestEvent(
        request=hw.ModelRequest(messages=[hw.Message(role="user", content="hi")])
    )
    with pytest.raises(TypeError):
        event.request.messages[0] = hw.Message(role="system")  # type: ignore[index]
    with pytest.raises(TypeError, match="immutable"):
        event.request.messages[0].content = "changed"  # type: ignore[misc]


def test_the_callers_values_are_copied_not_held() -> None:
    arguments: dict[str, Any] = {"order": {"items": [1]}}
    event = hw.ToolCall(arguments=arguments)
    arguments["order"]["items"].append(2)
    arguments["extra"] = True
    assert event.arguments == {"order": {"items": [1]}}


def test_model_copy_freezes_what_it_is_given() -> None:
    event = tool_call(amount_usd=120)
    call = event.call.model_copy(update={"arguments": {"amount_usd": 0, "tags": ["a"]}})
    assert type(call.arguments) is FrozenDict and type(call.arguments["tags"]) is FrozenList
    with pytest.raises(TypeError):
        call.arguments["tags"].append("b")
    request = hw.ModelRequest().model_copy(update={"messages": [hw.Message(role="user")]})
    assert request.messages == (hw.Message(role="user"),)  # a list for a tuple field: a tuple
    same = event.model_copy(update={"step": 3})
    assert same.step == 3 and same.call is event.call


def test_updated_changes_a_value_deep_inside_and_leaves_the_original() -> None:
    event = hw.ModelRequestEvent(
        request=hw.ModelRequest(
            messages=[hw.Message(role="system", content="s"), hw.Message(role="user", content="u")]
        )
    )
    changed = event.updated({"request.messages.1.content": "v", "step": 2})
    assert changed.request.messages[1].content == "v" and changed.step == 2
    assert changed.request.messages[0] is event.request.messages[0]
    assert event.request.messages[1].content == "u" and event.step == 0
    call = tool_call(order={"items": [1, 2]})
    moved = call.updated({"call.arguments.order.items.1": 3, "call.arguments.note.text": "x"})
    assert moved.call.arguments == {"order": {"items": [1, 3]}, "note": {"text": "x"}}
    assert type(moved.call.arguments["note"]) is FrozenDict
    assert call.call.arguments == {"order": {"items": [1, 2]}}


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"nope": 1}, ValueError),
        ({"call.arguments.order.items.5": 1}, IndexError),
        ({"step.inner": 1}, TypeError),
        ({"call.arguments": {}, "call.arguments.x": 1}, ValueError),
    ],
)
def test_updated_names_a_path_that_leads_nowhere(
    changes: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        tool_call(order={"items": [1, 2]}).updated(changes)


def test_frozen_values_are_built_like_dicts_and_lists() -> None:
    made = FrozenDict({"a": [1]}, b={"c": []})
    assert made == {"a": [1], "b": {"c": []}} and type(made["b"]["c"]) is FrozenList
    assert FrozenDict.fromkeys(["x"], [1]) == {"x": [1]}
    assert type(FrozenDict.fromkeys(["x"], [1])["x"]) is FrozenList
    assert FrozenList(iter([{"a": 1}])) == [{"a": 1}]
    assert type(made.copy()) is dict and type(FrozenList([1]).copy()) is list  # mutable copies


def test_frozen_values_copy_pickle_and_hash() -> None:
    event = tool_call(order={"items": [1, {"sku": "a"}]})
    assert copy.deepcopy(event) == event and copy.copy(event.call.arguments) is event.call.arguments
    again = pickle.loads(pickle.dumps(event))
    assert again == event and type(again.call.arguments["order"]) is FrozenDict
    assert hash(event) == hash(tool_call(order={"items": [1, {"sku": "a"}]}))


# -- through the bus ----------------------------------------------------------------------


def mutating(fail_mode: str) -> Any:
    @hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, name="zero_the_amount")
    async def zero_the_amount(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
        event.call.arguments["amount_usd"] = 0  # type: ignore[index]

    return zero_the_amount


@pytest.mark.anyio
@pytest.mark.parametrize("fail_mode", ["open", "closed"])
async def test_a_middleware_cannot_change_the_event_in_place(
    ctx: hw.RunContext, fail_mode: str
) -> None:
    seen: list[object] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def later(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
        seen.append(event.call.arguments["amount_usd"])

    bus = hw.HookBus(contracts="strict")
    bus.register(mutating(fail_mode))
    bus.register(later)
    event = tool_call(amount_usd=120)
    result = await bus.emit("tool.before", event, ctx)
    # The caller's own object, the result's event and what later middleware saw: all unchanged.
    assert event.call.arguments == {"amount_usd": 120} and result.event is event
    first = ctx.trace[0]
    assert first["failure"] == "exception" and first["error"] == "TypeError"
    assert first["modified"] is False and "contract" not in first
    if fail_mode == "open":
        assert seen == [120] and result.outcome == hw.Continue()
    else:
        assert seen == [] and result.outcome.kind == "block"
