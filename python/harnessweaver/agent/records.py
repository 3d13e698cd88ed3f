"""What a run leaves behind: the journal, the bus trace beside it, and trace exporters.

The trace file is written as the journal is: after every journal line, the trace records
made since are appended and flushed, so after a crash the two files end at the same step.
The bus keeps only exception type names in its records (R9), and so does the journal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

from .journal import DecisionLine, EndLine, JournalWriter, StartLine, cut_torn_tail
from .state import StepRecord

if TYPE_CHECKING:
    from ..context import Trace

__all__ = ["Recorder", "TraceExporter", "restore_trace"]


@runtime_checkable
class TraceExporter(Protocol):
    """Receives the bus trace records of a run segment when it stops (``harness.run`` or
    ``harness.resume``), e.g. to turn them into OpenTelemetry spans."""

    def export(
        self, records: Sequence[Mapping[str, Any]], *, run_id: str, exit_reason: str
    ) -> None: ...


def restore_trace(path: Path | None) -> Trace:
    """The trace a resumed run continues: the trace file's records (so emit ordinals go on
    where they stopped), or a new trace when there is no file."""
    from ..context import Trace

    if path is None or not path.exists():
        return Trace()
    cut_torn_tail(path)
    return Trace.read_jsonl(path)


class Recorder:
    """The journal and the trace file of one segment of a run (nothing without a journal).

    ``start`` is the index of the trace's first record made in this segment: records the
    context's trace held before (a resumed run's, restored from the trace file) are not
    written again.
    """

    __slots__ = ("_journal", "_trace_file", "_written", "start", "trace")

    def __init__(
        self, journal: Path | None, trace_path: Path | None, trace: Trace, *, resume: bool
    ) -> None:
        self.trace = trace
        self.start = self._written = len(trace)
        self._journal: JournalWriter | None = None
        self._trace_file: IO[str] | None = None
        if journal is None or trace_path is None:
            return
        journal.parent.mkdir(parents=True, exist_ok=True)
        self._journal = JournalWriter(journal, append=resume)
        if resume:
            cut_torn_tail(trace_path)
        self._trace_file = open(trace_path, "a" if resume else "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def write(self, line: StartLine | StepRecord | DecisionLine | EndLine) -> None:
        """A journal line, then the trace records made since the last one."""
        if self._journal is None or self._trace_file is None:
            return
        self._journal.write(line)
        records = [self.trace[i] for i in range(self._written, len(self.trace))]
        self._trace_file.writelines(
            json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
            for record in records
        )
        self._trace_file.flush()
        self._written += len(records)

    def segment_records(self) -> list[dict[str, Any]]:
        """The trace records made in this segment."""
        return [self.trace[i] for i in range(self.start, len(self.trace))]

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
        if self._trace_file is not None:
            self._trace_file.close()
