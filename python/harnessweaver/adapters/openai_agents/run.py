"""One run of an SDK agent under the bus: its run context, its step count, its tool calls.

A :class:`GuardedRun` is made once per run (``adapter.new_run()``) and lives across the
run's interruptions: ``await run.run(agent, input)``, then, after approving or rejecting on
the ``RunState``, ``await run.run(agent, state)``. Every emit of the run uses its one
``hw.RunContext`` (a stable run id, I21), so its trace records carry run, step and tool.

The guarded tools find the run in flight through a context variable that ``run()`` sets:
the SDK starts its tool calls as tasks of the run, which inherit it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents import RunConfig, RunHooks, Runner, RunState
from agents.run_config import CallModelData, ModelInputData

from ...context import RunContext, Trace
from ...envelope import Envelope
from ...events import (
    ModelRequest,
    ModelRequestEvent,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    Usage,
)
from ...outcomes import Block, Continue, HookResult, Retry
from .convert import (
    arguments_of,
    handoff_specs,
    jsonable,
    messages_of,
    model_name,
    response_of,
    spec_of,
    specs_of,
)
from .model import GuardedProvider, guarded_model
from .rewrite import rewritten, rewritten_response, task_input
from .stops import HarnessStopped, not_expressible, stop_for

if TYPE_CHECKING:
    from ...agent.state import Decision, PendingApproval
    from ...approvals import ApprovalRecord, Approvals
    from ...bus import HookBus

__all__ = ["GuardedRun", "GuardedStream", "ToolCallRecord", "call_id_of", "current_run"]

logger = logging.getLogger(__name__)
_CURRENT: ContextVar[GuardedRun | None] = ContextVar(
    "harnessweaver_openai_agents_run", default=None
)
GUARDED = "__harnessweaver_guarded__"
"""Set on a tool the adapter guarded: its tool points are emitted by the tool itself."""


@dataclass(slots=True)
class ToolCallRecord:
    """What the bus answered for one tool call (by call id) while the call is under way."""

    before: HookResult
    event: ToolCallEvent
    """The event as emitted (the chain's version is ``before.event``)."""
    approval_asked: bool
    """The answer came through ``needs_approval``: a ``Suspend`` became an SDK approval."""
    after: HookResult | None = None
    approval: ApprovalRecord | None = None
    """The call's record in the approvals book, when it was filed or consulted."""
    failed: bool = False
    """The tool's function raised (seen by the watched invoker, failing.py): ``is_error``."""


def current_run() -> GuardedRun | None:
    """The guarded run in flight in this task, if any."""
    return _CURRENT.get()


class GuardedRun:
    """One run under the bus. ``ctx`` is its run context (``ctx.trace`` its records),
    ``steps`` the model turns so far; ``run()`` starts or resumes it."""

    def __init__(
        self,
        bus: HookBus,
        run_id: str | None = None,
        trace: Trace | None = None,
        *,
        max_retries: int = 2,
        approvals: Approvals | None = None,
    ):
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(
                f"max_retries {max_retries!r}: the retries of one operation are a whole number "
                "from 0 (the run loop's max_retries, docs/agent.md)"
            )
        envelope = Envelope() if run_id is None else Envelope(run_id=run_id)
        self.bus = bus
        self.max_retries = max_retries
        self.approvals = approvals
        """Where a suspended call is filed and consulted (docs/approvals.md)."""
        self.ctx = (
            RunContext(envelope=envelope)
            if trace is None
            else RunContext(envelope=envelope, trace=trace)
        )
        self.steps = 0
        self.hooks: RunHooks[Any] = _BusHooks(self)
        self._step_open = False
        self._step_usage = Usage()
        self._started = False
        self._calls: dict[str, ToolCallRecord] = {}
        self._decided: set[str] = set()
        self._filtered = False
        """This model turn's step.start and model.before were emitted by the run's
        ``call_model_input_filter`` (which the SDK calls just before ``on_llm_start``)."""
        self._answered = False
        """This model turn's ``model.after`` was emitted inside the model call
        (``model.py``), so ``on_llm_end`` does not emit it again."""
        self._turn: tuple[str | None, list[Any], Any] | None = None
        """The instructions, items and ``model.before`` event of this turn, as
        ``step.start`` left them: what a Retry at ``model.after`` asks again."""

    @property
    def run_id(self) -> str:
        return self.ctx.envelope.run_id

    @property
    def trace(self) -> Trace:
        return self.ctx.trace

    async def emit(self, hook: str, event: Any) -> HookResult:
        return await self.bus.emit(hook, event, self.ctx)

    async def ask(self, hook: str, event: Any) -> HookResult:
        """Emit at a point where the run loop answers a ``Retry`` by asking the chain again
        (``task.start``, ``step.start``, ``model.before``, ``tool.before``, ``step.end``): so
        does the adapter, after the Retry's delay, up to ``max_retries`` times (a
        ``Retry(max_attempts=n)`` lowers that to ``n - 1``). The last answer is returned: a
        Retry still, once the bound is reached, which the caller acts on."""
        retries = 0
        while True:
            result = await self.emit(hook, event)
            outcome = result.outcome
            if not isinstance(outcome, Retry):
                return result
            bound = self.max_retries
            if outcome.max_attempts is not None:
                bound = min(bound, max(outcome.max_attempts - 1, 0))
            if retries >= bound:
                return result
            retries += 1
            if outcome.delay:
                await asyncio.sleep(outcome.delay)

    async def run(self, agent: Any, input: Any, **kwargs: Any) -> Any:
        """``Runner.run(agent, input, hooks=..., **kwargs)`` under the bus; ``input`` is the
        task's input, or the ``RunState`` of this run to resume. Emits ``task.start`` once per
        run and ``task.end`` whenever a segment stops (``suspended`` when it has
        interruptions), as harnessweaver's own run loop does. ``HarnessStopped`` is raised
        when the bus's answer ended the run."""
        _no_hooks(kwargs)
        token = _CURRENT.set(self)
        try:
            try:
                input = await self._begin(agent, input)
                kwargs["run_config"] = self._config(kwargs.get("run_config"))
                result = await Runner.run(agent, input, hooks=self.hooks, **kwargs)
            except Exception as exc:
                await self._failed(exc)
                raise
            return await self._finished(result)
        finally:
            _CURRENT.reset(token)

    async def run_streamed(self, agent: Any, input: Any, **kwargs: Any) -> GuardedStream:
        """``Runner.run_streamed`` under the bus: the same hook points, records and outcomes
        as :meth:`run`. Iterate ``stream.stream_events()`` to the end; ``task.end`` is emitted
        there, and ``stream.result`` is the SDK's ``RunResultStreaming`` (its
        ``final_output`` as ``task.end`` left it, its ``interruptions`` to resume)."""
        _no_hooks(kwargs)
        token = _CURRENT.set(self)  # the SDK's run task copies the context it is started in
        try:
            try:
                input = await self._begin(agent, input)
                kwargs["run_config"] = self._config(kwargs.get("run_config"))
                streamed = Runner.run_streamed(agent, input, hooks=self.hooks, **kwargs)
            except Exception as exc:
                await self._failed(exc)
                raise
        finally:
            _CURRENT.reset(token)
        return GuardedStream(self, streamed)

    async def _begin(self, agent: Any, input: Any) -> Any:
        """``task.start`` for a new run; the input to run (as its chain left it). A
        ``RunState`` resumes a run that started before: no ``task.start``, and a
        ``GuardedRun`` that did not see its start (a state restored in another process) takes
        the step count and the calls awaiting a decision from it."""
        self._filtered = self._answered = False  # a segment the bus ended may leave them set
        if isinstance(input, RunState):
            self.adopt(input)
            from .approval import settle

            await settle(self, input)  # the book's decisions, before the SDK resumes
            return input
        if not self._started:
            return await self._task_start(agent, input)
        return input

    def _config(self, config: Any) -> RunConfig:
        """The caller's ``RunConfig`` (or a new one) whose ``call_model_input_filter`` emits
        this run's ``step.start`` and ``model.before`` and applies their rewrites. A filter
        of the caller's runs first: the bus judges what the model will really receive."""
        if config is None:
            config = RunConfig()
        if not isinstance(config, RunConfig):
            raise TypeError(f"run_config must be an agents.RunConfig, got {type(config).__name__}")
        theirs = config.call_model_input_filter

        async def filter_input(data: CallModelData[Any]) -> ModelInputData:
            if theirs is not None:
                found = theirs(data)
                given = await found if inspect.isawaitable(found) else found
                data = CallModelData(model_data=given, agent=data.agent, context=data.context)
            return await self.filter_input(data)

        return dataclasses.replace(
            config,
            call_model_input_filter=filter_input,
            model=guarded_model(config.model),
            model_provider=(
                config.model_provider
                if isinstance(config.model_provider, GuardedProvider)
                else GuardedProvider(config.model_provider)
            ),
        )

    async def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, HarnessStopped):
            await self._task_end(None, _EXIT_REASONS.get(exc.outcome, "blocked"))
            return
        await self._task_end(None, "error")
        logger.info("run %s failed: %s", self.run_id, type(exc).__name__)  # R9

    async def _finished(self, result: Any) -> Any:
        if result.interruptions:
            await self._task_end(None, "suspended")
            return result
        result.final_output = await self._task_end(result.final_output, "completed")
        return result

    def adopt(self, state: Any) -> None:
        """Take the calls awaiting a decision from the SDK's ``state`` of this run, and (if
        this ``GuardedRun`` did not see the run start: a state restored in another process)
        the step count."""
        self._decided = {call_id_of(item) for item in state.get_interruptions()}
        if not self._started:
            self._started = True
            turn = getattr(state, "_current_turn", 0)  # the SDK's model turns so far
            self.steps = turn if isinstance(turn, int) else 0
            self._step_open = bool(self._decided) and self.steps > 0

    def decided(self, call_id: str) -> bool:
        """Whether the ``RunState`` this segment resumed holds a decision for the call: the
        SDK runs such a call only once approved, without asking ``needs_approval`` again."""
        return call_id in self._decided

    # --- task and step points ----------------------------------------------------------------

    async def _task_start(self, agent: Any, input: Any) -> Any:
        """``task.start``; the input ``Runner.run`` is given: a ``Continue(modified)``'s
        input when it has the form of the one given (a string, or a list of input items)."""
        self._started = True
        event = TaskStartEvent(task=str(getattr(agent, "name", "") or ""), input=jsonable(input))
        result = await self.ask("task.start", event)
        if isinstance(result.outcome, Continue) and result.event != event:
            changed = task_input(input, result.event)
            if changed is None:
                raise not_expressible("task.start", "task input")
            return changed
        self._raise(stop_for("task.start", result, event, "task input"))
        return input

    async def _task_end(self, output: Any, exit_reason: str) -> Any:
        """``task.end`` for a segment that stopped; the output the run reports, as the run
        loop reports it: a ``Continue(modified)`` replaces it, a ``Block`` withholds it
        (``None``), any other outcome leaves it (the run is over: nothing is left to suspend
        or repeat). As in the run loop, a step cut short (blocked, suspended, an error) emits
        no ``step.end`` and ``steps`` counts the completed ones; a suspended segment leaves its
        step open: the resumed run goes on in it."""
        if exit_reason == "completed":
            await self.end_step()
        completed = self.steps - 1 if self._step_open else self.steps
        if exit_reason not in ("completed", "suspended"):
            self._step_open = False  # the run is over: its last step stays cut short
        event = TaskEndEvent(output=jsonable(output), exit_reason=exit_reason, steps=completed)
        result = await self.emit("task.end", event)
        if isinstance(result.outcome, Continue):
            return output if result.event == event else result.event.output
        return None if isinstance(result.outcome, Block) else output

    async def filter_input(self, data: CallModelData[Any]) -> ModelInputData:
        """A model turn begins (the SDK's ``call_model_input_filter``): ``step.start`` and
        ``model.before`` (the previous turn's ``step.end`` first). A ``Continue(modified)``
        of the messages is what the model receives (``rewrite.py``: texts, tool-call
        arguments, one appended note); any other change, and any other outcome, ends the run."""
        agent, given = data.agent, data.model_data
        system, items = given.instructions, list(given.input)
        await self.end_step()
        self._filtered = True
        self.steps += 1
        self._step_open = True
        tools = specs_of(getattr(agent, "tools", ()) or ()) + handoff_specs(agent)
        messages = messages_of(system, items)
        start = StepStartEvent(step=self.steps, messages=messages, tools=tools)
        result = await self.ask("step.start", start)
        if isinstance(result.outcome, Continue) and result.event != start:
            changed = result.event
            if changed.tools != start.tools or changed.step != start.step:
                raise not_expressible("step.start", "step")
            system, items = self._rewrite("step.start", system, items, messages, changed.messages)
            messages = messages_of(system, items)
        else:
            self._raise(stop_for("step.start", result, start, "step"))
        request = ModelRequest(model=model_name(agent), messages=messages, tools=tools)
        event = ModelRequestEvent(step=self.steps, request=request)
        self._turn = (system, items, event)
        return await self._model_before(system, items, event)

    async def model_before_again(self) -> ModelInputData:
        """``model.before`` asked again for this turn's request (after a Retry at
        ``model.after``, as the run loop does); what the model is called with next."""
        assert self._turn is not None, "model.before again outside a model turn"
        return await self._model_before(*self._turn)

    async def _model_before(
        self, system: str | None, items: list[Any], event: ModelRequestEvent
    ) -> ModelInputData:
        request, messages = event.request, event.request.messages
        result = await self.ask("model.before", event)
        if isinstance(result.outcome, Continue) and result.event != event:
            asked = result.event.request
            same = asked.model_copy(update={"messages": request.messages})
            if same != request or result.event.step != event.step:
                raise not_expressible("model.before", "model request")  # tools, model, ...
            system, items = self._rewrite("model.before", system, items, messages, asked.messages)
        else:
            self._raise(stop_for("model.before", result, event, "model request"))
        return ModelInputData(input=items, instructions=system)

    @staticmethod
    def _rewrite(
        hook: str, system: str | None, items: list[Any], old: Any, new: Any
    ) -> tuple[str | None, list[Any]]:
        done = rewritten(system, items, old, new)
        if done is None:
            raise not_expressible(hook, "model request" if hook == "model.before" else "step")
        return done

    async def start_step(self, agent: Any, system: str | None, items: list[Any]) -> None:
        """A model turn begins (``on_llm_start``): nothing when the run's filter emitted
        its points already; else (a run whose config the SDK did not filter with)
        ``step.start`` and ``model.before``, where anything but a plain ``Continue`` ends
        the run."""
        if self._filtered:
            self._filtered = False
            return
        await self.end_step()
        self.steps += 1
        self._step_open = True
        tools = specs_of(getattr(agent, "tools", ()) or ()) + handoff_specs(agent)
        messages = messages_of(system, items)
        start = StepStartEvent(step=self.steps, messages=messages, tools=tools)
        self._raise(stop_for("step.start", await self.ask("step.start", start), start, "step"))
        request = ModelRequest(model=model_name(agent), messages=messages, tools=tools)
        event = ModelRequestEvent(step=self.steps, request=request)
        result = await self.ask("model.before", event)
        self._raise(stop_for("model.before", result, event, "model request"))

    async def answer_in_call(self, response: Any, retries: int) -> tuple[float | None, Any]:
        """``model.after`` inside the model call (``model.py``): the delay before the model
        is called again (a Retry within the run's bound, ``retries`` made so far; else
        ``None``) and the response to go on with: the model's, or a ``Continue(modified)``'s
        where the SDK's items can carry it (``rewrite.rewritten_response``: the text, a tool
        call's arguments). Anything else ends the run, as :meth:`model_answered` does."""
        self._answered = True
        result, event = await self._model_after(response)
        outcome = result.outcome
        if isinstance(outcome, Retry):
            bound = self.max_retries
            if outcome.max_attempts is not None:
                bound = min(bound, max(outcome.max_attempts - 1, 0))
            if retries < bound:
                return outcome.delay or 0.0, response
        if isinstance(outcome, Continue) and result.event != event:
            changed = result.event
            same = changed.response.model_copy(update={"message": event.response.message})
            if same == event.response and changed.step == event.step:
                new = rewritten_response(response, event.response.message, changed.response.message)
                if new is not None:
                    return None, new
        self._raise(stop_for("model.after", result, event, "model response"))
        return None, response

    async def model_answered(self, response: Any) -> None:
        """``model.after`` (``on_llm_end``): nothing when the model call answered it; else
        the run ends unless the chain admits the response unchanged."""
        if self._answered:
            self._answered = False
            return
        result, event = await self._model_after(response)
        self._raise(stop_for("model.after", result, event, "model response"))

    async def _model_after(self, response: Any) -> tuple[HookResult, ModelResponseEvent]:
        converted = response_of(response)
        usage = self._step_usage
        self._step_usage = Usage(
            input_tokens=usage.input_tokens + converted.usage.input_tokens,
            output_tokens=usage.output_tokens + converted.usage.output_tokens,
        )
        event = ModelResponseEvent(step=self.steps, response=converted)
        return await self.emit("model.after", event), event

    async def end_step(self) -> None:
        if not self._step_open:
            return
        event = StepEndEvent(step=self.steps, usage=self._step_usage)
        self._raise(stop_for("step.end", await self.ask("step.end", event), event, "step"))
        self._step_open = False  # admitted: the step is complete (else it was cut short)
        self._step_usage = Usage()

    @staticmethod
    def _raise(stop: HarnessStopped | None) -> None:
        if stop is not None:
            raise stop

    # --- tool points -------------------------------------------------------------------------

    def call(self, call_id: str) -> ToolCallRecord | None:
        return self._calls.get(call_id)

    def approval(self, item: Any) -> ApprovalRecord | None:
        """The approvals book's record for the call of the approval ``item`` (its ``id``, and
        ``harnessweaver.approvals.how_to_decide(record)`` to show), when this run filed it."""
        record = self._calls.get(call_id_of(item))
        return record.approval if record is not None else None

    def forget(self, call_id: str) -> None:
        self._calls.pop(call_id, None)

    def keep(self, record: ToolCallRecord) -> None:
        """Keep ``record`` as the call's answer (an approver's edit, asked of the chain)."""
        self._calls[record.event.call.id] = record

    async def decide(self, state: Any, item: Any, decision: Decision) -> PendingApproval | None:
        """Apply an ``hw.Decision`` (an edit included, I23) to the SDK's ``state`` for the
        approval ``item`` of a call the chain suspended: ``decide.py``."""
        from .decide import decide

        return await decide(self, state, item, decision)

    async def pending(self, state: Any, item: Any) -> PendingApproval | None:
        """The approval the chain waits for on the call of ``item``, its event included (what
        an approver edits); ``None`` when the chain no longer suspends the call: ``decide.py``."""
        from .decide import pending

        return await pending(self, state, item)

    async def tool_before(
        self, tool: Any, call_id: str, arguments: dict[str, Any], *, approval_asked: bool
    ) -> ToolCallRecord:
        """Emit ``tool.before`` for a call and keep the answer for the rest of the call."""
        event = ToolCallEvent.model_validate(
            {
                "step": self.steps,
                "tool": spec_of(tool),
                "call": {"id": call_id, "name": getattr(tool, "name", ""), "arguments": arguments},
            }
        )
        record = ToolCallRecord(await self.ask("tool.before", event), event, approval_asked)
        self._calls[call_id] = record
        return record

    async def tool_after(
        self, record: ToolCallRecord, output: Any
    ) -> tuple[HookResult, ToolResultEvent]:
        """Emit ``tool.after`` for a call that ran, with the call as it ran; the answer and
        the event as emitted."""
        call = record.before.event.call
        result = ToolResult(output=jsonable(output), is_error=record.failed)
        event = ToolResultEvent(step=self.steps, tool=record.event.tool, call=call, result=result)
        record.after = await self.emit("tool.after", event)
        return record.after, event


class GuardedStream:
    """A streamed segment of a :class:`GuardedRun`: ``stream_events()`` passes the SDK's
    events on and emits ``task.end`` when the stream ends (or fails)."""

    def __init__(self, run: GuardedRun, result: Any) -> None:
        self.run = run
        self.result = result
        """The SDK's ``RunResultStreaming``."""

    async def stream_events(self) -> AsyncIterator[Any]:
        try:
            async for event in self.result.stream_events():
                yield event
        except Exception as exc:
            await self.run._failed(exc)
            raise
        await self.run._finished(self.result)


def _no_hooks(kwargs: dict[str, Any]) -> None:
    if "hooks" in kwargs:
        raise TypeError("GuardedRun sets the run's hooks itself: compose them into one RunHooks")


def call_id_of(item: Any) -> str:
    """The call id of an approval item (its raw call's)."""
    raw = getattr(item, "raw_item", None)
    found = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    return str(found or getattr(item, "call_id", "") or "")


_EXIT_REASONS = {"block": "blocked", "escalate": "escalated", "retry": "retry_exhausted"}
"""task.end's exit reason when the bus ended the run; a Suspend or a change the SDK cannot
carry out ended it as a Block would (the safer mapping): ``blocked``."""


class _BusHooks(RunHooks[Any]):
    """The run's ``RunHooks``: model turns, and the tools the adapter did not guard."""

    def __init__(self, run: GuardedRun) -> None:
        self._run = run

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: str | None, input_items: list[Any]
    ) -> None:
        await self._run.start_step(agent, system_prompt, input_items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self._run.model_answered(response)

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        await self._run.end_step()

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        """A tool the adapter did not guard (a hosted, shell or unguarded function tool)
        can only be let through or stopped: anything but a plain ``Continue`` ends the run
        before the tool runs."""
        if getattr(tool, GUARDED, False):
            return  # its own guardrails emit for it
        call_id = str(getattr(context, "tool_call_id", "") or "")
        arguments = arguments_of(getattr(context, "tool_arguments", None)) or {}
        record = await self._run.tool_before(tool, call_id, arguments, approval_asked=False)
        self._run.forget(call_id)
        self._run._raise(stop_for("tool.before", record.before, record.event, "tool call"))

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
        if getattr(tool, GUARDED, False):
            return
        call_id = str(getattr(context, "tool_call_id", "") or "")
        event = ToolResultEvent(
            step=self._run.steps,
            tool=spec_of(tool),
            call={"id": call_id, "name": str(getattr(tool, "name", ""))},
            result=ToolResult(output=jsonable(result)),
        )
        answer = await self._run.emit("tool.after", event)
        self._run._raise(stop_for("tool.after", answer, event, "tool result"))
