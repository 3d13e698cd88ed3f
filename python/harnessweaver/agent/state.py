"""The run state: everything ``harness.resume(state, decision)`` needs, as JSON.

A run is a sequence of phases (``phase``); a step in flight keeps its progress in ``step``;
a run stopped by a ``Suspend`` keeps the chain's event and who must approve in ``pending``.
Every model here is frozen pydantic, so a state survives ``model_dump_json`` /
``model_validate_json`` unchanged: store it anywhere and resume it in another process.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue, model_validator

from ..events import (
    EVENT_TYPES,
    Event,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "Action",
    "Decision",
    "Exit",
    "PendingApproval",
    "Phase",
    "RunState",
    "RunWarning",
    "StepRecord",
    "StepState",
    "add_usage",
]

Phase = Literal[
    "task_start",  # emit task.start
    "step_start",  # check budgets, emit step.start
    "ask_model",  # check budgets, emit model.before on the step's request
    "call_model",  # call the provider with the admitted request, emit model.after
    "tools",  # emit tool.before for the next tool call, or go to step_end
    "run_tool",  # run the admitted call, emit tool.after
    "step_end",  # emit step.end; admitted, the step is journaled
    "finish",  # the model answered without tool calls: the run completes
    "ended",  # the run is over and cannot be resumed
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def add_usage(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cost_usd=a.cost_usd + b.cost_usd,
    )


class PendingApproval(_Frozen):
    """A chain answered ``Suspend``: the run waits for a decision.

    ``event`` is the event as the chain left it (its modifications included, JSON form):
    approved, the run goes on with exactly this event. ``identity`` is its content identity
    (I27) when the run's bus has an identity scheme: the ``enforced_identity`` of the hook
    record that suspended, which a :class:`Decision` may echo. ``approval`` is the id of the
    durable approval record filed for it (``AgentOptions.approvals``; ``None`` without one):
    ``resume`` claims it, so the decision is used once, in whichever process resumes.
    """

    hook: str
    reason: str
    approver_role: str | None = None
    code: str | None = None
    event: dict[str, JsonValue]
    identity: str | None = None
    approval: str | None = None

    def event_model(self) -> Event:
        """``event`` as the hook point's typed event."""
        return EVENT_TYPES[self.hook].model_validate(self.event)

    @property
    def call(self) -> ToolCall | None:
        """The tool call waiting for approval, at ``tool.before`` or ``tool.after``."""
        if not self.hook.startswith("tool."):
            return None
        return ToolCall.model_validate(self.event["call"])


class Decision(_Frozen):
    """An approver's answer to a :class:`PendingApproval`: approve, deny, or approve an
    edited event (I23).

    When the pending approval names an ``approver_role``, the decision must name the same
    role: a decision made by the wrong role is refused rather than silently applied.
    An edit holds its event as JSON (``edited``) with the name of its event type
    (``edited_type``), so a decision survives JSON as a state does; ``resume`` checks it
    (event type, hook contracts) before anything runs.

    ``identity``, when given, names the event the approver decided on (the pending approval's
    ``identity``, I27): a decision about another event is refused rather than applied.
    """

    approved: bool
    role: str | None = None
    reason: str = ""
    edited_type: str | None = None
    """The edited event's type name (``"ToolCallEvent"``...); ``None``: no edit."""
    edited: dict[str, JsonValue] | None = None
    """The edited event, JSON form; ``None``: no edit."""
    identity: str | None = None
    """The pending approval's identity, echoed (I27); ``None``: not checked."""

    @model_validator(mode="after")
    def _edit_is_whole(self) -> Decision:
        if (self.edited_type is None) != (self.edited is None):
            raise ValueError("an edit holds both edited_type and edited (I23)")
        if self.edited is not None and not self.approved:
            raise ValueError("an edit is an approval: approved must be true (I23)")
        return self

    @classmethod
    def approve(
        cls, *, role: str | None = None, reason: str = "", identity: str | None = None
    ) -> Decision:
        return cls(approved=True, role=role, reason=reason, identity=identity)

    @classmethod
    def deny(
        cls, reason: str = "", *, role: str | None = None, identity: str | None = None
    ) -> Decision:
        return cls(approved=False, role=role, reason=reason, identity=identity)

    @classmethod
    def edit(
        cls,
        event: Event,
        *,
        role: str | None = None,
        reason: str = "",
        identity: str | None = None,
    ) -> Decision:
        """Approve with ``event`` in place of the pending event (I23): the hook point's chain
        is asked again with it, and what it admits runs. ``event`` is a typed event (a copy of
        ``pending.event_model()`` with changes, say); its type is judged by its real type."""
        kind = _catalogue_type(event)
        if kind is None:
            raise TypeError(
                f"edited event of type {type(event).__name__}: an edit is an event of the "
                "catalogue (hw.ToolCallEvent, hw.ModelRequestEvent...) (I23)"
            )
        edited = event.model_dump(mode="json")  # resume validates it as ``kind``
        return cls(
            approved=True,
            role=role,
            reason=reason,
            edited_type=kind.__name__,
            edited=edited,
            identity=identity,
        )

    @property
    def is_edit(self) -> bool:
        return self.edited is not None


def _catalogue_type(event: object) -> type[Event] | None:
    """The catalogue event type ``event`` is an instance of, by its real type (I18: the MRO
    of ``type(event)``, never ``event.__class__``)."""
    kinds = set(EVENT_TYPES.values())
    return next((kind for kind in type(event).__mro__ if kind in kinds), None)


class RunWarning(_Frozen):
    """A warning a middleware gave at one of the run's hook points (I24), as the journal and
    :attr:`RunResult.warnings` keep it: the hook point, the middleware and its text."""

    hook: str
    middleware: str
    text: str


class Exit(_Frozen):
    """Why a run (or one segment of it) stopped.

    ``reason``, ``code``, ``approver_role`` and ``to`` come from the outcome that stopped it;
    ``error`` is an exception's type name, never its message (R9). ``approval``: the id of
    the approval record a suspended run filed (``how_to_decide`` says where to decide it).
    """

    exit_reason: str
    hook: str | None = None
    reason: str | None = None
    code: str | None = None
    approver_role: str | None = None
    to: str | None = None
    error: str | None = None
    approval: str | None = None


class Action(_Frozen):
    """What the agent did in a step: the request it sent and the response it got."""

    request: ModelRequest
    response: ModelResponse


class StepState(_Frozen):
    """A step in flight.

    ``observation`` holds one tool message per tool call handled so far (a result, a refusal
    or a withheld result), so its length is the index of the next call.
    """

    number: int
    before: RunState
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    request: ModelRequest | None = None
    response: ModelResponse | None = None
    call: ToolCall | None = None
    observation: tuple[Message, ...] = ()
    usage: Usage = Usage()


class RunState(_Frozen):
    """A run, between two phases. ``harness.resume(state, decision)`` takes it back."""

    version: Literal[1] = 1
    run_id: str
    task: str | None = None
    input: JsonValue = None
    phase: Phase = "task_start"
    messages: tuple[Message, ...] = ()
    steps: int = 0
    """Steps completed."""
    usage: Usage = Usage()
    elapsed_s: float = 0.0
    """Wall time spent running (waiting for a decision does not count)."""
    retries: int = 0
    """Retries of the operation in progress."""
    step: StepState | None = None
    pending: PendingApproval | None = None
    exit_reason: str | None = None
    """Why the last segment of the run stopped (``None`` while it has not stopped)."""

    def in_step(self) -> StepState:
        """The step in flight (the phases between ``ask_model`` and ``step_end`` have one)."""
        assert self.step is not None, f"phase {self.phase} runs inside a step"
        return self.step

    @property
    def output(self) -> JsonValue:
        """The last assistant message's text: the run's answer once it has completed."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.content
        return None


class StepRecord(_Frozen):
    """One completed step, as the journal holds it: the state before the step, the action,
    the observation (tool messages) and the step's usage and wall time.

    :meth:`after` is the only way a completed step changes the run state: the loop uses it
    when a step ends and recovery uses it on the journal's last line, so both agree.
    """

    kind: Literal["step"] = "step"
    run_id: str
    step: int
    state: RunState
    action: Action
    observation: tuple[Message, ...]
    usage: Usage
    elapsed_s: float
    warnings: tuple[RunWarning, ...] = ()
    """The warnings given since the journal's line before this one (I24)."""

    def after(self) -> RunState:
        response = self.action.response
        return self.state.model_copy(
            update={
                "phase": "step_start" if response.message.tool_calls else "finish",
                "messages": (*self.action.request.messages, response.message, *self.observation),
                "steps": self.state.steps + 1,
                "usage": add_usage(self.state.usage, self.usage),
                "elapsed_s": self.state.elapsed_s + self.elapsed_s,
            }
        )


StepState.model_rebuild()
RunState.model_rebuild()
StepRecord.model_rebuild()
