"""A run's trace records, to the ``--trace`` file and to trace exporters (OpenTelemetry).

Without exporters a run's trace writes to the JSON Lines sink directly (the Rust core hands
it ready-made lines). With exporters each run's records are also kept until its call is
answered, then exported as one segment of the run (``exit_reason`` ``"tool_call"``; the
session's end is ``"completed"``), and forgotten.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

__all__ = ["RunRecords"]

_log = logging.getLogger("harnessweaver.mcp")


class RunRecords:
    """The sink of one run's trace when exporters are given: the file, then the exporters."""

    def __init__(self, sink: Any, exporters: Sequence[Any], run_id: str) -> None:
        self.sink = sink
        self.exporters = exporters
        self.run_id = run_id
        self.pending: list[dict[str, Any]] = []

    def __call__(self, records: list[dict[str, Any]]) -> None:
        if self.sink is not None:
            self.sink(records)
        self.pending.extend(records)

    def export(self, exit_reason: str) -> None:
        records, self.pending = self.pending, []
        if not records:
            return
        for exporter in self.exporters:
            try:
                exporter.export(records, run_id=self.run_id, exit_reason=exit_reason)
            except Exception as exc:  # an exporter that fails costs its spans, never the call
                kind = type(exc).__name__
                _log.error("harnessweaver mcp: a trace exporter failed: %s", kind)
