"""An OpenAI-compatible chat-completions provider over HTTP (httpx).

Works with any server that speaks ``POST {base_url}/chat/completions`` (hosted APIs, local
model servers, gateways). Install the ``openai`` extra (``pip install '.[openai]'`` from a clone).
Nothing is read from the environment: the base URL, the model, the API key and the prices
are all given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from ..events import Message, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage
from ..jsondepth import nests_deeper
from .errors import AgentError, ProviderError
from .provider import Pricing

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIChatProvider"]

_RULE = "provider"

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
"""Chat-completions ``finish_reason`` → :class:`~harnessweaver.ModelResponse` stop reason
(others are kept as they are)."""


def _message_json(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        data["name"] = message.name
    if message.tool_calls:
        data["content"] = message.content or None
        data["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return data


def _tool_json(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def request_body(request: ModelRequest, model: str) -> dict[str, Any]:
    """The chat-completions request body of ``request`` (its model, or ``model``)."""
    body: dict[str, Any] = {
        "model": request.model or model,
        "messages": [_message_json(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [_tool_json(t) for t in request.tools]
    return body


MAX_ARGUMENT_DEPTH = 128
"""How deeply a tool call's arguments may nest (the arguments object is 1): pydantic stops at
about 254 levels, and the journal holds the arguments a few levels down its lines, which it
must read back."""
_TOO_DEEP = f"tool call arguments nest arrays and objects more than {MAX_ARGUMENT_DEPTH} deep"


def _invalid(problem: str) -> ProviderError:
    return ProviderError("invalid_response", _RULE, f"{problem} ({_RULE})")


def _tool_call(data: Any) -> ToolCall:
    try:
        function = data["function"]
        name, text = function["name"], function.get("arguments") or "{}"
        arguments = json.loads(text)
    except RecursionError:
        raise _invalid(_TOO_DEEP) from None
    except (KeyError, TypeError, ValueError):
        raise _invalid(
            f"tool call {data!r} in the response: a tool call has a function with a name and "
            "JSON arguments"
        ) from None
    if not isinstance(arguments, dict):
        raise _invalid(f"tool call arguments {text!r}: the arguments of a call are a JSON object")
    if nests_deeper(arguments, MAX_ARGUMENT_DEPTH):
        raise _invalid(_TOO_DEEP)
    return ToolCall(id=str(data.get("id") or ""), name=name, arguments=arguments)


def _usage(data: Any, pricing: Pricing | None) -> Usage:
    usage = data.get("usage") or {}
    tokens_in = int(usage.get("prompt_tokens") or 0)
    tokens_out = int(usage.get("completion_tokens") or 0)
    if pricing is None:
        return Usage(input_tokens=tokens_in, output_tokens=tokens_out)
    return pricing.usage(tokens_in, tokens_out)


def parse_response(data: Any, pricing: Pricing | None = None) -> ModelResponse:
    """A chat-completions response body as a :class:`~harnessweaver.ModelResponse`."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise _invalid("a chat-completions response has choices[0].message") from None
    calls = tuple(_tool_call(call) for call in message.get("tool_calls") or ())
    reply = Message(role="assistant", content=message.get("content") or "", tool_calls=calls)
    finish = str(choice.get("finish_reason") or "stop")
    return ModelResponse(
        message=reply, stop_reason=STOP_REASONS.get(finish, finish), usage=_usage(data, pricing)
    )


class OpenAIChatProvider:
    """A :class:`~harnessweaver.ModelProvider` for OpenAI-compatible chat completions.

    ``base_url`` is the API root (the part before ``/chat/completions``); ``model`` is used
    when the request names none. ``pricing`` turns token counts into ``Usage.cost_usd`` (no
    price is assumed). Give ``client`` to share an ``httpx.AsyncClient`` (its lifetime is
    yours); otherwise each call opens and closes its own, which works under asyncio and trio
    alike. A status >= 400 raises :class:`ProviderError` (kind ``http_status``).
    """

    __slots__ = (
        "_client",
        "_headers",
        "base_url",
        "extra_body",
        "model",
        "pricing",
        "timeout",
        "trust_env",
    )

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        pricing: Pricing | None = None,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JsonValue] | None = None,
        client: httpx.AsyncClient | None = None,
        trust_env: bool = True,
    ) -> None:
        try:
            import httpx  # noqa: F401 - only checking that the extra is installed
        except ImportError:  # pragma: no cover - the test environment has it
            raise AgentError(
                "missing_extra",
                _RULE,
                "OpenAIChatProvider needs httpx, the `openai` extra (provider)",
            ) from None
        if not base_url.startswith(("http://", "https://")):
            raise AgentError(
                "invalid_option",
                _RULE,
                f"invalid base_url {base_url!r}: it is an http:// or https:// URL ({_RULE})",
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.pricing = pricing
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self.trust_env = trust_env
        self._client = client
        self._headers = {"Accept": "application/json", **(headers or {})}
        if api_key is not None:
            self._headers["Authorization"] = f"Bearer {api_key}"

    def __repr__(self) -> str:  # never shows the API key
        return f"OpenAIChatProvider({self.base_url!r}, model={self.model!r})"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = {**request_body(request, self.model), **self.extra_body}
        if self._client is not None:
            return await self._post(self._client, body)
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout, trust_env=self.trust_env) as client:
            return await self._post(client, body)

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> ModelResponse:
        url = f"{self.base_url}/chat/completions"
        response = await client.post(url, json=body, headers=self._headers)
        if response.status_code >= 400:
            raise ProviderError(
                "http_status",
                _RULE,
                f"status {response.status_code} from {url}: {response.text[:200]} ({_RULE})",
            )
        try:
            data = response.json()
        except ValueError:
            raise _invalid(f"the body from {url} is not JSON") from None
        except RecursionError:  # the parser's own limit, about 1,000 levels
            raise _invalid(f"the body from {url} nests arrays and objects too deeply") from None
        return parse_response(data, self.pricing)
