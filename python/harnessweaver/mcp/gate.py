"""The bus's answer to one MCP tool call: what the proxy (or ``guard``) does with it.

A ``Gate`` holds the harness and the runs of the MCP sessions it serves. ``before`` emits
``tool.before`` and says whether the call goes on (with which arguments), is refused, or needs
a person's approval; ``after`` emits ``tool.after`` and gives the result the client receives.
Whatever goes wrong in between (a middleware the bus let fail, an event the SDK's values cannot
make) ends as a refusal: the gate never lets a call through that the bus did not admit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types

from ..context import RunContext, Trace
from ..envelope import Envelope
from ..events import TaskEndEvent, TaskStartEvent, ToolCallEvent
from ..identity import content_identity
from ..state.scope import environ_attributes
from .convert import arguments_of, call_event, refusal, result_event, rewritten, tool_spec
from .export import RunRecords

__all__ = ["UNIDENTIFIABLE", "Admit", "Ask", "Gate", "Refuse", "Run", "call_identity"]

_log = logging.getLogger("harnessweaver.mcp")

_UNTRACED_LIMIT = 1024
"""Records a run keeps when there is no ``--trace`` sink: a session may last for days."""


@dataclass(frozen=True, slots=True)
class Admit:
    """The call goes on to the upstream with ``event``'s (maybe rewritten) arguments."""

    event: ToolCallEvent
    responses: Any = None
    """A 2026-07-28 retry's answers to the tool's own input requests (passed on)."""
    state: str | None = None
    """The tool's own ``requestState`` of that retry (passed on)."""

    @property
    def arguments(self) -> dict[str, Any]:
        return arguments_of(self.event)


@dataclass(frozen=True, slots=True)
class Refuse:
    """The call is answered with ``result`` (``isError``); the upstream is never called."""

    result: types.CallToolResult


@dataclass(frozen=True, slots=True)
class Ask:
    """A person must approve the call (a ``Suspend`` or an ``Escalate``): ``event`` is the
    chain's event, ``identity`` the content identity (I27) of the exact call asked about."""

    kind: str
    reason: str
    code: str | None
    event: ToolCallEvent
    identity: str
    role: str | None = None
    """Who may decide: the Suspend's ``approver_role``, the Escalate's ``to``."""


Verdict = Admit | Refuse | Ask


@dataclass(slots=True)
class Run:
    """One MCP session's run: the run id is the session's, the bus's per-run state (loop
    guards, budgets) counts within it. ``refused`` holds why a ``task.start`` refused the
    session: every call of it is then refused."""

    ctx: RunContext
    step: int = 0
    calls: int = 0
    refused: types.CallToolResult | None = None
    records: RunRecords | None = None


class Gate:
    """The harness's decisions on the tool calls of MCP sessions."""

    def __init__(
        self,
        harness: Any,
        *,
        sink: Any = None,
        task: str | None = None,
        exporters: Sequence[Any] = (),
        approvals: Any = None,
        subject: str | None = None,
    ) -> None:
        self.harness = harness
        self.approvals = approvals
        """The approvals book a call a person must approve is filed in when the client cannot
        be asked (``approval.py``); ``None``: such a call is refused, as before."""
        self.subject = subject
        """The subject of the records filed (``mcp:<server name>``)."""
        self.bus = harness.bus
        self.sink = sink
        self.exporters = tuple(exporters)
        self.task = task or ""
        bound = getattr(getattr(harness, "agent", None), "max_retries", 2)
        self.max_retries = bound if isinstance(bound, int) else 2
        self.key = _harness_key(harness, self.task)
        """Which harness decides (spec, task, env and every entry with its settings):
        approvals name it, so one given under another harness never applies."""

    # -- runs ----------------------------------------------------------------------------

    async def open(self, run_id: str) -> Run:
        """A run for a new session, started at ``task.start`` when the harness has a chain
        there (a refusal there refuses the whole session)."""
        records = RunRecords(self.sink, self.exporters, run_id) if self.exporters else None
        if records is not None:
            trace = Trace(sink=records)
        elif self.sink is not None:
            trace = Trace(sink=self.sink)
        else:
            trace = Trace(limit=_UNTRACED_LIMIT)
        # The session scope is the MCP session; user and app come from the proxy's environment
        # (the protocol names no principal the proxy could trust): docs/state.md.
        env = Envelope(run_id=run_id, attributes=environ_attributes(run_id))
        run = Run(RunContext(env, trace=trace), records=records)
        if self.bus.chain("task.start"):
            event = TaskStartEvent(task=self.task, input={"source": "mcp"})
            outcome = await self._emit(run, "task.start", event)
            if outcome is not None and outcome.kind in ("block", "suspend", "escalate"):
                run.refused = refusal(outcome.kind, str(outcome.reason), outcome.code)
            self._flush(run)
        return run

    async def close(self, run: Run) -> None:
        """The session ended: ``task.end`` (the built-ins forget the run), then the trace."""
        if self.bus.chain("task.end"):
            event = TaskEndEvent(exit_reason="completed", steps=run.step, output={})
            await self._emit(run, "task.end", event)
        self.export(run, "completed")

    def export(self, run: Run, exit_reason: str) -> None:
        """The run's records so far, written (the ``--trace`` file is flushed once per call
        answered, not per emit) and given to the exporters (a call answered, or the session's
        end)."""
        self._flush(run)
        if run.records is not None:
            run.records.export(exit_reason)

    # -- one call ------------------------------------------------------------------------

    async def before(
        self, run: Run, tool: types.Tool | None, name: str, arguments: dict[str, Any] | None
    ) -> Verdict:
        """``tool.before`` for a call of ``name`` with ``arguments`` (asked again on a
        ``Retry``, within the harness's bound)."""
        if run.refused is not None:
            return Refuse(run.refused)
        run.calls += 1
        run.step = run.calls
        event = call_event(tool_spec(tool, name), f"mcp-{run.calls}", arguments, run.step)
        for attempt in range(self.max_retries + 1):
            result = await self._result(run, "tool.before", event, name)
            if result is None:
                return Refuse(_failed(name))
            outcome = result.outcome
            kind = outcome.kind
            if kind == "continue":
                return Admit(result.event)
            if kind in ("suspend", "escalate"):
                identity = call_identity(self.key, name, arguments)
                role = getattr(outcome, "approver_role" if kind == "suspend" else "to", None)
                reason, code = str(outcome.reason), outcome.code
                return Ask(kind, reason, code, result.event, identity, role)
            if kind == "retry" and attempt < _bound(outcome, self.max_retries):
                await _pause(outcome)
                continue
            return Refuse(self._refused(name, "tool.before", outcome))
        raise AssertionError("unreachable")  # pragma: no cover

    async def after(
        self, run: Run, admitted: ToolCallEvent, result: types.CallToolResult
    ) -> types.CallToolResult | None:
        """``tool.after`` for the upstream's ``result``: the result the client receives, or
        ``None`` for a ``Retry`` (the caller runs the call again)."""
        event = result_event(admitted, result)
        emitted = await self._result(run, "tool.after", event, admitted.tool.name)
        if emitted is None:
            return _failed(admitted.tool.name)
        outcome = emitted.outcome
        if outcome.kind == "continue":
            if emitted.event is event:
                return result
            return rewritten(emitted.event, result)
        if outcome.kind == "retry":
            return None
        # A person cannot approve a result that already exists: withheld, as a refusal.
        return self._refused(admitted.tool.name, "tool.after", outcome)

    # -- emitting ------------------------------------------------------------------------

    async def _result(self, run: Run, hook: str, event: Any, tool: str) -> Any:
        try:
            return await self.bus.emit(hook, event, run.ctx)
        except Exception as exc:  # a bug or a middleware the bus let through: refused
            kind = type(exc).__name__
            _log.error("harnessweaver mcp: emit at %s for %r failed: %s", hook, tool, kind)
            return None

    async def _emit(self, run: Run, hook: str, event: Any) -> Any:
        result = await self._result(run, hook, event, "")
        return None if result is None else result.outcome

    def _refused(self, tool: str, hook: str, outcome: Any) -> types.CallToolResult:
        kind = "retry_exhausted" if outcome.kind == "retry" else outcome.kind
        code = outcome.code if outcome.kind != "retry" else (outcome.code or "retry_exhausted")
        _log.warning("harnessweaver mcp: refused %r at %s: %s (%s)", tool, hook, kind, code or "")
        return refusal(kind, str(outcome.reason), code)

    def _flush(self, run: Run) -> None:
        if self.sink is None and run.records is None:
            return
        try:
            run.ctx.trace.flush()
            flush = getattr(self.sink, "flush", None) if self.sink is not None else None
            if flush is not None:
                flush()
        except Exception as exc:  # a trace that cannot be written is logged, never fatal
            _log.error("harnessweaver mcp: the trace was not written: %s", type(exc).__name__)


UNIDENTIFIABLE = "unidentifiable"
"""The identity of a call outside I-JSON (a lone surrogate, an integer beyond 2^53 - 1): the
same for every such call, so an approval that names it never applies (``approval.py``)."""


def call_identity(key: str, name: str, arguments: dict[str, Any] | None) -> str:
    """The content identity (I27) of a call: the harness, the tool and the exact arguments.
    An approval carries it, and applies to the call with this identity only."""
    identity = content_identity({"harness": key, "tool": name, "arguments": arguments or {}})
    return UNIDENTIFIABLE if identity is None else identity


def _harness_key(harness: Any, task: str) -> str:
    entries = [[e.name, e.use, dict(e.settings)] for e in getattr(harness, "entries", ())]
    spec, env = getattr(harness, "spec", None), getattr(harness, "env", None)
    identity = content_identity([str(spec), task, str(env), _jsonable(entries)])
    return identity or ""


def _failed(name: str) -> types.CallToolResult:
    _log.warning("harnessweaver mcp: refused %r: the emit failed", name)
    return refusal("block", "the policy could not decide (an internal error)", "emit_failed")


def _bound(outcome: Any, harness_bound: int) -> int:
    attempts = getattr(outcome, "max_attempts", None)
    return harness_bound if attempts is None else min(harness_bound, max(attempts - 1, 0))


async def _pause(outcome: Any) -> None:
    delay = getattr(outcome, "delay", None)
    if delay:
        await anyio.sleep(float(delay))


def _jsonable(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value, default=str))
