"""Model providers: what the run loop calls between ``model.before`` and ``model.after``.

A provider is anything with ``async def complete(request) -> ModelResponse``. Two ship here:
:class:`ScriptedProvider` (a list of responses, for tests and offline examples) and, in
``openai_chat``, an OpenAI-compatible chat-completions provider over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from ..events import Message, ModelRequest, ModelResponse, ToolCall, Usage
from .errors import AgentError, ScriptExhaustedError

__all__ = ["ModelProvider", "Pricing", "ScriptedProvider"]


@runtime_checkable
class ModelProvider(Protocol):
    """Turns a model request into the model's response.

    Raise to report a failure: the run then ends with ``exit_reason="provider_error"`` and
    can be resumed, which repeats the call (docs/agent.md, "Exit reasons").
    """

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The model's answer to ``request`` (its messages, tools and model name)."""
        ...


@dataclass(frozen=True, slots=True)
class Pricing:
    """What tokens cost, in US dollars per million tokens. Prices come from configuration,
    never from the library: nothing is assumed about any model's price."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        for name in ("input_per_million", "output_per_million"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise AgentError(
                    "invalid_pricing",
                    "pricing",
                    f"invalid {name} {value!r}: a price is a number of US dollars >= 0 (pricing)",
                )

    def usage(self, input_tokens: int, output_tokens: int) -> Usage:
        """The usage of one call, its cost included."""
        cost = (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1_000_000
        return Usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost)


def _as_response(item: ModelResponse | str) -> ModelResponse:
    if isinstance(item, ModelResponse):
        return item
    if isinstance(item, str):
        return ScriptedProvider.text(item)
    raise AgentError(
        "invalid_script",
        "provider",
        f"invalid scripted response {item!r}: script hw.ModelResponse objects or strings "
        "(a string is a final text answer) (provider)",
    )


class ScriptedProvider:
    """Answers with the responses it was given, in order, whatever the request.

    Each model call takes the next response, retries included; asking for more than were
    scripted raises :class:`ScriptExhaustedError`. ``requests`` keeps every request received,
    so a test can check what the model was sent. Build responses with :meth:`text` and
    :meth:`tool_call`, or script plain strings for final answers.
    """

    __slots__ = ("_responses", "requests")

    def __init__(self, responses: Iterable[ModelResponse | str]) -> None:
        self._responses = tuple(_as_response(item) for item in responses)
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been used yet."""
        return len(self._responses) - len(self.requests)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        position = len(self.requests)
        if position >= len(self._responses):
            raise ScriptExhaustedError(
                "script_exhausted",
                "provider",
                f"model call {position + 1} asked the ScriptedProvider for a response, but it "
                f"was given {len(self._responses)}: script one response per model call, "
                "retries included (provider)",
            )
        self.requests.append(request)
        return self._responses[position]

    @staticmethod
    def text(content: str, *, usage: Usage | None = None) -> ModelResponse:
        """A final text answer (no tool calls: the run completes after it)."""
        message = Message(role="assistant", content=content)
        return ModelResponse(message=message, stop_reason="end_turn", usage=usage or Usage())

    @staticmethod
    def tool_call(
        name: str,
        arguments: Mapping[str, JsonValue] | None = None,
        *,
        id: str = "",
        content: str = "",
        usage: Usage | None = None,
    ) -> ModelResponse:
        """A response that asks for one tool call (an empty ``id`` is filled in by the loop)."""
        return ScriptedProvider.tool_calls(
            ToolCall(id=id, name=name, arguments=dict(arguments or {})),
            content=content,
            usage=usage,
        )

    @staticmethod
    def tool_calls(
        *calls: ToolCall, content: str = "", usage: Usage | None = None
    ) -> ModelResponse:
        """A response that asks for several tool calls, run in the order given."""
        message = Message(role="assistant", content=content, tool_calls=calls)
        return ModelResponse(message=message, stop_reason="tool_use", usage=usage or Usage())
