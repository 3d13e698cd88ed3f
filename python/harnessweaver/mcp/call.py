"""One ``tools/call`` from the client's request to its answer, for the proxy and ``guard``.

The order: a 2026-07-28 retry whose state names an admitted call (a person approved it, or
the tool itself asked the client something) goes on without asking the chain again, as a
resumed run does; otherwise ``tool.before``; a ``Suspend`` or an ``Escalate`` is asked of a
person; an admitted call runs (``invoke``: the upstream, or the server's own handler) and
its result goes through ``tool.after``. The tool's own input request (2026-07-28) is passed
to the client, bound to the admitted call. A ``Retry`` of the result runs the whole call
again, within the harness's bound.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from .approval import Approvals
from .convert import refusal
from .gate import Admit, Ask, Gate, Refuse, call_identity
from .runs import Runs

__all__ = ["Invoke", "Refused", "through"]

Answer = types.CallToolResult | types.InputRequiredResult
Invoke = Callable[[Admit], Awaitable[Answer]]


class Refused(Exception):
    """Raised by ``invoke`` when the call got no answer of the tool's (the upstream timed
    out): ``result`` is the proxy's own refusal, which ``tool.after`` never sees as if the
    tool had answered it."""

    def __init__(self, result: types.CallToolResult) -> None:
        super().__init__("refused")
        self.result = result


async def through(
    gate: Gate,
    runs: Runs,
    ctx: Any,
    params: types.CallToolRequestParams,
    tool: types.Tool | None,
    invoke: Invoke,
) -> Answer:
    """The answer to ``params``, a call of ``tool``, in the run of ``ctx``'s session."""
    run, once = await runs.of(ctx)
    try:
        approvals = Approvals(gate)
        resumed = approvals.resumed(params, tool, run.calls)
        if resumed is not None and not isinstance(resumed, Admit):
            return resumed
        for _attempt in range(gate.max_retries + 1):
            verdict = resumed or await gate.before(run, tool, params.name, params.arguments)
            resumed = None  # an approval admits the call once; a retry of its result asks again
            if isinstance(verdict, Ask):
                consumer = f"mcp:{run.ctx.envelope.run_id}#{verdict.event.call.id}"
                answer = await approvals.ask(ctx, params, verdict, consumer)
                if not isinstance(answer, Admit):
                    return answer
                verdict = answer
            if isinstance(verdict, Refuse):
                return verdict.result
            try:
                result = await invoke(verdict)
            except Refused as refused:
                return refused.result
            if isinstance(result, types.InputRequiredResult):
                identity = call_identity(gate.key, params.name, params.arguments)
                return approvals.asked_again(verdict, result, identity)
            after = await gate.after(run, verdict.event, result)
            if after is not None:
                return after
        why = "the result was refused on every retry"
        return refusal("retry_exhausted", why, "retry_exhausted")
    finally:
        gate.export(run, "tool_call")
        if once:
            await gate.close(run)
