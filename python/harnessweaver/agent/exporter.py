"""What receives a run's trace records when a run segment stops (OpenTelemetry, for one).

Its own module so the run's options name it without loading the journal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["TraceExporter"]


@runtime_checkable
class TraceExporter(Protocol):
    """Receives the bus trace records of a run segment when it stops (``harness.run`` or
    ``harness.resume``), e.g. to turn them into OpenTelemetry spans."""

    def export(
        self, records: Sequence[Mapping[str, Any]], *, run_id: str, exit_reason: str
    ) -> None: ...
