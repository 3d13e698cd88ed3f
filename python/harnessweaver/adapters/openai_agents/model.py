"""The agent's model, wrapped so that ``model.after`` is answered inside the model call.

``RunHooks.on_llm_end`` comes after the SDK has its response: there the run can only go on
or end, so a ``Retry`` at ``model.after`` (``require_citations`` asking an uncited answer
again, as ``profile://rag`` does) ended the run. Inside the model call a ``Retry`` can do
what harnessweaver's run loop does: ask ``model.before`` again and call the model again,
within the run's retry bound (issue 32); and a ``Continue(modified)`` of the text or of a
tool call's arguments is the response the SDK goes on with.

:class:`GuardedModel` wraps a ``Model`` (``adapter.guard`` wraps an agent's model object;
the run's ``RunConfig`` wraps its ``model`` and ``model_provider``, so a model given by name
is wrapped too). Outside a guarded run, and for a streamed response (its events are already
on their way to the caller when ``model.after`` is asked), it is the model itself, and
``on_llm_end`` emits ``model.after`` as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model, ModelProvider

__all__ = ["GuardedModel", "GuardedProvider", "guarded_model"]


class GuardedModel(Model):
    """``inner``, with ``model.after`` (and a Retry's ``model.before``) asked in the call."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.model = getattr(inner, "model", type(inner).__name__)
        """The name the bus reports for the model (``convert.model_name``)."""

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
        from .run import current_run

        run = current_run()
        retries = 0
        while True:
            response = await self.inner.get_response(
                system_instructions,
                input,
                model_settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                previous_response_id=previous_response_id,
                conversation_id=conversation_id,
                prompt=prompt,
            )
            if run is None:
                return response
            delay, answered = await run.answer_in_call(response, retries)
            if delay is None:
                assert isinstance(answered, ModelResponse)
                return answered  # the model's, or as model.after's chain rewrote it
            retries += 1
            if delay:
                await asyncio.sleep(delay)
            asked = await run.model_before_again()
            system_instructions, input = asked.instructions, asked.input

    def stream_response(
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
        return self.inner.stream_response(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        )

    def get_retry_advice(self, request: Any) -> Any:
        return self.inner.get_retry_advice(request)

    async def close(self) -> None:
        await self.inner.close()


def guarded_model(model: Any) -> Any:
    """``model`` wrapped when it is a ``Model`` (once); a name or ``None`` as it is."""
    if isinstance(model, Model) and not isinstance(model, GuardedModel):
        return GuardedModel(model)
    return model


class GuardedProvider(ModelProvider):
    """``inner``'s models, each wrapped: a model given by name is guarded too."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner

    def get_model(self, model_name: str | None) -> Model:
        model = self.inner.get_model(model_name)
        return model if isinstance(model, GuardedModel) else GuardedModel(model)

    async def aclose(self) -> None:
        await self.inner.aclose()
