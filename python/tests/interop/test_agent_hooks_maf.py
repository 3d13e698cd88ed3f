"""A harnessweaver bus as one AGENT-HOOKS interceptor inside Microsoft Agent Framework
(``agent-framework-core``, its experimental AGENT-HOOKS middleware), offline: a chat client
of the framework's own base classes answering from a script, the framework's tool loop, the
framework's host. The org's policy is a harnessweaver bus; the framework does the rest."""

from __future__ import annotations

from typing import Any

import pytest

agent_framework = pytest.importorskip("agent_framework")
agent_hooks = pytest.importorskip("agent_hooks")

import harnessweaver as hw  # noqa: E402
from harnessweaver.interop.agent_hooks import BusInterceptor  # noqa: E402

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:.AGENT_HOOKS. .* is experimental"),  # its own notice
]
af = agent_framework


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the framework runs on asyncio


class ScriptedClient(af.FunctionInvocationLayer, af.ChatMiddlewareLayer, af.BaseChatClient):
    """The framework's chat client, answering from a script and never the network."""

    def __init__(self, replies: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.replies = list(replies)

    async def _inner_get_response(
        self, *, messages: Any, stream: bool, options: Any, **kw: Any
    ) -> Any:
        assert not stream, "the script does not stream"
        return self.replies.pop(0)


def call(name: str, **arguments: Any) -> Any:
    content = af.Content.from_function_call(f"call-{name}", name, arguments=arguments)
    return af.ChatResponse(messages=[af.Message(role="assistant", contents=[content])])


def say(text: str) -> Any:
    return af.ChatResponse(
        messages=[af.Message(role="assistant", contents=[af.Content.from_text(text)])]
    )


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def refund_rules(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.tool.name == "run_shell":
        return hw.Block("shell commands are not allowed", code="no_shell")
    if event.call.arguments.get("amount", 0) > 500:
        return hw.Continue(
            event.updated({"call.arguments.amount": 500}), warnings=["capped at 500"]
        )
    return None


@hw.middleware(hooks=["model.before"], fail_mode="closed")
async def redact(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome | None:
    messages = [
        m.model_copy(update={"content": m.content.replace("7", "#")})
        for m in event.request.messages
    ]
    if [m.content for m in messages] == [m.content for m in event.request.messages]:
        return None
    return hw.Continue(event.updated({"request.messages": messages}))


def agent(replies: list[Any], ran: list[str], *extra: Any) -> tuple[Any, list[Any]]:
    @af.tool
    def refund(order: int, amount: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order} {amount}")
        return f"refunded {amount}"

    @af.tool
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(f"shell {command}")
        return "done"

    bus = hw.HookBus()
    for middleware in (refund_rules, *extra):
        bus.register(middleware)
    records: list[Any] = []
    hooks = af.create_agent_hooks_middleware(
        {"org_harness": BusInterceptor(bus, task="refunds")}, record_sink=records.append
    )
    built = af.Agent(
        client=ScriptedClient(replies), name="desk", tools=[refund, run_shell], middleware=[hooks]
    )
    return built, records


async def test_the_bus_rewrites_and_refuses_tool_calls_inside_the_framework() -> None:
    ran: list[str] = []
    replies = [call("refund", order=7, amount=900), call("run_shell", command="ls"), say("Done.")]
    desk, records = agent(replies, ran)
    result = await desk.run("refund order 7")
    assert result.text == "Done."
    assert ran == ["refund 7 500.0"]  # capped by the bus; the shell never ran
    tool_records = [r for r in records if r.interception_point.value == "pre_tool_call"]
    assert [r.verdict.decision.value for r in tool_records] == ["transform", "deny"]
    assert tool_records[0].verdict.warnings[0].message == "capped at 500"
    assert tool_records[1].verdict.reason == "no_shell"
    points = [r.interception_point.value for r in records]
    assert points[0] == "agent_startup" and points[-1] == "agent_shutdown"


async def test_a_rewrite_of_content_the_bus_saw_only_as_text_is_refused() -> None:
    """The framework's messages after a tool call hold structured parts, shown to the bus as
    JSON text: a redaction of them cannot be written back faithfully, and is not dropped."""
    ran: list[str] = []
    replies = [call("refund", order=7, amount=80), say("Done.")]
    desk, records = agent(replies, ran, redact)
    with pytest.raises(agent_hooks.InterceptionBlocked, match="rewrite_not_expressible"):
        await desk.run("refund order 7")
    model_records = [r for r in records if r.interception_point.value == "pre_model_call"]
    # the first request (plain text) is redacted in place; the second is refused
    assert [r.verdict.decision.value for r in model_records] == ["transform", "deny"]
