"""OpenTelemetry spans from the bus trace: one per run segment, one per hook point emitted,
one per middleware that ran. Install the extra: ``pip install 'harnessweaver[otel]'``.

The exporter is given its tracer provider and never sets the global one. Spans are built
from trace records after the fact, so they cost the run nothing while it runs; their times
come from the records' monotonic ``t_ns``/``duration_ns`` (precise with
``hw.Trace(precise=True)``). Attributes hold names, outcomes, codes and exception type
names: like the trace, never a reason or a message (R9, I8).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import trace as otel
from opentelemetry.trace import Span, Status, StatusCode, TracerProvider

__all__ = ["OTelExporter"]

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


class OTelExporter:
    """A :class:`~harnessweaver.TraceExporter` that turns trace records into spans.

    ``harness.with_agent(exporters=[OTelExporter(provider)])`` exports each run segment when
    it stops; ``export(records, run_id=..., exit_reason=...)`` can also be called directly
    with ``trace.records()``.
    """

    __slots__ = ("_tracer",)

    def __init__(self, tracer_provider: TracerProvider) -> None:
        from .. import __version__

        self._tracer = tracer_provider.get_tracer("harnessweaver", __version__)

    def export(
        self, records: Sequence[Mapping[str, Any]], *, run_id: str, exit_reason: str
    ) -> None:
        # monotonic → epoch: the records' clock is monotonic, spans want wall-clock times
        offset = time.time_ns() - time.monotonic_ns()
        now = time.time_ns()
        start, end = _bounds(records, offset) if records else (now, now)
        run = self._tracer.start_span(
            "harnessweaver.run",
            start_time=start,
            attributes={_PREFIX + "run_id": run_id, _PREFIX + "exit_reason": exit_reason},
        )
        for emit in _by_emit(records):
            self._emit(run, emit, offset)
        run.end(end_time=end)

    def _emit(self, parent: Span, records: list[Mapping[str, Any]], offset: int) -> None:
        """One hook point's span, its middleware spans inside. An emit cancelled from outside
        has no hook record (I12): its span has the hook's name and no outcome."""
        first = records[0]
        hook = next((r for r in records if r["kind"] == "hook"), None)
        attributes = _attributes(hook or {"emit": first["emit"], "hook": first["hook"]})
        start, end = _bounds(records, offset)
        context = otel.set_span_in_context(parent)
        span = self._tracer.start_span(
            f"hook {first['hook']}", context=context, start_time=start, attributes=attributes
        )
        inner = otel.set_span_in_context(span)
        for record in records:
            if record["kind"] != "hook":
                self._middleware(inner, record, offset)
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
