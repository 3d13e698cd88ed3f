"""The quick start's policy in a LangChain v1 agent, offline (quick start, step 4).

The model is scripted: it asks to run a shell command, then answers. Everything else is real
LangChain: ``create_agent``, its tool node and the harness's ``HarnessMiddleware``.
"""

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware, ScriptedChatModel

ran: list[str] = []


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    ran.append(command)
    return "done"


model = ScriptedChatModel(
    script=[
        AIMessage(
            content="",
            tool_calls=[{"name": "run_shell", "args": {"command": "rm -rf build"}, "id": "c1"}],
        ),
        "I could not clean up: the shell is not allowed here.",
    ]
)

harness = hw.load("harness.yaml")
agent = create_agent(model, [run_shell], middleware=[HarnessMiddleware(harness)])
result = agent.invoke({"messages": [{"role": "user", "content": "Clean up the build"}]})

for message in result["messages"]:
    if isinstance(message, ToolMessage):
        print(f"the model read: {message.text}")
print(f"commands that ran: {ran}")
print(f"answer: {result['messages'][-1].text}")
