"""The OpenAI-compatible chat-completions provider, against a stub server the tests start on
127.0.0.1 (never a real service)."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx")  # the `openai` extra; the test dependency group installs it

import httpx
from agent_support import Counted, hooks_fired
from stub_server import completion, function_call, stub_server

import harnessweaver as hw

pytestmark = pytest.mark.anyio

LOOKUP_SPEC = hw.ToolSpec(
    name="lookup", description="Look an order up.", parameters={"type": "object"}
)


def provider(base_url: str, **options: object) -> hw.OpenAIChatProvider:
    # trust_env=False: a proxy set in the environment must not reroute the stub's traffic
    return hw.OpenAIChatProvider(base_url, model="stub-model", trust_env=False, **options)  # type: ignore[arg-type]


async def test_the_request_is_a_chat_completions_body() -> None:
    conversation = (
        hw.Message(role="system", content="be brief"),
        hw.Message(role="user", content="where is 7?"),
        hw.Message(
            role="assistant",
            tool_calls=(hw.ToolCall(id="c1", name="lookup", arguments={"order": 7}),),
        ),
        hw.Message(role="tool", content="shipped", tool_call_id="c1", name="lookup"),
    )
    request = hw.ModelRequest(messages=conversation, tools=(LOOKUP_SPEC,))
    async with stub_server((200, completion("it shipped"))) as stub:
        response = await provider(stub.base_url, api_key="k-123").complete(request)
    assert response.message == hw.Message(role="assistant", content="it shipped")
    [received] = stub.received
    assert (received.method, received.path) == ("POST", "/v1/chat/completions")
    assert received.headers["authorization"] == "Bearer k-123"
    assert received.body == {
        "model": "stub-model",  # the request named no model: the provider's
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "where is 7?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"order": 7}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look an order up.",
                    "parameters": {"type": "object"},
                },
            }
        ],
    }


async def test_tool_calls_usage_and_cost_are_read_from_the_response() -> None:
    body = completion(
        tool_calls=[function_call("c9", "lookup", '{"order": 9}')],
        finish_reason="tool_calls",
        usage={"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
    )
    pricing = hw.Pricing(input_per_million=3.0, output_per_million=15.0)
    async with stub_server((200, body)) as stub:
        response = await provider(stub.base_url, pricing=pricing).complete(
            hw.ModelRequest(model="named", messages=(hw.Message(role="user", content="?"),))
        )
    assert stub.received[0].body["model"] == "named"
    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls == (
        hw.ToolCall(id="c9", name="lookup", arguments={"order": 9}),
    )
    assert response.usage == hw.Usage(input_tokens=1000, output_tokens=500, cost_usd=0.0105)


async def test_without_pricing_the_cost_stays_zero() -> None:
    body = completion("hi", usage={"prompt_tokens": 3, "completion_tokens": 2})
    async with stub_server((200, body)) as stub:
        response = await provider(stub.base_url).complete(hw.ModelRequest())
    assert response.usage == hw.Usage(input_tokens=3, output_tokens=2)


async def test_an_error_status_is_a_provider_error_naming_it() -> None:
    async with stub_server((503, {"error": "overloaded"})) as stub:
        with pytest.raises(hw.ProviderError) as caught:
            await provider(stub.base_url).complete(hw.ModelRequest())
    assert caught.value.kind == "http_status"
    assert str(caught.value).startswith(f"status 503 from {stub.base_url}/chat/completions")


async def test_arguments_that_are_not_a_json_object_are_refused() -> None:
    body = completion(tool_calls=[function_call("c1", "lookup", "[1, 2]")])
    async with stub_server((200, body)) as stub:
        with pytest.raises(hw.ProviderError, match=r"tool call arguments '\[1, 2\]'") as caught:
            await provider(stub.base_url).complete(hw.ModelRequest())
    assert caught.value.kind == "invalid_response"


@pytest.mark.parametrize("depth", [129, 300, 2_000, 100_000])
async def test_arguments_nested_too_deeply_are_refused(depth: int) -> None:
    """Not pydantic's ValidationError (300) nor the parser's RecursionError (2,000): a model's
    answer the run cannot hold (the journal reads the arguments back) is invalid_response."""
    text = '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    body = completion(tool_calls=[function_call("c1", "lookup", text)])
    async with stub_server((200, body)) as stub:
        with pytest.raises(hw.ProviderError) as caught:
            await provider(stub.base_url).complete(hw.ModelRequest())
    assert caught.value.kind == "invalid_response"
    assert "tool call arguments nest arrays and objects more than 128 deep" in str(caught.value)


async def test_arguments_nested_up_to_the_limit_are_read() -> None:
    text = '{"a": ' + "[" * 127 + "]" * 127 + "}"
    body = completion(tool_calls=[function_call("c1", "lookup", text)])
    async with stub_server((200, body)) as stub:
        response = await provider(stub.base_url).complete(hw.ModelRequest())
    assert response.message.tool_calls[0].arguments["a"] is not None


async def test_a_body_nested_too_deeply_is_refused() -> None:
    async with stub_server((200, "[" * 100_000 + "]" * 100_000)) as stub:
        with pytest.raises(hw.ProviderError, match=r"nests arrays and objects too deeply") as e:
            await provider(stub.base_url).complete(hw.ModelRequest())
    assert e.value.kind == "invalid_response"


async def test_a_body_that_is_not_json_is_refused() -> None:
    async with stub_server((200, "<html>")) as stub:
        with pytest.raises(hw.ProviderError, match=r"is not JSON"):
            await provider(stub.base_url).complete(hw.ModelRequest())


async def test_a_run_through_the_bus_with_the_http_provider() -> None:
    lookup = Counted()
    replies = (
        (200, completion(tool_calls=[function_call("c1", "lookup", '{"order": 4}')])),
        (200, completion("order 4 shipped")),
    )
    async with stub_server(*replies) as stub:
        h = hw.Harness.from_bus(hw.HookBus(), provider=provider(stub.base_url), tools=[lookup.tool])
        result = await h.run("where is order 4?")
    assert (result.exit_reason, result.output, lookup.calls) == (
        "completed",
        "order 4 shipped",
        [4],
    )
    second = stub.received[1].body["messages"]
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"order": 4, "status": "shipped"}',
    }
    assert hooks_fired(result.trace).count("model.before") == 2


async def test_a_failing_server_stops_the_run_as_a_provider_error() -> None:
    async with stub_server((500, {"error": "boom"})) as stub:
        h = hw.Harness.from_bus(hw.HookBus(), provider=provider(stub.base_url))
        result = await h.run("hi")
    assert (result.exit_reason, result.exit.error) == ("provider_error", "ProviderError")


async def test_a_shared_client_is_used_and_left_open() -> None:
    replies = ((200, completion("a")), (200, completion("b")))
    async with stub_server(*replies) as stub, httpx.AsyncClient(trust_env=False) as client:
        shared = provider(stub.base_url, client=client)
        first = await shared.complete(hw.ModelRequest())
        second = await shared.complete(hw.ModelRequest())
        assert not client.is_closed
    assert [first.message.content, second.message.content] == ["a", "b"]


def test_the_api_key_never_shows_in_the_repr() -> None:
    shown = repr(provider("http://127.0.0.1:9/v1", api_key="k-secret"))
    assert "k-secret" not in shown
    assert shown == "OpenAIChatProvider('http://127.0.0.1:9/v1', model='stub-model')"


def test_a_base_url_must_be_http() -> None:
    with pytest.raises(hw.AgentError, match=r"invalid base_url 'localhost:8000'"):
        hw.OpenAIChatProvider("localhost:8000", model="m")
