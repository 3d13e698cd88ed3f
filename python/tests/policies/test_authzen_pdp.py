"""``harnessweaver.authzen`` against a real decision point: the local AuthZEN 1.0 PDP
(``e2e/authzen-pdp``, cedar-go) decides on the request the middleware sent. Its Cedar policies
test each part of the mapping (I38): a policy permits only when the part is what the contract
says, so a wrong subject, action, resource or context is a deny."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_authzen_support import event_call, pdp, run

import harnessweaver as hw
from harnessweaver.policies.authzen import DENIED, AuthZen, AuthZenSettings, authzen_request
from harnessweaver.policies.errors import AuthZenError

pytestmark = pytest.mark.anyio

POLICIES = """
permit (principal == User::"alice", action == Action::"tool.before", resource == Tool::"search")
when {
  context.hook == "tool.before" && context.tool == "search" && context.step == 3 &&
  context.arguments.q == "weather" && context.arguments.limit == 12 &&
  context.arguments.tags.contains("fast") && !(context.arguments has gone) &&
  context.attributes.user == "alice" && context.attributes.team == "blue"
};
permit (principal == Agent::"bot", action == Action::"tool.after", resource == Tool::"search")
when { context.is_error == false && context.tool == "search" };
permit (
  principal == Agent::"anonymous", action == Action::"model.before", resource == Model::"gpt-x"
) when { context.model == "gpt-x" && context.tools.contains("search") && context.messages == 2 };
permit (principal, action == Action::"tool.before", resource == Tool::"delete_repository")
when { principal in Group::"admins" };
forbid (principal, action, resource == Tool::"search") when { context.arguments has rm };
"""
ENTITIES = [
    {
        "uid": {"type": "User", "id": "root"},
        "attrs": {},
        "parents": [{"type": "Group", "id": "admins"}],
    },
    {"uid": {"type": "Group", "id": "admins"}, "attrs": {}, "parents": []},
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with pdp(POLICIES, ENTITIES) as base:
        yield base


def guard(url: str, **settings: object) -> AuthZen:
    return AuthZen(AuthZenSettings(url=url, **settings))  # type: ignore[arg-type]


def alice_search(**change: object) -> hw.ToolCallEvent:
    arguments: dict[str, object] = {"q": "weather", "limit": 12, "tags": ["fast", "cheap"]}
    arguments.update(change)
    return event_call("search", step=3, **arguments)


ALICE = {"user": "alice", "team": "blue", "agent": "bot"}


async def test_the_whole_mapping_is_what_the_policy_permits(url: str) -> None:
    bus = hw.HookBus()
    bus.register(AuthZen, settings={"url": url})
    result = await bus.emit("tool.before", alice_search(), run(**ALICE))
    assert result.outcome == hw.Continue()


@pytest.mark.parametrize(
    ("change", "attributes"),
    [
        ({"q": "rain"}, ALICE),  # an argument
        ({"limit": 13}, ALICE),  # a Long
        ({"tags": ["slow"]}, ALICE),  # a Set
        ({"rm": True}, ALICE),  # a forbid
        ({}, {**ALICE, "team": "red"}),  # an attribute
        ({}, {"agent": "alice", "team": "blue"}),  # an agent is not a user
        ({}, {}),  # anonymous
    ],
)
async def test_each_part_of_the_mapping_counts(
    url: str, change: dict[str, object], attributes: dict[str, object]
) -> None:
    decided = await guard(url)(alice_search(**change), run(**attributes).envelope)
    assert decided == DENIED


async def test_numbers_nulls_and_the_step_are_sent_as_cedar_reads_them(url: str) -> None:
    # 12.0 and 1.2e1 are the Long 12; a null is left out (so `has gone` is false).
    for limit in (12.0, 1.2e1):
        event = alice_search(limit=limit, gone=None)
        assert await guard(url)(event, run(**ALICE).envelope) == hw.Continue(), limit
    other_step = event_call("search", step=4, q="weather", limit=12, tags=["fast"])
    assert await guard(url)(other_step, run(**ALICE).envelope) == DENIED


async def test_tool_after_and_model_before_are_asked_as_their_hook_points(url: str) -> None:
    bus = hw.HookBus()
    bus.register(AuthZen, settings={"url": url}, hooks=["tool.after", "model.before"])
    ok = hw.ToolResultEvent(
        tool=hw.ToolSpec(name="search"), call=hw.ToolCall(name="search"), result=hw.ToolResult()
    )
    failed = ok.model_copy(update={"result": hw.ToolResult(is_error=True)})
    assert (await bus.emit("tool.after", ok, run(agent="bot"))).outcome == hw.Continue()
    assert (await bus.emit("tool.after", failed, run(agent="bot"))).outcome == DENIED
    messages = (hw.Message(role="user", content="hi"), hw.Message(role="user", content="there"))
    request = hw.ModelRequest(model="gpt-x", messages=messages, tools=(hw.ToolSpec(name="search"),))
    model = hw.ModelRequestEvent(request=request)
    assert (await bus.emit("model.before", model, run())).outcome == hw.Continue()
    one_message = model.model_copy(
        update={"request": request.model_copy(update={"messages": messages[:1]})}
    )
    assert (await bus.emit("model.before", one_message, run())).outcome == DENIED


async def test_the_decision_point_reads_its_entities(url: str) -> None:
    event = event_call("delete_repository")
    assert await guard(url)(event, run(user="root").envelope) == hw.Continue()
    assert await guard(url)(event, run(user="alice").envelope) == DENIED


def test_the_request_is_written_in_authzen_words() -> None:
    request = authzen_request("tool.before", alice_search(), {"user": "alice"})
    assert request["subject"] == {"type": "user", "id": "alice"}
    assert request["action"] == {"name": "tool.before"}
    assert request["resource"] == {"type": "tool", "id": "search"}
    assert request["context"]["arguments"] == {
        "q": "weather",
        "limit": 12,
        "tags": ["fast", "cheap"],
    }
    model = hw.ModelRequestEvent(request=hw.ModelRequest(model="m"))
    asked = authzen_request("model.before", model, {"agent": "bot"})
    assert (asked["subject"], asked["resource"]) == (
        {"type": "agent", "id": "bot"},
        {"type": "model", "id": "m"},
    )


async def test_many_questions_in_one_batch_and_one_by_one(url: str) -> None:
    questions = [
        authzen_request("tool.before", alice_search(), ALICE),
        authzen_request("tool.before", alice_search(q="rain"), ALICE),
        authzen_request("tool.before", event_call("delete_repository"), {"user": "root"}),
        authzen_request("tool.before", event_call("delete_repository"), {}),
    ]
    expected = [True, False, True, False]
    assert await guard(url).evaluate_many(questions) == expected
    assert await guard(url, batch=False).evaluate_many(questions) == expected
    assert await guard(url).evaluate_many([]) == []


async def test_without_a_batch_endpoint_it_asks_one_by_one() -> None:
    with pdp(POLICIES, ENTITIES, extra=["-no-batch"]) as base:
        questions = [
            authzen_request("tool.before", alice_search(), ALICE),
            authzen_request("tool.before", alice_search(q="rain"), ALICE),
        ]
        assert await guard(base).evaluate_many(questions) == [True, False]


async def test_the_token_is_sent_as_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HW_TEST_PDP_TOKEN", "tok-0123456789")
    with pdp(POLICIES, ENTITIES, extra=["-token-env", "HW_TEST_PDP_TOKEN"]) as base:
        with_token = guard(base, token_env="HW_TEST_PDP_TOKEN")
        assert await with_token(alice_search(), run(**ALICE).envelope) == hw.Continue()
        # Without it the decision point refuses (401): an error, never an allow.
        with pytest.raises(AuthZenError, match="HTTP 401"):
            await guard(base)(alice_search(), run(**ALICE).envelope)


async def test_a_spec_item_uses_it_with_its_settings(url: str, tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"middleware:\n  - {{use: harnessweaver.authzen, url: '{url}', timeout: 5s}}\n")
    harness = hw.load(spec)
    assert [e.name for e in harness.chains()["tool.before"]] == ["harnessweaver.authzen"]
    assert harness.chains()["model.before"] == ()  # tool.before unless the item asks for more
    allowed = await harness.bus.emit("tool.before", alice_search(), run(**ALICE))
    assert allowed.outcome == hw.Continue()
    denied = await harness.bus.emit("tool.before", alice_search(q="x"), run(**ALICE))
    assert denied.outcome == DENIED
