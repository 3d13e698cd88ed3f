"""A scripted chat model for tests and offline examples: no network, no key.

LangChain's own ``GenericFakeChatModel`` has no ``bind_tools``, and ``create_agent`` binds the
agent's tools to its model, so it fails before the first turn. :class:`ScriptedChatModel`
answers each model call with the next message of its script (an ``AIMessage``, tool calls
included, or a string: a plain answer), whatever tools are bound; ``inputs`` keeps what each
call was asked (the refusals and tool results the model read), ``tools`` the names bound.
Past the end of the script it raises: a run that asks more than was scripted is a test's
failure, not a silent empty answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(BaseChatModel):
    """``ScriptedChatModel(script=[AIMessage(content="", tool_calls=[...]), "Done."])``."""

    script: list[str | AIMessage] = Field(default_factory=list)
    inputs: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of each call, in order."""
    tools: list[str] = Field(default_factory=list)
    """The names of the tools last bound (what the agent offered the model)."""

    @property
    def _llm_type(self) -> str:
        return "harnessweaver-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The same model (its script is shared): the tools are only noted."""
        self.tools = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.inputs.append(list(messages))
        if not self.script:
            raise RuntimeError("ScriptedChatModel: the script has no answer left")
        answer = self.script.pop(0)
        message = AIMessage(content=answer) if isinstance(answer, str) else answer
        return ChatResult(generations=[ChatGeneration(message=message)])
