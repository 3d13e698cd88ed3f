"""What a run leaves behind: the journal, the bus trace beside it, and trace exporters.

The trace file is written as the journal is: before every journal line, the trace records
made since the last one are appended and flushed, and the line counts the trace records
written so far. A crash between the two leaves the trace a few records ahead of the
journal; :func:`prepare_resume` cuts it back to the count of the journal's last line (and
logs how many records it dropped: those of work the resumed run does again), so after a
recovery both files end at the same line. The bus keeps only exception type names in its
records (R9), and so does the journal.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from .exporter import TraceExporter
from .journal import JournalWriter, Scan, cut_torn_tail, scan
from .lines import Line
from .state import RunWarning

if TYPE_CHECKING:
    from ..context import Trace
    from ..outcomes import HookWarning

__all__ = ["Recorder", "TraceExporter", "prepare_resume", "restore_trace"]

logger = logging.getLogger(__name__)


def restore_trace(path: Path | None) -> Trace:
    """The trace a resumed run continues: the trace file's records (so emit ordinals go on
    where they stopped), or a new trace when there is no file."""
    from ..context import Trace

    if path is None or not path.exists():
        return Trace()
    cut_torn_tail(path)
    return Trace.read_jsonl(path)


def _cut_records(path: Path, keep: int) -> int:
    """Keep the first ``keep`` records (lines) of a trace file; the number dropped."""
    data = path.read_bytes()
    end = 0
    for _ in range(keep):
        found = data.find(b"\n", end)
        if found < 0:
            return 0
        end = found + 1
    if end < len(data):
        os.truncate(path, end)
    return data.count(b"\n", end)


def prepare_resume(journal: Path | None, trace_path: Path | None) -> Scan | None:
    """Before a resume appends to a journal: read it, cut the trace file's torn last line,
    and cut the trace file back to the records the journal's last line counts (a format 1
    journal counts none: its trace is left as it is). Everything dropped is logged."""
    if journal is None or trace_path is None:
        return None
    found = scan(journal)
    if found.torn:
        logger.warning(
            "journal %s: cut a torn last line (%d bytes after the last newline)",
            journal,
            found.torn,
        )
    torn = cut_torn_tail(trace_path)
    if torn:
        logger.warning("trace %s: cut a torn last record (%d bytes)", trace_path, torn)
    if found.trace is None or not trace_path.exists():
        return found
    dropped = _cut_records(trace_path, found.trace)
    if dropped:
        logger.warning(
            "trace %s: dropped %d records written after the journal's last line (their work "
            "is done again by the resumed run)",
            trace_path,
            dropped,
        )
    else:
        held = trace_path.read_bytes().count(b"\n")
        if held < found.trace:
            logger.warning(
                "trace %s: holds %d records, the journal's last line counts %d",
                trace_path,
                held,
                found.trace,
            )
    return found


def _made(trace: Trace) -> int:
    """How many records the trace has been given: those it holds and those its limit dropped
    (I20). Positions counted this way stay put when the oldest records are dropped."""
    return trace.dropped + len(trace)


def _since(trace: Trace, made: int) -> list[dict[str, Any]]:
    """The records given to the trace after the first ``made``, as far as it still holds them.
    A run makes far fewer records between two journal lines than a trace keeps (2^20 by
    default), so none is missing unless the limit was set that low: then the loss is logged."""
    first = trace.dropped  # the position of the oldest record held
    if made < first:
        logger.warning(
            "trace: %d records were dropped by the trace's limit (%s) before they were written "
            "to the trace file",
            first - made,
            trace.limit,
        )
    return [trace[i - first] for i in range(max(made, first), first + len(trace))]


class Recorder:
    """The journal and the trace file of one segment of a run (nothing without a journal).

    ``start`` is the index of the trace's first record made in this segment: records the
    context's trace held before (a resumed run's, restored from the trace file) are not
    written again. A resume appends to both files, after :func:`prepare_resume` (``scanned``:
    its result, when the caller already has it).
    """

    __slots__ = (
        "_in_file",
        "_journal",
        "_journaled",
        "_trace_file",
        "_written",
        "start",
        "trace",
        "warnings",
    )

    def __init__(
        self,
        journal: Path | None,
        trace_path: Path | None,
        trace: Trace,
        *,
        resume: bool,
        scanned: Scan | None = None,
    ) -> None:
        self.trace = trace
        self.start = self._written = _made(trace)
        self.warnings: list[RunWarning] = []
        """The warnings given in this segment, in order (I24)."""
        self._journaled = 0
        """How many of them the journal holds."""
        self._in_file = 0
        """Records in the trace file: what the next journal line counts."""
        self._journal: JournalWriter | None = None
        self._trace_file: IO[str] | None = None
        if journal is None or trace_path is None:
            return
        journal.parent.mkdir(parents=True, exist_ok=True)
        if resume and scanned is None:
            scanned = prepare_resume(journal, trace_path)
        self._journal = JournalWriter(journal, append=resume, scanned=scanned)
        if resume and trace_path.exists():
            self._in_file = trace_path.read_bytes().count(b"\n")
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

    def warned(self, hook: str, warnings: Iterable[HookWarning]) -> None:
        """Keep the warnings of a ``hook`` result, for the next line and the run's result."""
        kept = (RunWarning(hook=hook, middleware=w.middleware, text=w.text) for w in warnings)
        self.warnings.extend(kept)

    def write(self, line: Line) -> None:
        """The trace records made since the last line, then the line, which counts them: a
        crash between the two leaves records that :func:`prepare_resume` drops. The line
        holds the warnings given since the line before."""
        if self._journal is None or self._trace_file is None:
            return
        if len(self.warnings) > self._journaled:
            line = line.model_copy(update={"warnings": tuple(self.warnings[self._journaled :])})
            self._journaled = len(self.warnings)
        records = _since(self.trace, self._written)
        self._trace_file.writelines(
            json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
            for record in records
        )
        self._trace_file.flush()
        self._written = _made(self.trace)
        self._in_file += len(records)
        self._journal.write(line, trace=self._in_file)

    def segment_records(self) -> list[dict[str, Any]]:
        """The trace records made in this segment."""
        return _since(self.trace, self.start)

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
        if self._trace_file is not None:
            self._trace_file.close()
