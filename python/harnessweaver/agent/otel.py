"""OpenTelemetry spans from the bus trace (the ``otel`` extra: ``pip install '.[otel]'``).

Two shapes, as the GenAI semantic conventions ask of an instrumentation that already emits
spans (their transition plan: the new shape only on opt-in, never both):

- by default, today's spans: ``harnessweaver.run`` per run segment, ``hook <name>`` per hook
  point emitted, ``middleware <name>`` per middleware that ran;
- with ``OTEL_SEMCONV_STABILITY_OPT_IN`` listing ``gen_ai_latest_experimental`` (or
  ``gen_ai=True``), the GenAI spans: ``invoke_agent`` per segment, ``chat`` around a model
  call (model.before to model.after), ``execute_tool <tool>`` around a tool call (tool.before
  to tool.after), the ``hook <name>`` spans inside them, and each middleware's decision a span
  event of its hook span named by its outcome (``harnessweaver.block``…; :data:`EVENTS`).

The exporter is given its tracer provider and never sets the global one. Spans are built
from trace records after the fact, so they cost the run nothing while it runs; their times
come from the records' monotonic ``t_ns``/``duration_ns`` (precise with
``hw.Trace(precise=True)``). Attributes hold names, outcomes, codes and exception type
names: like the trace, never a reason, an argument or a message (R9, I8) — the records hold
none, so no setting can export them. ts-runner/src/otel.ts builds the same spans.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import trace as otel
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

__all__ = ["EVENTS", "OPT_IN", "OTelExporter", "gen_ai_opted_in"]

OPT_IN = "gen_ai_latest_experimental"
"""The value of ``OTEL_SEMCONV_STABILITY_OPT_IN`` (a comma-separated list) that asks for the
GenAI spans, as the conventions' transition plan names it."""

EVENTS = (
    "harnessweaver.continue",
    "harnessweaver.modify",
    "harnessweaver.block",
    "harnessweaver.suspend",
    "harnessweaver.escalate",
    "harnessweaver.retry",
    "harnessweaver.failure",
)
"""The span event names of the GenAI shape: one per middleware record, named by its outcome
(``modify`` is a Continue that modified the event; ``failure`` a middleware that failed, its
fail mode deciding the outcome it counts as)."""

_PREFIX = "harnessweaver."
_KEYS = (
    "hook",
    "step",
    "tool",
    "outcome",
    "modified",
    "code",
    "middleware",
    "band",
    "failure",
    "error",
    "fail_mode",
)
# A decision's event: who decided what; never `warnings` (texts a middleware wrote, I24)
_EVENT_KEYS = (
    "middleware",
    "band",
    "outcome",
    "code",
    "failure",
    "error",
    "fail_mode",
    "contract",
    "audit",
)


def gen_ai_opted_in(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``OTEL_SEMCONV_STABILITY_OPT_IN`` lists ``gen_ai_latest_experimental``."""
    value = (os.environ if environ is None else environ).get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
    return OPT_IN in (part.strip() for part in value.split(","))


def _attributes(record: Mapping[str, Any]) -> dict[str, str | bool | int]:
    attributes: dict[str, str | bool | int] = {_PREFIX + "emit": int(record["emit"])}
    attributes.update({_PREFIX + k: record[k] for k in _KEYS if record.get(k) is not None})
    return attributes


def _bounds(records: Iterable[Mapping[str, Any]], offset: int) -> tuple[int, int]:
    """Start and end, in epoch nanoseconds, of the records' time span."""
    spans = [(r.get("t_ns", 0), r.get("t_ns", 0) + r.get("duration_ns", 0)) for r in records]
    return min(s for s, _ in spans) + offset, max(e for _, e in spans) + offset


def _by_emit(records: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Records grouped by emit, in the order the emits first appear."""
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["emit"], []).append(record)
    return list(groups.values())


def _operations(emits: list[list[Mapping[str, Any]]]) -> list[tuple[str, list[int]]]:
    """The emits (their indexes) grouped as the GenAI shape nests them, in order: ``chat``
    from a model.before to the next model.after of its step, ``execute_tool`` from a
    tool.before to the first open tool.before's tool.after of the same step and tool (the
    records hold no call id, so calls of one tool in one step pair in order), ``""`` for an
    emit of its own. An operation whose closing emit never came (a blocked tool call, a
    segment that stopped) ends with its last emit."""
    groups: list[tuple[str, list[int]]] = []
    open_: dict[tuple[Any, ...], list[int]] = {}  # key → indexes in groups, oldest first
    for index, emit in enumerate(emits):
        first = emit[0]
        hook, step, tool = first["hook"], first.get("step"), first.get("tool")
        if hook in ("model.before", "tool.before"):
            key = (hook[:4], step, tool if hook == "tool.before" else None)
            open_.setdefault(key, []).append(len(groups))
            groups.append(("chat" if hook == "model.before" else "execute_tool", [index]))
        elif hook in ("model.after", "tool.after"):
            waiting = open_.get((hook[:4], step, tool if hook == "tool.after" else None))
            if waiting:
                groups[waiting.pop(0)][1].append(index)
            else:  # an after without its before (a trace that starts mid-call)
                groups.append(("chat" if hook == "model.after" else "execute_tool", [index]))
        else:
            groups.append(("", [index]))
    return groups


def _event_name(record: Mapping[str, Any]) -> str:
    if record["kind"] == "failure":
        return _PREFIX + "failure"
    if record["outcome"] == "continue" and record.get("modified"):
        return _PREFIX + "modify"
    return _PREFIX + str(record["outcome"])


def _event_attributes(record: Mapping[str, Any]) -> dict[str, str | bool | int]:
    return {_PREFIX + k: record[k] for k in _EVENT_KEYS if record.get(k) is not None}


class OTelExporter:
    """A :class:`~harnessweaver.TraceExporter` that turns trace records into spans.

    ``harness.with_agent(exporters=[OTelExporter(provider)])`` exports each run segment when
    it stops; ``export(records, run_id=..., exit_reason=...)`` can also be called directly
    with ``trace.records()``.

    ``gen_ai``: the GenAI semantic-convention spans (``None``: as
    ``OTEL_SEMCONV_STABILITY_OPT_IN`` says when the exporter is made). ``agent_name``,
    ``provider_name`` and ``request_model`` fill ``gen_ai.agent.name``,
    ``gen_ai.provider.name`` and ``gen_ai.request.model`` (the trace does not know them);
    they are only used with ``gen_ai``.
    """

    __slots__ = ("_agent", "_gen_ai", "_model", "_provider", "_tracer")

    def __init__(
        self,
        tracer_provider: TracerProvider,
        *,
        gen_ai: bool | None = None,
        agent_name: str | None = None,
        provider_name: str | None = None,
        request_model: str | None = None,
    ) -> None:
        from .. import __version__

        self._tracer = tracer_provider.get_tracer("harnessweaver", __version__)
        self._gen_ai = gen_ai_opted_in() if gen_ai is None else gen_ai
        self._agent = agent_name
        self._provider = provider_name
        self._model = request_model

    @property
    def gen_ai(self) -> bool:
        """Whether this exporter builds the GenAI spans."""
        return self._gen_ai

    def export(
        self, records: Sequence[Mapping[str, Any]], *, run_id: str, exit_reason: str
    ) -> None:
        # monotonic → epoch: the records' clock is monotonic, spans want wall-clock times
        offset = time.time_ns() - time.monotonic_ns()
        now = time.time_ns()
        start, end = _bounds(records, offset) if records else (now, now)
        attributes: dict[str, str] = {}
        name = "harnessweaver.run"
        if self._gen_ai:
            name = "invoke_agent" + (f" {self._agent}" if self._agent else "")
            attributes = self._gen_ai_attributes("invoke_agent", run_id)
            if self._agent:
                attributes["gen_ai.agent.name"] = self._agent
        attributes |= {_PREFIX + "run_id": run_id, _PREFIX + "exit_reason": exit_reason}
        run = self._tracer.start_span(
            name, start_time=start, attributes=attributes, kind=SpanKind.INTERNAL
        )
        emits = _by_emit(records)
        if self._gen_ai:
            for operation, indexes in _operations(emits):
                self._operation(run, operation, [emits[i] for i in indexes], run_id, offset)
        else:
            for emit in emits:
                self._emit(otel.set_span_in_context(run), emit, offset)
        run.end(end_time=end)

    def _gen_ai_attributes(self, operation: str, run_id: str) -> dict[str, str]:
        attributes = {"gen_ai.operation.name": operation}
        if self._provider:
            attributes["gen_ai.provider.name"] = self._provider
        if self._model and operation != "execute_tool":
            attributes["gen_ai.request.model"] = self._model
        attributes["gen_ai.conversation.id"] = run_id  # a run id lasts across its segments
        return attributes

    def _operation(
        self,
        parent: Span,
        operation: str,
        emits: list[list[Mapping[str, Any]]],
        run_id: str,
        offset: int,
    ) -> None:
        """A ``chat`` or ``execute_tool`` span with its hook spans inside, or a hook span of
        its own (``operation`` empty)."""
        context = otel.set_span_in_context(parent)
        if not operation:
            self._emit(context, emits[0], offset)
            return
        first = emits[0][0]
        attributes: dict[str, str | int] = dict(self._gen_ai_attributes(operation, run_id))
        if operation == "chat":
            name = "chat" + (f" {self._model}" if self._model else "")
            kind = SpanKind.CLIENT
        else:
            # a record of a trace written before I21 has no tool name
            name = "execute_tool" + (f" {first['tool']}" if first.get("tool") else "")
            if first.get("tool") is not None:
                attributes["gen_ai.tool.name"] = first["tool"]
            kind = SpanKind.INTERNAL
        if first.get("step") is not None:
            attributes[_PREFIX + "step"] = first["step"]
        start, end = _bounds([r for emit in emits for r in emit], offset)
        span = self._tracer.start_span(
            name, context=context, start_time=start, attributes=attributes, kind=kind
        )
        for emit in emits:
            self._emit(otel.set_span_in_context(span), emit, offset)
        span.end(end_time=end)

    def _emit(self, context: Any, records: list[Mapping[str, Any]], offset: int) -> None:
        """One hook point's span, its middleware inside (spans, or events of the GenAI shape).
        An emit cancelled from outside has no hook record (I12): its span has the hook's name
        and no outcome."""
        first = records[0]
        hook = next((r for r in records if r["kind"] == "hook"), None)
        attributes = _attributes(hook or {"emit": first["emit"], "hook": first["hook"]})
        start, end = _bounds(records, offset)
        span = self._tracer.start_span(
            f"hook {first['hook']}", context=context, start_time=start, attributes=attributes
        )
        inner = otel.set_span_in_context(span)
        failures = [r for r in records if r["kind"] == "failure"]
        for record in records:
            if record["kind"] == "hook":
                continue
            if self._gen_ai:
                span.add_event(
                    _event_name(record),
                    attributes=_event_attributes(record),
                    timestamp=_bounds([record], offset)[1],
                )
            else:
                self._middleware(inner, record, offset)
        if self._gen_ai and failures:
            span.set_status(Status(StatusCode.ERROR, str(failures[0]["failure"])))
        span.end(end_time=end)

    def _middleware(self, context: Any, record: Mapping[str, Any], offset: int) -> None:
        start, end = _bounds([record], offset)
        span = self._tracer.start_span(
            f"middleware {record['middleware']}",
            context=context,
            start_time=start,
            attributes=_attributes(record),
        )
        if record["kind"] == "failure":
            span.set_status(Status(StatusCode.ERROR, str(record["failure"])))
        span.end(end_time=end)
