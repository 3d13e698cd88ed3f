"""Gates: how the run loop acts on a hook point's combined outcome.

Every hook point but ``task.end`` is a gate the run passes through. A gate says what
admission does (``Continue``, or an approver's approval: go on with the event as the chain
left it), what refusal does for an operation the run can do without (``Block`` or a denial
at ``tool.before``/``tool.after``: the model is told, the run goes on), and where a ``Retry``
sends the run back to. Everything else stops the run:

=========  ==============================================================================
Block      ``blocked`` (tool hooks: a refusal message to the model instead)
Suspend    ``suspended``, with the chain's event kept in ``state.pending``
Escalate   ``escalated``
Retry      back to ``again`` (after the delay), within the retry bound; then
           ``retry_exhausted``
=========  ==============================================================================

Resuming applies the decision through the same gate, so an approval does exactly what a
``Continue`` with the pending event would have done: the run goes on where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..events import (
    Message,
    ModelRequestEvent,
    ModelResponse,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResultEvent,
    Usage,
)
from ..identity import content_identity
from ..outcomes import Block, Continue, Escalate, Outcome, Retry, Suspend
from .approval import file_pending
from .journal import StartLine
from .segment import Segment, Stopped, ended
from .state import (
    Action,
    Decision,
    Exit,
    PendingApproval,
    Phase,
    RunState,
    StepRecord,
    StepState,
    add_usage,
)
from .tools import result_text

__all__ = [
    "GATES",
    "Gate",
    "charge",
    "first_messages",
    "pass_edit",
    "pass_gate",
    "resolve",
    "with_call_ids",
]

Admit = Callable[[Segment, RunState, Any], RunState]
Refuse = Callable[[Segment, RunState, str], RunState]


@dataclass(frozen=True, slots=True)
class Gate:
    hook: str
    admit: Admit
    """Go on with the chain's event."""
    again: Phase
    """Where a ``Retry`` sends the run: the phase that emits this hook again, or (after an
    operation) the phase that starts the operation again."""
    completes: bool
    """Whether admission completes the operation, so its retry count starts over."""
    reasks: bool
    """Whether ``again`` emits this hook point again (``False``: it repeats the operation whose
    result this hook point checks, so a new event comes)."""
    refuse: Refuse | None = None
    """Go on without the operation; ``None``: a refusal stops the run."""


def _with_step(state: RunState, phase: Phase, **changes: Any) -> RunState:
    step = state.in_step().model_copy(update=changes)
    return state.model_copy(update={"phase": phase, "step": step})


def with_call_ids(response: ModelResponse, step: int) -> ModelResponse:
    """Give every tool call an id (``call_<step>_<n>`` where none was given): results are
    paired with calls by id."""
    calls = response.message.tool_calls
    if all(call.id for call in calls):
        return response
    named = tuple(
        call if call.id else call.model_copy(update={"id": f"call_{step}_{n}"})
        for n, call in enumerate(calls, start=1)
    )
    message = response.message.model_copy(update={"tool_calls": named})
    return response.model_copy(update={"message": message})


def first_messages(system: str | None, task_input: Any) -> tuple[Message, ...]:
    """The conversation a task starts with: the system prompt, then the input as the user's
    message (JSON text for anything but a string)."""
    text = task_input if isinstance(task_input, str) else result_text(task_input)
    user = Message(role="user", content=text)
    return (Message(role="system", content=system), user) if system else (user,)


def _model_call(state: RunState) -> ToolCall:
    """The tool call the model made that the step is handling (the next one to answer)."""
    step = state.in_step()
    assert step.response is not None
    return step.response.message.tool_calls[len(step.observation)]


def _answer(state: RunState, text: str) -> RunState:
    """Answer the model's current tool call with ``text`` and move to the next call.

    The tool message answers the call the model made (its id and name), whatever a
    middleware changed the call into, so the conversation stays paired."""
    asked = _model_call(state)
    reply = Message(role="tool", content=text, tool_call_id=asked.id, name=asked.name)
    observation = (*state.in_step().observation, reply)
    return _with_step(state, "tools", call=None, observation=observation)


# --- what admission does at each hook point ---------------------------------------------------


def _task_admitted(seg: Segment, state: RunState, event: TaskStartEvent) -> RunState:
    messages = first_messages(seg.options.system, event.input)
    admitted = state.model_copy(
        update={"input": event.input, "messages": messages, "phase": "step_start"}
    )
    seg.recorder.write(StartLine(run_id=state.run_id, state=admitted))
    return admitted


def _step_admitted(seg: Segment, state: RunState, event: StepStartEvent) -> RunState:
    before = state.model_copy(update={"elapsed_s": seg.elapsed()})
    step = StepState(
        number=state.steps + 1, before=before, messages=event.messages, tools=event.tools
    )
    return state.model_copy(update={"phase": "ask_model", "step": step})


def _request_admitted(seg: Segment, state: RunState, event: ModelRequestEvent) -> RunState:
    return _with_step(state, "call_model", request=event.request)


def _response_admitted(seg: Segment, state: RunState, event: ModelResponseEvent) -> RunState:
    response = with_call_ids(event.response, state.in_step().number)  # calls a middleware added
    return _with_step(state, "tools", response=response)


def _call_admitted(seg: Segment, state: RunState, event: ToolCallEvent) -> RunState:
    return _with_step(state, "run_tool", call=event.call)


def _answered_instead(seg: Segment, state: RunState, text: str) -> RunState:
    """A refused call, or a withheld result: the model reads ``text`` in its place."""
    return _answer(state, text)


def _result_admitted(seg: Segment, state: RunState, event: ToolResultEvent) -> RunState:
    return _answer(state, result_text(event.result.output))


def _step_ended(seg: Segment, state: RunState, event: StepEndEvent) -> RunState:
    """The step is over: journal it, and the state after it is the record's."""
    step = state.in_step()
    assert step.request is not None and step.response is not None
    record = StepRecord(
        run_id=state.run_id,
        step=step.number,
        state=step.before,
        action=Action(request=step.request, response=step.response),
        observation=step.observation,
        usage=step.usage,
        elapsed_s=seg.elapsed() - step.before.elapsed_s,
    )
    seg.recorder.write(record)
    return record.after()


GATES: dict[str, Gate] = {
    gate.hook: gate
    for gate in (
        Gate("task.start", _task_admitted, "task_start", completes=True, reasks=True),
        Gate("step.start", _step_admitted, "step_start", completes=True, reasks=True),
        Gate("model.before", _request_admitted, "ask_model", completes=False, reasks=True),
        Gate("model.after", _response_admitted, "ask_model", completes=True, reasks=False),
        Gate(
            "tool.before",
            _call_admitted,
            "tools",
            completes=False,
            reasks=True,
            refuse=_answered_instead,
        ),
        Gate(
            "tool.after",
            _result_admitted,
            "tools",
            completes=True,
            reasks=False,
            refuse=_answered_instead,
        ),
        Gate("step.end", _step_ended, "step_end", completes=True, reasks=True),
    )
}
"""The gate of every hook point the run passes through, in catalogue order."""


# --- acting on an outcome ---------------------------------------------------------------------


def _refusal(hook: str, reason: str, *, by_approver: bool) -> str:
    """What the model reads instead of a tool's result."""
    reason = reason or "no reason given"
    if by_approver:
        return f"The approver denied this tool call: {reason}"
    if hook == "tool.after":
        return f"The harness withheld this tool's result: {reason}"
    return f"The harness refused this tool call: {reason}"


def _admitted(seg: Segment, state: RunState, gate: Gate, event: Any) -> RunState:
    retries = 0 if gate.completes else state.retries
    clean = state.model_copy(update={"pending": None, "retries": retries})
    return gate.admit(seg, clean, event)


def _refused(seg: Segment, state: RunState, gate: Gate, text: str) -> RunState:
    assert gate.refuse is not None
    clean = state.model_copy(update={"pending": None, "retries": 0})
    return gate.refuse(seg, clean, text)


def _rewind(state: RunState, phase: Phase) -> RunState:
    """Back to ``phase`` for a retry: what the abandoned attempt produced is dropped."""
    retried = state.model_copy(update={"phase": phase, "retries": state.retries + 1})
    if state.step is None:
        return retried
    dropped: dict[str, Any] = {"call": None}
    if phase == "ask_model":
        dropped.update(request=None, response=None)
    return retried.model_copy(update={"step": state.step.model_copy(update=dropped)})


async def _retried(
    seg: Segment, state: RunState, gate: Gate, outcome: Retry, *, stopping: RunState
) -> RunState | Stopped:
    """Back to ``gate.again``, or past the bound the run stops in ``stopping``."""
    bound = seg.options.max_retries
    if outcome.max_attempts is not None:
        bound = min(bound, max(outcome.max_attempts - 1, 0))
    if state.retries >= bound:
        why = Exit(
            exit_reason="retry_exhausted", hook=gate.hook, reason=outcome.reason, code=outcome.code
        )
        return Stopped(ended(stopping), why)
    if outcome.delay:
        await seg.options.sleep(outcome.delay)
    return _rewind(state, gate.again)


async def _suspended(
    seg: Segment, state: RunState, gate: Gate, outcome: Suspend, event: Any
) -> Stopped:
    """The run stops, waiting for a decision. With approvals set, a record is filed first and
    its id kept in the pending approval and the exit (a store that fails raises: the run
    stops with ``error`` before the suspension, and nothing ran)."""
    pending = PendingApproval(
        hook=gate.hook,
        reason=outcome.reason,
        approver_role=outcome.approver_role,
        code=outcome.code,
        event=event.model_dump(mode="json"),
        # I27: the identity the bus traced as enforced, when it traces identities
        identity=content_identity(event) if seg.bus.identity is not None else None,
    )
    approvals = seg.options.approvals
    if approvals is not None:
        record = await file_pending(approvals, state, pending)
        pending = pending.model_copy(update={"approval": record.id})
    why = Exit(
        exit_reason="suspended",
        hook=gate.hook,
        reason=outcome.reason,
        code=outcome.code,
        approver_role=outcome.approver_role,
        approval=pending.approval,
    )
    return Stopped(state.model_copy(update={"pending": pending}), why)


def _not_admitted(state: RunState, outcome: Outcome, event: TaskStartEvent) -> RunState:
    """A task that ``task.start`` did not admit keeps its input only as the whole chain left
    it, so that a redacting middleware has had its say before the input is kept in a state
    (and journaled with it): after a ``Suspend`` (the pending event holds the same input),
    an ``Escalate`` or the last ``Retry``. A ``Block`` stops the chain, maybe
    before the redaction: a blocked task keeps no input (``None``)."""
    kept = None if isinstance(outcome, Block) else event.input
    return state.model_copy(update={"input": kept})


async def pass_gate(
    seg: Segment, state: RunState, hook: str, event: Any, *, edited: bool = False
) -> RunState | Stopped:
    """Emit ``hook`` and act on its combined outcome; the event the chain left is the one
    that goes on (``HookResult.event``: modifications are what runs). ``edited``: ``event``
    is an approver's edit (I23), which a retry must not lose."""
    gate = GATES[hook]
    result = await seg.emit(hook, event)
    outcome = result.outcome
    if isinstance(outcome, Continue):
        return _admitted(seg, state, gate, result.event)
    retried = state  # a retry asks the chain again with the event it was first asked with
    if hook == "task.start":
        state = _not_admitted(state, outcome, result.event)
    if isinstance(outcome, Block):
        if gate.refuse is not None:
            return _refused(seg, state, gate, _refusal(hook, outcome.reason, by_approver=False))
        why = Exit(exit_reason="blocked", hook=hook, reason=outcome.reason, code=outcome.code)
        return Stopped(ended(state), why)
    if isinstance(outcome, Suspend):
        return await _suspended(seg, state, gate, outcome, result.event)
    if isinstance(outcome, Escalate):
        why = Exit(
            exit_reason="escalated",
            hook=hook,
            reason=outcome.reason,
            code=outcome.code,
            to=outcome.to,
        )
        return Stopped(ended(state), why)
    assert isinstance(outcome, Retry), f"unknown outcome {outcome!r}"
    if edited and gate.reasks:
        return await _edit_retried(seg, retried, gate, outcome, event, stopping=state)
    return await _retried(seg, retried, gate, outcome, stopping=state)


async def _edit_retried(
    seg: Segment, state: RunState, gate: Gate, outcome: Retry, edited: Any, *, stopping: RunState
) -> RunState | Stopped:
    """A retry of an edited event where a retry asks this hook point again: the phase would
    rebuild the original event and lose the edit, so the edit itself is asked again (within
    the same bound and after the same delay as any retry)."""
    again = await _retried(seg, state, gate, outcome, stopping=stopping)
    if isinstance(again, Stopped):
        return again
    return await pass_gate(seg, again, gate.hook, edited, edited=True)


def resolve(seg: Segment, state: RunState, decision: Decision) -> RunState | Stopped:
    """Apply an approver's decision to a suspended run, through the gate that suspended it.

    Approved: the gate admits the pending event, as a ``Continue`` would have; the chain is
    not asked again (it ran to the end, and nothing in it blocked: a ``Block`` would have
    won over the ``Suspend``). Denied: a tool call or result is refused and the model is told;
    anywhere else the run ends ``denied``.
    """
    assert state.pending is not None
    pending = state.pending
    gate = GATES[pending.hook]
    if decision.approved:
        return _admitted(seg, state, gate, pending.event_model())
    if gate.refuse is not None:
        return _refused(seg, state, gate, _refusal(gate.hook, decision.reason, by_approver=True))
    why = Exit(
        exit_reason="denied",
        hook=gate.hook,
        reason=decision.reason or None,
        code=pending.code,
        approver_role=pending.approver_role,
    )
    return Stopped(ended(state.model_copy(update={"pending": None})), why)


async def pass_edit(seg: Segment, state: RunState, edited: Any) -> RunState | Stopped:
    """Apply an approver's edit (I23), already checked: the hook point that suspended is
    emitted again with the edited event, which no middleware has seen, and its answer acts as
    any emit's does (a ``Suspend`` asks again, about the edited event)."""
    assert state.pending is not None
    hook = state.pending.hook
    cleared = state.model_copy(update={"pending": None})
    return await pass_gate(seg, cleared, hook, edited, edited=True)


def charge(state: RunState, usage: Usage) -> RunState:
    """Add a model call's usage to the run and to the step in flight."""
    step = state.in_step()
    return state.model_copy(
        update={
            "usage": add_usage(state.usage, usage),
            "step": step.model_copy(update={"usage": add_usage(step.usage, usage)}),
        }
    )
