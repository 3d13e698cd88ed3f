"""A scripted model of the SDK's own kind, for tests and offline examples: no network, no key.

``ScriptedModel([[call("refund", {"amount": 5})], [say("done")]])`` answers each model call
with the next turn's output items, for ``Runner.run`` and ``Runner.run_streamed`` alike (a
stream of one ``response.completed`` event); ``model.inputs`` keeps what each call was asked
(the refusals and tool results the model read), ``model.instructions`` its system
instructions.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents.items import ModelResponse, TResponseOutputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

__all__ = ["ScriptedModel", "call", "say"]


def call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> TResponseOutputItem:
    """A function call the model makes (``call_id`` defaults to ``call_<name>``)."""
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=call_id or f"call_{name}",
        name=name,
        arguments=json.dumps(arguments),
    )


def say(text: str) -> TResponseOutputItem:
    """An assistant message: a turn with only messages ends the run."""
    content = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[content]
    )


class ScriptedModel(Model):
    """Answers model calls from a script of turns, in order; past the end it fails."""

    def __init__(self, turns: Sequence[Sequence[TResponseOutputItem]]) -> None:
        self.turns = [list(turn) for turn in turns]
        self.inputs: list[list[Any]] = []
        self.instructions: list[str | None] = []
        """The system instructions of each call, in step with ``inputs``."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.instructions.append(system_instructions)
        output = self._next(input)
        usage = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)
        return ModelResponse(output=output, usage=usage, response_id=None)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> AsyncIterator[Any]:
        """The next turn as a stream: one ``response.completed`` event carrying it (the SDK
        takes the turn's output from that event, as from a real stream's last one)."""
        self.instructions.append(system_instructions)
        output = self._next(input)
        usage = ResponseUsage(
            input_tokens=10,
            output_tokens=5,
            total_tokens=15,
            input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        )
        response = Response(
            id="scripted",
            created_at=0,
            model="scripted",
            object="response",
            output=output,
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=True,
            status="completed",
            usage=usage,
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
        )

    def _next(self, input: Any) -> list[TResponseOutputItem]:
        self.inputs.append(list(input) if not isinstance(input, str) else [input])
        if not self.turns:
            raise RuntimeError("ScriptedModel: the script has no turn left")
        return self.turns.pop(0)
