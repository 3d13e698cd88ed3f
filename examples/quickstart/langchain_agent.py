"""The quick start's policy in a LangChain v1 agent, offline (quick start, step 4).

The model is scripted: it asks to run a shell command, then answers. Everything else is real
LangChain: ``create_agent``, its tool node and the harness's ``HarnessMiddleware``.
"""

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware

ran: list[str] = []


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    ran.append(command)
    return "done"


class ScriptedChat(GenericFakeChatModel):
    """LangChain's fake chat model, which has no ``bind_tools``: create_agent needs one, and
    the script already says which tool to call, so binding changes nothing."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ScriptedChat":
        return self


script = iter(
    [
        AIMessage(
            content="",
            tool_calls=[{"name": "run_shell", "args": {"command": "rm -rf build"}, "id": "c1"}],
        ),
        AIMessage(content="I could not clean up: the shell is not allowed here."),
    ]
)

harness = hw.load("harness.yaml")
agent = create_agent(
    ScriptedChat(messages=script), [run_shell], middleware=[HarnessMiddleware(harness)]
)
result = agent.invoke({"messages": [{"role": "user", "content": "Clean up the build"}]})

for message in result["messages"]:
    if isinstance(message, ToolMessage):
        print(f"the model read: {message.text}")
print(f"commands that ran: {ran}")
print(f"answer: {result['messages'][-1].text}")
