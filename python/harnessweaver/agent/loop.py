"""The run loop: ``harness.run(task_input)`` and ``harness.resume(state, decision)``.

A run goes from phase to phase (``phases.PHASES``) until one stops it; then ``task.end`` is
emitted with the exit reason, the journal gets its ``end`` line and the exporters the
segment's trace records. Every operation the loop does is behind a hook point: there is no
path from a model response to a tool, or from a tool to the model, that skips the bus.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from ..context import RunContext
from ..envelope import Envelope
from ..events import Event, TaskEndEvent
from ..outcomes import Block, Continue, HookResult
from .approval import claimed_decision, settle
from .edits import checked_edit, checked_identity
from .errors import AgentError
from .gates import pass_edit, resolve
from .journal import DecisionLine, EndLine
from .phases import PHASES
from .records import Recorder, prepare_resume, restore_trace
from .result import RunResult
from .segment import Segment, Stopped
from .state import Decision, Exit, RunState

if TYPE_CHECKING:
    from ..bus import HookBus
    from .options import AgentOptions

__all__ = ["resume_run", "start_run"]

_RULE = "resume"
logger = logging.getLogger(__name__)


async def _drive(seg: Segment, state: RunState) -> Stopped:
    """Phase after phase until one stops the run."""
    while True:
        try:
            moved = await PHASES[state.phase](seg, state)
        except Exception as exc:  # a failure of the harness itself: task.end still runs
            return Stopped(state, Exit(exit_reason="error", error=type(exc).__name__), exc)
        if isinstance(moved, Stopped):
            return moved
        state = moved


def _released_output(result: HookResult, output: JsonValue) -> JsonValue:
    """The output the run reports after ``task.end``: a ``Continue(modified)`` replaces it, a
    ``Block`` withholds it; any other outcome is reported in ``end_outcome`` only, as the run
    is over and there is nothing left to suspend or repeat."""
    if isinstance(result.outcome, Continue):
        return result.event.output  # type: ignore[no-any-return]
    if isinstance(result.outcome, Block):
        return None
    return output


def _record_end(seg: Segment, stopped: Stopped, state: RunState, output: JsonValue) -> None:
    """The journal's ``end`` line, then the segment's trace records to every exporter."""
    line = EndLine(
        run_id=state.run_id,
        exit=stopped.exit,
        output=output,
        steps=state.steps,
        usage=state.usage,
        state=state,
    )
    seg.recorder.write(line)
    records = seg.recorder.segment_records()
    for exporter in seg.options.exporters:
        exporter.export(records, run_id=state.run_id, exit_reason=stopped.exit.exit_reason)


async def _end(seg: Segment, stopped: Stopped) -> RunResult:
    """Emit ``task.end`` with the exit reason, record the end, report it."""
    exit_reason = stopped.exit.exit_reason
    state = stopped.state.model_copy(
        update={"elapsed_s": seg.elapsed(), "exit_reason": exit_reason}
    )
    output = state.output if exit_reason == "completed" else None
    event = TaskEndEvent(
        output=output, exit_reason=exit_reason, steps=state.steps, usage=state.usage
    )
    result = await seg.emit("task.end", event)
    output = _released_output(result, output)
    _record_end(seg, stopped, state, output)
    logger.info(
        "run %s stopped: %s after %d steps%s",
        state.run_id,
        exit_reason,
        state.steps,
        "" if stopped.exit.error is None else f" ({stopped.exit.error})",  # R9: the type only
    )
    if stopped.exception is not None:
        raise stopped.exception
    warnings = tuple(seg.recorder.warnings)
    return RunResult(stopped.exit, output, state, seg.ctx.trace, result.outcome, warnings)


def _segment(
    bus: HookBus, options: AgentOptions, ctx: RunContext, recorder: Recorder, state: RunState
) -> Segment:
    return Segment(bus, options, ctx, recorder, options.clock(), state.elapsed_s)


def _need_provider(options: AgentOptions) -> None:
    if options.provider is None:
        raise AgentError(
            "no_provider",
            "agent-options",
            "provider None: a run calls a model; set one with "
            "harness.with_agent(provider=...) (agent-options)",
        )


async def start_run(
    bus: HookBus,
    options: AgentOptions,
    *,
    task: str | None,
    task_input: Any,
    ctx: RunContext | None = None,
) -> RunResult:
    """Run a task from ``task.start`` until it stops. A journal, if set, is started anew."""
    _need_provider(options)
    ctx = RunContext() if ctx is None else ctx
    state = RunState(run_id=ctx.envelope.run_id, task=task, input=task_input)
    with Recorder(options.journal_path, options.trace_path, ctx.trace, resume=False) as rec:
        seg = _segment(bus, options, ctx, rec, state)
        return await _end(seg, await _drive(seg, state))


def _check_resumable(state: RunState, decision: Decision | None) -> Event | None:
    """Refuse a resume that breaks a rule, before anything runs; the checked edited event
    of an edit (I23), else ``None``."""
    if not isinstance(state, RunState):
        raise AgentError(
            "invalid_state", _RULE, f"state {state!r}: resume takes an hw.RunState ({_RULE})"
        )
    if state.phase == "ended":
        raise AgentError(
            "not_resumable",
            _RULE,
            f"run {state.run_id} ended with exit reason {state.exit_reason!r}: an ended run "
            f"cannot be resumed ({_RULE})",
        )
    pending = state.pending
    if pending is None and decision is not None:
        raise AgentError(
            "unexpected_decision",
            _RULE,
            f"decision {decision!r}: run {state.run_id} is not waiting for one (exit reason "
            f"{state.exit_reason!r}); resume it with decision=None ({_RULE})",
        )
    if pending is None:
        return None
    if decision is None and pending.approval is not None:
        return None  # the decision is the approval record's: claimed before anything runs
    if not isinstance(decision, Decision):
        raise AgentError(
            "decision_required",
            _RULE,
            f"decision {decision!r}: run {state.run_id} is suspended at {pending.hook} "
            f"({pending.reason}) for approver role {pending.approver_role!r}; resume it with "
            f"an hw.Decision ({_RULE})",
        )
    if pending.approver_role is not None and decision.role != pending.approver_role:
        raise AgentError(
            "wrong_approver",
            _RULE,
            f"decision by role {decision.role!r}: the run suspended at {pending.hook} waits "
            f"for approver role {pending.approver_role!r} ({_RULE})",
        )
    checked_identity(decision, pending.identity, f"the run suspended at {pending.hook}")
    if not decision.is_edit:
        return None
    return checked_edit(pending.hook, pending.event_model(), decision)


def _decision_kind(decision: Decision | None) -> str:
    if decision is None:
        return "no decision"
    return "edited" if decision.is_edit else "approved" if decision.approved else "denied"


def _resume_context(options: AgentOptions, state: RunState, ctx: RunContext | None) -> RunContext:
    """The resumed run's context: the given one, or one with the run's id and its trace
    restored from the trace file (so emit ordinals go on where they stopped)."""
    if ctx is None:
        trace = restore_trace(options.trace_path)
        return RunContext(envelope=Envelope(run_id=state.run_id), trace=trace)
    if ctx.envelope.run_id != state.run_id:
        raise AgentError(
            "run_id_mismatch",
            _RULE,
            f"ctx run_id {ctx.envelope.run_id!r}: the state is of run {state.run_id!r}; a "
            f"resumed run keeps its id ({_RULE})",
        )
    return ctx


async def _decide(
    seg: Segment, state: RunState, decision: Decision, edited: Event | None, approval: str | None
) -> RunState | Stopped:
    """Apply the decision to the suspended run, and journal it with the state it leads to
    (an edit: the state after the chain's answer to the edited event, I23) and the approval
    record it came from: a run recovered after the line does not claim it again."""
    assert state.pending is not None
    if edited is None:
        moved = resolve(seg, state, decision)
    else:
        moved = await pass_edit(seg, state, edited)
    after = moved.state if isinstance(moved, Stopped) else moved
    line = DecisionLine(
        run_id=state.run_id,
        hook=state.pending.hook,
        decision=decision,
        approval=approval,
        state=after,
    )
    seg.recorder.write(line)
    return moved


async def _through_record(
    options: AgentOptions, state: RunState, decision: Decision | None, edited: Event | None
) -> tuple[Decision, Event | None]:
    """A pending approval with a durable record: the record is claimed (and, given a
    decision, decided with it first) before anything runs, so it is used once. No decision:
    the record's decision, checked as a given one is (role, identity, edit: I23)."""
    assert state.pending is not None and state.pending.approval is not None
    approvals = options.approvals
    if approvals is None:
        raise AgentError(
            "approvals_required",
            _RULE,
            f"run {state.run_id} waits for approval {state.pending.approval}, a durable record: "
            f"resume it with the harness's approvals (harness.with_agent(approvals=...)), "
            f"so the approval is used once ({_RULE})",
        )
    if decision is not None:
        await settle(approvals, state, decision)
        return decision, edited
    claimed = await claimed_decision(approvals, state)
    return claimed, _check_resumable(state, claimed)


async def resume_run(
    bus: HookBus,
    options: AgentOptions,
    state: RunState,
    decision: Decision | None = None,
    *,
    ctx: RunContext | None = None,
) -> RunResult:
    """Go on with a stopped run exactly where it stopped; a journal, if set, is appended to.
    A pending approval with a durable record is settled through the store first
    (:mod:`.approval`)."""
    _need_provider(options)
    edited = _check_resumable(state, decision)
    approval = None if state.pending is None else state.pending.approval
    if approval is not None:
        decision, edited = await _through_record(options, state, decision, edited)
    scanned = prepare_resume(options.journal_path, options.trace_path)  # before the trace is read
    ctx = _resume_context(options, state, ctx)
    logger.info(
        "run %s resumed at phase %s after %d steps (%s)",
        state.run_id,
        state.phase,
        state.steps,
        _decision_kind(decision),
    )
    state = state.model_copy(update={"exit_reason": None})  # running again
    journal, trace_path = options.journal_path, options.trace_path
    with Recorder(journal, trace_path, ctx.trace, resume=True, scanned=scanned) as rec:
        seg = _segment(bus, options, ctx, rec, state)
        moved = state if decision is None else await _decide(seg, state, decision, edited, approval)
        stopped = moved if isinstance(moved, Stopped) else await _drive(seg, moved)
        return await _end(seg, stopped)
