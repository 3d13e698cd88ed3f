"""The phases of a run: each builds its hook point's event, does its operation (a model call,
a tool call) and passes the gate. A phase returns the next state, or :class:`Stopped`.

One step runs ``step_start → ask_model → call_model → tools ⇄ run_tool → step_end``; a step
whose response asks for no tool call leads to ``finish``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..events import (
    ModelRequest,
    ModelRequestEvent,
    ModelResponse,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
)
from .errors import ProviderError
from .gates import charge, pass_gate, with_call_ids
from .segment import Segment, Stopped, ended
from .state import Exit, Phase, RunState, StepState
from .tools import bounded

__all__ = ["PHASES"]

Handler = Callable[[Segment, RunState], Awaitable["RunState | Stopped"]]


def _over_budget(seg: Segment, state: RunState) -> Stopped | None:
    """A budget reached stops the run where it is: a larger budget can resume it."""
    over = seg.options.budgets.exceeded(
        steps=state.steps, usage=state.usage, elapsed_s=seg.elapsed()
    )
    if over is None:
        return None
    exit_reason, why = over
    return Stopped(state, Exit(exit_reason=exit_reason, reason=why))


def _checked(response: object) -> ModelResponse:
    if not isinstance(response, ModelResponse):
        raise ProviderError(
            "invalid_response",
            "provider",
            f"provider answered {type(response).__name__}: a provider answers an "
            "hw.ModelResponse (provider)",
        )
    return response


def _offered(step: StepState, name: str) -> ToolSpec | None:
    assert step.request is not None
    return next((spec for spec in step.request.tools if spec.name == name), None)


async def _invoke(seg: Segment, step: StepState, call: ToolCall) -> ToolResult:
    """Run a call, if the tool exists and this step's request offered it to the model."""
    tool = seg.options.tool(call.name) if _offered(step, call.name) else None
    if tool is None:
        assert step.request is not None
        names = ", ".join(spec.name for spec in step.request.tools) or "none"
        unknown = f"unknown tool {call.name!r}: the tools offered are {names}"
        return bounded(unknown, seg.options.max_tool_output, is_error=True)
    return await tool.invoke(call, limit=seg.options.max_tool_output)


async def task_start(seg: Segment, state: RunState) -> RunState | Stopped:
    event = TaskStartEvent(task=state.task or "", input=state.input)
    return await pass_gate(seg, state, "task.start", event)


async def step_start(seg: Segment, state: RunState) -> RunState | Stopped:
    over = _over_budget(seg, state)
    if over is not None:
        return over
    tools = tuple(tool.spec for tool in seg.options.tools)
    event = StepStartEvent(step=state.steps + 1, messages=state.messages, tools=tools)
    return await pass_gate(seg, state, "step.start", event)


async def ask_model(seg: Segment, state: RunState) -> RunState | Stopped:
    over = _over_budget(seg, state)  # again here: a retried call is checked too
    if over is not None:
        return over
    step = state.in_step()
    request = ModelRequest(model=seg.options.model, messages=step.messages, tools=step.tools)
    event = ModelRequestEvent(step=step.number, request=request)
    return await pass_gate(seg, state, "model.before", event)


async def call_model(seg: Segment, state: RunState) -> RunState | Stopped:
    step = state.in_step()
    assert step.request is not None and seg.options.provider is not None
    try:
        response = _checked(await seg.options.provider.complete(step.request))
    except Exception as exc:  # the run stops here and can be resumed; R9: the type only
        why = Exit(exit_reason="provider_error", error=type(exc).__name__)
        return Stopped(state, why)
    response = with_call_ids(response, step.number)
    state = charge(state, response.usage)
    event = ModelResponseEvent(step=step.number, response=response)
    return await pass_gate(seg, state, "model.after", event)


async def tools(seg: Segment, state: RunState) -> RunState | Stopped:
    step = state.in_step()
    assert step.response is not None
    calls = step.response.message.tool_calls
    if len(step.observation) == len(calls):
        return state.model_copy(update={"phase": "step_end"})
    call = calls[len(step.observation)]
    tool = _offered(step, call.name) or ToolSpec(name=call.name)
    event = ToolCallEvent(step=step.number, tool=tool, call=call)
    return await pass_gate(seg, state, "tool.before", event)


async def run_tool(seg: Segment, state: RunState) -> RunState | Stopped:
    step = state.in_step()
    assert step.call is not None
    result = await _invoke(seg, step, step.call)
    tool = _offered(step, step.call.name) or ToolSpec(name=step.call.name)
    event = ToolResultEvent(step=step.number, tool=tool, call=step.call, result=result)
    return await pass_gate(seg, state, "tool.after", event)


async def step_end(seg: Segment, state: RunState) -> RunState | Stopped:
    step = state.in_step()
    event = StepEndEvent(step=step.number, usage=step.usage)
    return await pass_gate(seg, state, "step.end", event)


async def finish(seg: Segment, state: RunState) -> RunState | Stopped:
    return Stopped(ended(state), Exit(exit_reason="completed"))


PHASES: dict[Phase, Handler] = {
    "task_start": task_start,
    "step_start": step_start,
    "ask_model": ask_model,
    "call_model": call_model,
    "tools": tools,
    "run_tool": run_tool,
    "step_end": step_end,
    "finish": finish,
}
"""The handler of every phase a run can be in, except ``ended``."""
