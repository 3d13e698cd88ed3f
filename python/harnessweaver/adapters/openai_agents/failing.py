"""A function tool's failures, seen by ``tool.after`` (``result.is_error``).

The SDK answers a function tool's exception inside the tool: ``function_tool``'s
``on_invoke_tool`` runs the function through its inner ``_invoke_tool_impl`` and turns an
exception into the failure function's text for the model (or lets it go on when the tool has
``failure_error_function=None``). A wrapped ``on_invoke_tool`` therefore only ever sees a
result, and ``harnessweaver.tool_failure_guard`` could never count a failure.

:func:`watched` gives the guarded tool a copy of the SDK's invoker whose inner call notes an
exception on the call's record (by call id, on the run in flight) and raises it again: the
SDK then answers the model exactly as it would (its failure text, its tracing, its
``tool_error_formatter``; or the exception, which ends the run), and the call's ``tool.after``
carries ``is_error=True``.

``_invoke_tool_impl`` is the SDK's private attribute (agents 0.24): no public hook sees a
tool's exception for every failure function (``RunConfig.tool_error_formatter`` is asked only
for the default one). An invoker without it (another SDK version, a ``FunctionTool`` made by
hand, whose ``on_invoke_tool`` answers failures itself) is used as it is: its failures then
reach ``tool.after`` as plain results. tests/adapters/test_openai_agents_failures.py pins the
SDK behaviour this relies on.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from agents.tool_context import ToolContext

from .run import current_run

__all__ = ["INNER", "watched"]

INNER = "_invoke_tool_impl"
"""The SDK invoker's attribute that runs the function itself (its exception not yet handled)."""

Invoke = Callable[[ToolContext[Any], str], Awaitable[Any]]


def watched(invoke: Invoke) -> Invoke:
    """``invoke`` (a ``FunctionTool.on_invoke_tool``) with its function's exceptions noted on
    the call's record; ``invoke`` itself when it has no inner call to watch (module doc)."""
    inner = getattr(invoke, INNER, None)
    if not callable(inner):
        return invoke  # not the SDK's failure-handling invoker: today's behaviour, unwatched

    @functools.wraps(inner)  # keeps the SDK's markers on it (argument preparation, __wrapped__)
    async def noting(ctx: ToolContext[Any], input: str) -> Any:
        try:
            return await inner(ctx, input)
        except Exception:
            run = current_run()
            record = run.call(ctx.tool_call_id) if run is not None else None
            if record is not None:
                record.failed = True
            raise  # the SDK's invoker answers it, as it would

    invoker = copy.copy(invoke)
    setattr(invoker, INNER, noting)
    return invoker
