"""Guarded function tools: ``tool.before`` and ``tool.after`` at the SDK's own tool points.

A guarded tool is a copy of a ``FunctionTool`` with

* ``needs_approval``: emits ``tool.before`` (once per call, the answer kept by call id); a
  ``Suspend`` makes the SDK interrupt the run for approval (``result.interruptions``);
* a tool input guardrail, first: a ``Block`` (or a ``Retry`` still answered after the chain
  was asked again up to the run's bound) answers ``reject_content`` with the refusal, so the
  tool never runs and the model reads why; an ``Escalate`` ends the run;
* ``on_invoke_tool`` wrapped: the tool runs with the arguments the chain left (a
  ``Continue(modified)`` is what runs), then ``tool.after`` is emitted (``is_error`` when
  the function raised and the SDK answered with its failure text, failing.py) and a
  modified result is what the model reads;
* a tool output guardrail, first: a ``Block`` (or a ``Suspend`` or ``Retry``, which cannot
  pause or repeat a call that already ran) withholds the result with ``reject_content``.

The tool's own approval policy and guardrails still apply, after the harness's.
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any

from agents import (
    FunctionTool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.exceptions import UserError
from agents.run_context import RunContextWrapper
from agents.tool_context import ToolContext

from ...outcomes import Block, Continue, Escalate, Retry, Suspend
from .convert import arguments_of
from .failing import watched
from .run import GUARDED, GuardedRun, ToolCallRecord, current_run
from .stops import HarnessStopped

__all__ = ["denial", "guard_tool", "refusal"]

GUARDRAIL = "harnessweaver"


def refusal(hook: str, reason: str | None) -> str:
    """What the model reads instead of a tool's result (the run loop's own wording)."""
    reason = reason or "no reason given"
    if hook == "tool.after":
        return f"The harness withheld this tool's result: {reason}"
    return f"The harness refused this tool call: {reason}"


def denial(reason: str | None = None) -> str:
    """The run loop's wording for a call an approver denied, to give the SDK as the
    rejection: ``state.reject(item, rejection_message=denial("too much"))``."""
    return f"The approver denied this tool call: {reason or 'no reason given'}"


def _run_of(tool: FunctionTool) -> GuardedRun:
    run = current_run()
    if run is None:  # never fail open: a guarded tool outside a guarded run does not run
        raise UserError(
            f"tool {tool.name!r} is guarded by harnessweaver: run the agent with "
            "adapter.new_run().run(agent, input), which emits its hook points"
        )
    return run


def _changed_beyond_arguments(record: ToolCallRecord) -> bool:
    """A change the SDK cannot carry out: anything but the call's arguments (another tool,
    another call id)."""
    chained = record.before.event
    same_args = chained.call.model_copy(update={"arguments": record.event.call.arguments})
    return bool(chained.model_copy(update={"call": same_args}) != record.event)


def _before_verdict(run: GuardedRun, record: ToolCallRecord) -> ToolGuardrailFunctionOutput:
    outcome = record.before.outcome
    call_id = record.event.call.id
    if isinstance(outcome, Continue):
        if _changed_beyond_arguments(record):
            run.forget(call_id)
            why = "a middleware changed the call beyond its arguments, which the SDK cannot run"
            return ToolGuardrailFunctionOutput.reject_content(refusal("tool.before", why))
        return ToolGuardrailFunctionOutput.allow("continue")
    if isinstance(outcome, Suspend) and record.approval_asked:
        return ToolGuardrailFunctionOutput.allow("approved")  # the SDK runs it only once approved
    if isinstance(outcome, Escalate):
        run.forget(call_id)
        raise HarnessStopped("tool.before", "escalate", outcome.reason, outcome.code)
    run.forget(call_id)
    reason = outcome.reason
    if isinstance(outcome, Suspend):  # answered too late for the SDK to ask for approval
        reason = f"approval needed ({reason}), which the SDK could not ask for this call"
    assert isinstance(outcome, Block | Retry | Suspend)
    return ToolGuardrailFunctionOutput.reject_content(refusal("tool.before", reason))


def _after_verdict(run: GuardedRun, record: ToolCallRecord | None) -> ToolGuardrailFunctionOutput:
    if record is None or record.after is None:
        return ToolGuardrailFunctionOutput.allow("not run")  # the output is already a refusal
    run.forget(record.event.call.id)
    outcome = record.after.outcome
    if isinstance(outcome, Continue):
        return ToolGuardrailFunctionOutput.allow("continue")
    if isinstance(outcome, Escalate):
        raise HarnessStopped("tool.after", "escalate", outcome.reason, outcome.code)
    return ToolGuardrailFunctionOutput.reject_content(refusal("tool.after", outcome.reason))


def guard_tool(tool: FunctionTool) -> FunctionTool:
    """A copy of ``tool`` whose calls pass ``tool.before`` and ``tool.after`` (module doc)."""
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"guard_tool takes an agents.FunctionTool, got {type(tool).__name__}")
    if getattr(tool, GUARDED, False):
        return tool
    invoke = watched(tool.on_invoke_tool)  # its failures seen by tool.after (failing.py)
    own_policy = tool.needs_approval

    async def needs_approval(
        ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
    ) -> bool:
        run = _run_of(tool)
        record = await run.tool_before(tool, call_id, dict(params), approval_asked=True)
        outcome = record.before.outcome
        if isinstance(outcome, Suspend):
            from .approval import file_call

            await file_call(run, record)  # the approvals book, when the run has one
            return True
        if not isinstance(outcome, Continue):
            return False  # a refusal needs no approver
        if callable(own_policy):  # the tool's own policy, for what the harness admits
            answer = own_policy(ctx, params, call_id)
            return bool(await answer if inspect.isawaitable(answer) else answer)
        return bool(own_policy)

    @tool_input_guardrail(name=GUARDRAIL)
    async def before(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        run = _run_of(tool)
        context = data.context
        record = run.call(context.tool_call_id)
        if record is None:  # the SDK asked for approval without asking the policy
            arguments = arguments_of(context.tool_arguments)
            if arguments is None:
                why = "its arguments are not a JSON object"
                return ToolGuardrailFunctionOutput.reject_content(refusal("tool.before", why))
            # A call the resumed RunState holds an approval for (restored in another
            # process, say): the chain is asked again, and its Suspend is that approval.
            decided = run.decided(context.tool_call_id)
            record = await run.tool_before(
                tool, context.tool_call_id, arguments, approval_asked=decided
            )
        return _before_verdict(run, record)

    @tool_output_guardrail(name=GUARDRAIL)
    async def after(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        run = _run_of(tool)
        return _after_verdict(run, run.call(data.context.tool_call_id))

    async def invoke_guarded(ctx: ToolContext[Any], input: str) -> Any:
        run = _run_of(tool)
        record = run.call(ctx.tool_call_id)
        if record is None or not _admitted(record):  # the input guardrail refused it first
            return refusal("tool.before", "the harness did not admit this call")
        chained = record.before.event.call
        if chained.arguments != record.event.call.arguments:  # Continue(modified): it runs
            input = json.dumps(chained.model_dump(mode="json")["arguments"])
        output = await invoke(ctx, input)
        answer, emitted = await run.tool_after(record, output)
        if isinstance(answer.outcome, Continue) and answer.event.result != emitted.result:
            return answer.event.result.output  # Continue(modified): the model reads this
        return output

    guarded = copy.copy(tool)
    guarded.needs_approval = needs_approval
    guarded.on_invoke_tool = invoke_guarded
    guarded.tool_input_guardrails = [before, *(tool.tool_input_guardrails or ())]
    guarded.tool_output_guardrails = [after, *(tool.tool_output_guardrails or ())]
    setattr(guarded, GUARDED, True)
    return guarded


def _admitted(record: ToolCallRecord) -> bool:
    outcome = record.before.outcome
    if isinstance(outcome, Continue):
        return not _changed_beyond_arguments(record)
    return isinstance(outcome, Suspend) and record.approval_asked
