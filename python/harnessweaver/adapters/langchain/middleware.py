"""``HarnessMiddleware``: a harness's bus as a LangChain v1 ``AgentMiddleware``.

=============  ==================================================================
LangChain      harnessweaver
=============  ==================================================================
before_agent   ``task.start`` (the last human message is the input)
before_model   ``step.end`` of the step before, then ``step.start`` (one model turn)
wrap_model     ``model.before``, the model call, ``model.after``
wrap_tool      ``tool.before``, the tool, ``tool.after``
after_agent    ``step.end`` of the last step, then ``task.end``
=============  ==================================================================

A pause (LangGraph's interrupt) ends its segment with ``task.end`` (``suspended``), as in the
run loop. The run's own facts (its id, step, exit) live in the agent's state, so the
checkpointer keeps them across an interrupt. ``docs/integrations/langchain.md`` has the
outcome table.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Annotated, Any, NotRequired, TypeVar

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from ...approvals import Approvals
from ...bus import HookBus
from ...context import RunContext, Trace
from ...envelope import Envelope
from ...events import ModelRequest as HwRequest
from ...events import (
    ModelRequestEvent,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
)
from ...events import ModelResponse as HwResponse
from ...outcomes import Block, Continue, Retry
from .approval import ran_before
from .convert import (
    ai_message,
    hw_call,
    hw_message,
    hw_messages,
    hw_result,
    hw_tool,
    hw_usage,
    lc_call,
    lc_messages,
    model_name,
    tool_message,
)
from .flow import Await, Call, Emit, Flow, Sleep, drive, drive_async, replay
from .gate import Place, Verdict, ask

__all__ = ["DEFAULT_MAX_RETRIES", "HarnessMiddleware", "HarnessState"]

logger = logging.getLogger(__name__)

R = TypeVar("R")

DEFAULT_MAX_RETRIES = 2
"""Retries of one operation a ``Retry`` may ask for when the source gives no bound (the
default of harnessweaver's own run loop, ``AgentOptions.max_retries``)."""

Exit = dict[str, Any]
"""Why the run ends early: ``exit_reason``, ``hook``, ``reason`` (kept in the state)."""


class HarnessState(AgentState[Any]):
    """The agent's state plus the run's facts the adapter needs after an interrupt; private:
    not part of the agent's input or output schema."""

    hw_run_id: NotRequired[Annotated[str, PrivateStateAttr]]
    hw_step: NotRequired[Annotated[int, PrivateStateAttr]]
    hw_step_open: NotRequired[Annotated[bool, PrivateStateAttr]]
    hw_first: NotRequired[Annotated[int, PrivateStateAttr]]
    hw_exit: NotRequired[Annotated[Exit | None, PrivateStateAttr]]
    hw_dropped: NotRequired[Annotated[list[list[float]], PrivateStateAttr]]
    """The usage of responses the harness dropped: ``[step, input, output, cost]`` each."""


_ENDED = {"block": "blocked", "deny": "denied", "escalate": "escalated"}


def _exit(hook: str, verdict: Verdict) -> Exit:
    return {
        "exit_reason": _ENDED[verdict.action],
        "hook": hook,
        "reason": verdict.reason,
        "code": verdict.code,
        "to": verdict.to,
    }


def _exhausted(hook: str, verdict: Verdict) -> Exit:
    return {
        "exit_reason": "retry_exhausted",
        "hook": hook,
        "reason": verdict.reason,
        "code": verdict.code,
        "to": None,
    }


def _ended_text(exit: Exit) -> str:
    """What the caller reads as the run's last message when the harness ended it."""
    reason = exit["reason"] or "no reason given"
    what = {
        "blocked": "The harness blocked",
        "denied": "The approver denied",
        "escalated": f"The harness escalated to {exit['to'] or 'a human'}",
        "retry_exhausted": "The harness ran out of retries at",
    }[exit["exit_reason"]]
    return f"{what} {exit['hook']}: {reason}"


def _refusal(hook: str, verdict: Verdict) -> str:
    """What the model reads instead of a tool's result (as harnessweaver's run loop says)."""
    reason = verdict.reason or "no reason given"
    if verdict.action == "deny":
        return f"The approver denied this tool call: {reason}"
    if verdict.action == "escalate":
        return f"The harness escalated this tool call to {verdict.to or 'a human'}: {reason}"
    if hook == "tool.after":
        return f"The harness withheld this tool's result: {reason}"
    return f"The harness refused this tool call: {reason}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cost_usd=a.cost_usd + b.cost_usd,
    )


def _dropped(state: Mapping[str, Any], step: int | None = None) -> Usage:
    """The usage of the responses the harness dropped (in ``step``, or in the whole run)."""
    usage = Usage()
    for at, input_tokens, output_tokens, cost in state.get("hw_dropped") or []:
        if step is None or at == step:
            got = Usage(
                input_tokens=int(input_tokens), output_tokens=int(output_tokens), cost_usd=cost
            )
            usage = _add(usage, got)
    return usage


def _usage(state: Mapping[str, Any]) -> Usage:
    """The run's usage so far: the responses in its conversation since it started, and those
    the harness dropped (the run loop charges every model call)."""
    usage = _dropped(state)
    for message in state["messages"][state.get("hw_first", 0) :]:
        usage = _add(usage, hw_usage(message))
    return usage


def _subject() -> str | None:
    """``thread:<id>`` of the LangGraph run in flight (``None`` without a thread: no other
    process can resume it)."""
    try:
        thread = (get_config().get("configurable") or {}).get("thread_id")
    except RuntimeError:  # outside a runnable context
        return None
    return f"thread:{thread}" if thread is not None else None


def _last(messages: list[AnyMessage], kind: type[Any]) -> Any:
    return next((m for m in reversed(messages) if isinstance(m, kind)), None)


class HarnessMiddleware(AgentMiddleware[HarnessState, Any, Any]):
    """Put a harness's bus in front of a LangChain v1 agent::

        agent = create_agent(model, tools, middleware=[HarnessMiddleware(hw.load(...))],
                             checkpointer=InMemorySaver())

    ``source`` is a harness (anything with ``.bus``; its ``task`` and ``agent.max_retries``
    are used) or an ``hw.HookBus``. Every emit of one agent run shares one ``hw.RunContext``
    whose run id is the LangGraph thread id (a new hex id without one); its records go to
    ``trace`` (``self.trace``, a new ``hw.Trace`` unless given).
    """

    state_schema = HarnessState

    def __init__(
        self,
        source: Any,
        *,
        task: str | None = None,
        trace: Trace | None = None,
        max_retries: int | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        bus = source if isinstance(source, HookBus) else getattr(source, "bus", None)
        if not isinstance(bus, HookBus):
            raise TypeError(
                f"HarnessMiddleware needs a harness (with .bus) or an hw.HookBus, got "
                f"{type(source).__name__}"
            )
        agent = getattr(source, "agent", None)
        bound = max_retries if max_retries is not None else getattr(agent, "max_retries", None)
        self.bus = bus
        self.task = task if task is not None else (getattr(source, "task", None) or "")
        self.max_retries = bound if isinstance(bound, int) else DEFAULT_MAX_RETRIES
        self.trace = trace if trace is not None else Trace()
        own = getattr(source, "approvals", None)
        self.approvals = (
            approvals if approvals is not None else (own if isinstance(own, Approvals) else None)
        )
        """Where a pause is filed (docs/approvals.md): ``approvals=``, else the harness's."""
        self._contexts: dict[str, RunContext] = {}
        self._suspended: dict[tuple[str, str], list[Any]] = {}
        self._lock = threading.Lock()

    # --- the run's context and places ---------------------------------------------------------

    def context(self, run_id: str) -> RunContext:
        """The context every emit of run ``run_id`` shares (made on first use)."""
        with self._lock:
            ctx = self._contexts.get(run_id)
            if ctx is None:
                ctx = RunContext(envelope=Envelope(run_id=run_id), trace=self.trace)
                self._contexts[run_id] = ctx
            return ctx

    def _node(self, run_id: str, key: str, flow: Flow[R]) -> Flow[R]:
        """Run a node's flow; when LangGraph interrupts it, what it did is kept (in memory,
        until the node runs again) so the resumed node replays it instead of redoing it."""
        with self._lock:
            memo = self._suspended.pop((run_id, key), [])
        try:
            return (yield from replay(flow, memo))
        except GraphInterrupt:
            with self._lock:
                self._suspended[(run_id, key)] = memo
            raise

    def _place(self, run_id: str, usage: Usage) -> Place:
        """Where the bus is asked; a pause there is filed for the run's thread."""
        return Place(run_id, usage, self.approvals, _subject())

    def _emitter(self, run_id: str) -> Callable[[str, Any], Emit]:
        ctx = self.context(run_id)
        return lambda hook, event: Emit(self.bus, hook, event, ctx)

    def _bound(self, retry: Retry | None) -> int:
        bound = self.max_retries
        if retry is not None and retry.max_attempts is not None:
            bound = min(bound, max(retry.max_attempts - 1, 0))
        return bound

    def _gate(
        self, place: Place, hook: str, event: Any, emit: Callable[[str, Any], Emit]
    ) -> Flow[Verdict | Exit]:
        """Ask at a ``*.start``/``*.before``-like point; a ``Retry`` asks again within the
        bound. Returns a ``go`` verdict or why the run ends."""
        retries = 0
        while True:
            verdict = yield from ask(place, hook, event, emit)
            if verdict.action == "go":
                return verdict
            if verdict.action != "retry":
                return _exit(hook, verdict)
            if retries >= self._bound(verdict.retry):
                return _exhausted(hook, verdict)
            retries += 1
            if verdict.retry is not None and verdict.retry.delay:
                yield Sleep(verdict.retry.delay)

    # --- task.start ----------------------------------------------------------------------------

    def _start(self, run_id: str, state: HarnessState) -> Flow[dict[str, Any] | None]:
        messages = state["messages"]
        update: dict[str, Any] = {
            "hw_run_id": run_id,
            "hw_step": 0,
            "hw_step_open": False,
            "hw_first": len(messages),
            "hw_exit": None,
            "hw_dropped": [],  # a new task on the thread counts its own calls
        }
        asked = _last(messages, HumanMessage)
        event = TaskStartEvent(task=self.task, input=asked.text if asked else None)
        place = self._place(run_id, Usage())
        verdict = yield from self._gate(place, "task.start", event, self._emitter(run_id))
        if not isinstance(verdict, Verdict):
            return {
                **update,
                "hw_exit": verdict,
                "jump_to": "end",
                "messages": [AIMessage(content=_ended_text(verdict))],
            }
        given = verdict.event.input
        if asked is not None and given != event.input:
            update["messages"] = [HumanMessage(content=_text(given), id=asked.id)]
        return update

    def _started(self, state: HarnessState) -> Flow[dict[str, Any] | None]:
        configurable = get_config().get("configurable") or {}
        thread = configurable.get("thread_id")
        run_id = str(thread) if thread is not None else uuid.uuid4().hex
        return self._node(run_id, "task.start", self._start(run_id, state))

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return drive(self._started(state))

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(
        self, state: HarnessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await drive_async(self._started(state))

    # --- step.end, step.start ------------------------------------------------------------------

    def _step_end(self, run_id: str, state: HarnessState) -> Flow[Exit | None]:
        step = state.get("hw_step", 0)
        usage = _add(hw_usage(_last(state["messages"], AIMessage)), _dropped(state, step))
        event = StepEndEvent(step=step, usage=usage)
        place = self._place(run_id, _usage(state))
        verdict = yield from self._gate(place, "step.end", event, self._emitter(run_id))
        return None if isinstance(verdict, Verdict) else verdict

    def _next_step(self, state: HarnessState) -> Flow[dict[str, Any] | None]:
        run_id = state.get("hw_run_id") or ""
        if state.get("hw_exit"):
            return {"jump_to": "end"}  # a tool hook ended the run
        update: dict[str, Any] = {}
        if state.get("hw_step_open"):
            ended = yield from self._step_end(run_id, state)
            update["hw_step_open"] = False
            if ended is not None:
                return {
                    **update,
                    "hw_exit": ended,
                    "jump_to": "end",
                    "messages": [AIMessage(content=_ended_text(ended))],
                }
        step = state.get("hw_step", 0) + 1
        messages = state["messages"]
        event = StepStartEvent(step=step, messages=hw_messages(None, messages))
        place = self._place(run_id, _usage(state))
        verdict = yield from self._gate(place, "step.start", event, self._emitter(run_id))
        if isinstance(verdict, Verdict) and verdict.event.tools:
            # LangChain gives the tools to the model call only: a change to them here has
            # nowhere to go, so the step does not run (change them at model.before).
            verdict = _exit(
                "step.start",
                Verdict("block", event, "step.start cannot change the tools under LangChain"),
            )
        if not isinstance(verdict, Verdict):
            return {
                **update,
                "hw_exit": verdict,
                "jump_to": "end",
                "messages": [AIMessage(content=_ended_text(verdict))],
            }
        update.update(hw_step=step, hw_step_open=True)
        if verdict.event.messages != event.messages:
            changed = lc_messages(verdict.event.messages, messages)
            update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *changed]
        return update

    def _stepping(self, state: HarnessState) -> Flow[dict[str, Any] | None]:
        run_id = state.get("hw_run_id") or ""
        key = f"before_model:{state.get('hw_step', 0)}"
        return self._node(run_id, key, self._next_step(state))

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return drive(self._stepping(state))

    @hook_config(can_jump_to=["end"])
    async def abefore_model(
        self, state: HarnessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await drive_async(self._stepping(state))

    # --- model.before, the model, model.after --------------------------------------------------

    def _model(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Flow[ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]]:
        dropped: list[Usage] = []
        out = yield from self._turn(request, handler, dropped)
        return _charged(request.state, dropped, out)

    def _turn(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Any],
        dropped: list[Usage],
    ) -> Flow[ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]]:
        """The model turn; the usage of each response it drops (retried away, or refused)
        goes to ``dropped``: the run loop charges every model call."""
        state = request.state
        run_id = str(state.get("hw_run_id") or "")
        step = int(state.get("hw_step", 0))  # type: ignore[call-overload]  # set by before_model
        emit = self._emitter(run_id)
        spent = _usage(state)  # what a pause reports: every response so far is charged
        asked = ModelRequestEvent(
            step=step,
            request=HwRequest(
                model=model_name(request.model),
                messages=hw_messages(request.system_message, request.messages),
                tools=tuple(hw_tool(t) for t in request.tools),
            ),
        )
        retries = 0
        while True:
            before = yield from self._gate(self._place(run_id, spent), "model.before", asked, emit)
            if not isinstance(before, Verdict):
                return _end_model(before)
            response = yield Call(handler, _sent(request, asked, before.event))
            message = _last(response.result, AIMessage)
            if message is None:  # nothing harnessweaver can read as a response: as it is
                return response  # type: ignore[no-any-return]
            got = HwResponse(
                message=hw_message(message),
                stop_reason="tool_use" if message.tool_calls else "end_turn",
                usage=hw_usage(message),
            )
            spent = _add(spent, got.usage)
            after = yield from ask(
                self._place(run_id, spent),
                "model.after",
                ModelResponseEvent(step=step, response=got),
                emit,
            )
            if after.action != "go":
                dropped.append(got.usage)
            if after.action == "retry":
                if retries >= self._bound(after.retry):
                    return _end_model(_exhausted("model.after", after))
                retries += 1
                if after.retry is not None and after.retry.delay:
                    yield Sleep(after.retry.delay)
                continue  # the whole onion again: model.before, the model, model.after
            if after.action != "go":
                return _end_model(_exit("model.after", after))
            changed = ai_message(after.event.response.message, message)
            if changed is message:
                return response  # type: ignore[no-any-return]
            result = [changed if m is message else m for m in response.result]
            return ModelResponse(result=result, structured_response=response.structured_response)

    def _model_node(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Flow[ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]]:
        state = request.state
        key = f"model:{state.get('hw_step', 0)}"
        return self._node(str(state.get("hw_run_id") or ""), key, self._model(request, handler))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        return drive(self._model_node(request, handler))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        return await drive_async(self._model_node(request, handler))

    # --- tool.before, the tool, tool.after -----------------------------------------------------

    def _tool(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Flow[ToolMessage | Command[Any]]:
        state = request.state
        run_id = str(state.get("hw_run_id") or "")
        step = int(state.get("hw_step", 0))
        asked_call = request.tool_call
        emit = self._emitter(run_id)
        place = self._place(run_id, _usage(state))
        spec = (
            hw_tool(request.tool) if request.tool is not None else ToolSpec(name=asked_call["name"])
        )
        asked = ToolCallEvent(step=step, tool=spec, call=hw_call(asked_call))
        retries = 0
        ran = None
        if self.approvals is not None:
            # a pause at tool.after (in this or another process) came after the tool ran:
            # its result is in the record, and the tool does not run a second time
            ran = yield Await(partial(ran_before, self.approvals, place.subject, asked.call.id))
            if ran is not None and ran.unavailable:
                why = "the approvals store could not answer whether this call ran: refused"
                return _refuse_tool(
                    request, "tool.before", Verdict("block", asked, why, "state_unavailable")
                )
        while True:
            if ran is not None:
                call = asked.call.model_copy(update={"arguments": ran.arguments})
                result = ToolResult.model_validate(ran.result or {})
                out: Any = tool_message(result, _refused_message(request, ""))
                ran = None
            else:
                before = yield from ask(place, "tool.before", asked, emit)
                if before.action == "go" and before.event.call.name != asked.call.name:
                    # the tool object is the one the model named: a call of another tool
                    # cannot be run in its place, so it is refused rather than misrouted
                    before = Verdict("block", asked, "a middleware renamed the call's tool")
                if before.action == "retry":
                    if retries >= self._bound(before.retry):
                        return _refuse_tool(
                            request,
                            "tool.before",
                            Verdict(
                                "block", asked, f"out of retries: {before.reason}", before.code
                            ),
                        )
                    retries += 1
                    if before.retry is not None and before.retry.delay:
                        yield Sleep(before.retry.delay)
                    continue
                if before.action != "go":
                    return _refuse_tool(request, "tool.before", before)
                call = before.event.call
                run = (
                    request
                    if call == asked.call
                    else request.override(tool_call=lc_call(call, asked_call))
                )
                out = yield Call(handler, run)
                result = hw_result(out) if isinstance(out, ToolMessage) else ToolResult()
            event = ToolResultEvent(step=step, tool=spec, call=call, result=result)
            after = yield from ask(place, "tool.after", event, emit)
            if after.action == "retry":
                if retries >= self._bound(after.retry):
                    return _refuse_tool(
                        request,
                        "tool.after",
                        Verdict("block", event, f"out of retries: {after.reason}", after.code),
                    )
                retries += 1
                if after.retry is not None and after.retry.delay:
                    yield Sleep(after.retry.delay)
                continue  # the whole onion again: tool.before, the tool, tool.after
            if after.action != "go":
                return _refuse_tool(request, "tool.after", after)
            given = after.event.result
            if isinstance(out, ToolMessage):
                return tool_message(given, out)
            if given == result:
                return out  # type: ignore[no-any-return]  # a Command, as the tool made it
            # a tool.after change to a Command's result: the change is what the model reads
            # (the Command's own update is dropped: the safer of the two)
            return tool_message(given, _refused_message(request, ""))

    def _tool_node(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Flow[ToolMessage | Command[Any]]:
        state = request.state
        key = f"tool:{state.get('hw_step', 0)}:{request.tool_call.get('id')}"
        return self._node(str(state.get("hw_run_id") or ""), key, self._tool(request, handler))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return drive(self._tool_node(request, handler))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await drive_async(self._tool_node(request, handler))

    # --- step.end, task.end --------------------------------------------------------------------

    def _end(self, state: HarnessState) -> Flow[dict[str, Any] | None]:
        run_id = state.get("hw_run_id") or ""
        update: dict[str, Any] = {}
        exit = state.get("hw_exit")
        if state.get("hw_step_open"):
            update["hw_step_open"] = False
            if exit is None:  # a step cut short emits no step.end (as in the run loop)
                exit = yield from self._step_end(run_id, state)
        # the steps completed: a step that the harness ended (at model.*, tool.* or step.end)
        # is not, as in the run loop
        steps = state.get("hw_step", 0)
        if exit is not None and exit["hook"] not in ("task.start", "step.start"):
            steps -= 1
        answer = _last(state["messages"][state.get("hw_first", 0) :], AIMessage)
        reason = exit["exit_reason"] if exit else "completed"
        output = answer.text if answer is not None and exit is None else None
        event = TaskEndEvent(output=output, exit_reason=reason, steps=steps, usage=_usage(state))
        result = yield self._emitter(run_id)("task.end", event)
        with self._lock:
            self._contexts.pop(run_id, None)
        # task.end cannot reopen the run: a change replaces the output, a Block withholds
        # it; a Suspend, Escalate or Retry there is only in the trace (as in the run loop).
        outcome = result.outcome
        if answer is None or exit is not None:
            return update or None
        if isinstance(outcome, Block):
            text = f"The harness withheld the output: {outcome.reason or 'no reason given'}"
            update["messages"] = [AIMessage(content=text, id=answer.id)]
        elif isinstance(outcome, Continue) and result.event.output != output:
            update["messages"] = [AIMessage(content=_text(result.event.output), id=answer.id)]
        return update or None

    def after_agent(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return drive(self._node(state.get("hw_run_id") or "", "end", self._end(state)))

    async def aafter_agent(
        self, state: HarnessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await drive_async(self._node(state.get("hw_run_id") or "", "end", self._end(state)))


def _sent(
    request: ModelRequest[Any], asked: ModelRequestEvent, given: ModelRequestEvent
) -> ModelRequest[Any]:
    """The request LangChain sends: the original one unless the chain changed it."""
    if given == asked:
        return request
    messages = list(given.request.messages)
    system = request.system_message
    if messages and messages[0].role == "system":
        head = messages.pop(0)
        if system is None or hw_message(system) != head:
            system = lc_messages([head], [])[0]  # type: ignore[assignment]
    else:
        system = None
    offered = {t.name for t in given.request.tools}
    # A tool a middleware adds has no function behind it here: only removals are applied.
    tools = [t for t in request.tools if hw_tool(t).name in offered]
    return request.override(
        messages=lc_messages(messages, request.messages), system_message=system, tools=tools
    )


def _charged(
    state: Mapping[str, Any],
    dropped: list[Usage],
    out: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """``out``, with the usage of the responses the turn dropped kept in the state (per
    step), so that ``step.end`` and ``task.end`` count every model call, as the run loop's."""
    step = state.get("hw_step", 0)
    new = [[step, u.input_tokens, u.output_tokens, u.cost_usd] for u in dropped if u != Usage()]
    if not new:
        return out
    update = {"hw_dropped": [*(state.get("hw_dropped") or []), *new]}
    if isinstance(out, ExtendedModelResponse):
        update = {**(out.command.update or {}), **update} if out.command else update
        return ExtendedModelResponse(
            model_response=out.model_response, command=Command(update=update)
        )
    response = out if isinstance(out, ModelResponse) else ModelResponse(result=[out])
    return ExtendedModelResponse(model_response=response, command=Command(update=update))


def _end_model(exit: Exit) -> ExtendedModelResponse[Any]:
    """The model's turn is replaced by a message saying why the run ends, and the run ends
    (no tool calls: LangChain goes to the end; the exit is kept for task.end)."""
    message = AIMessage(content=_ended_text(exit))
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[message]),
        command=Command(update={"hw_exit": exit}),
    )


def _refused_message(request: ToolCallRequest, text: str) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(
        content=text, tool_call_id=call.get("id") or "", name=call["name"], status="error"
    )


def _refuse_tool(
    request: ToolCallRequest, hook: str, verdict: Verdict
) -> ToolMessage | Command[Any]:
    """The model reads why instead of the tool's result and the run goes on; an Escalate
    also ends the run after this step (before the next model turn)."""
    message = _refused_message(request, _refusal(hook, verdict))
    if verdict.action != "escalate":
        return message
    return Command(update={"messages": [message], "hw_exit": _exit(hook, verdict)})
