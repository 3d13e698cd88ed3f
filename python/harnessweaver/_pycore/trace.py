"""The trace: one record per middleware that ran, then one hook record (rulings 19-20, I8).

Records become dicts or JSON Lines only when read. Until then each sits in one flat list as
four values, ``(shape, key, start, end)``: its *shape* (the fields from ``kind`` to
``contract``, a tuple that every plain Continue of one middleware shares), its *key*
(``(emit, hook, run, step, tool)``, one tuple per emit, I21), and the instants it started and
ended. A tuple of
its own per record would be one more object for the garbage collector to track and traverse,
which in a long-lived trace cost more than recording itself; four values instead of the
fourteen fields cost a core ~50 ns less per record, and an end shared with the next record's
start is one integer, not two.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from itertools import count
from types import TracebackType
from typing import IO, Any, Final

from .._plain import LIVE, final, plain_int, uncopyable
from ..errors import error_for
from .correlation import shown_text, valid_step
from .failure import exception_name
from .warnings import valid_in_trace

__all__ = ["DEFAULT_BATCH", "DEFAULT_LIMIT", "FIELDS", "MAX_EMIT", "Trace"]

_IDENTITY: Final = re.compile(r"sha256:[0-9a-f]{64}")  # I27, with fullmatch
_log = logging.getLogger("harnessweaver.trace")  # the Rust core logs on the same logger

MAX_EMIT: Final = 2**53 - 1
"""The largest emit ordinal (I19): the largest integer every JSON reader holds exactly."""
DEFAULT_LIMIT: Final = 2**20
"""How many records a trace keeps unless told otherwise (I20)."""
DEFAULT_BATCH: Final = 4096
"""How many records a sink is handed at once unless told otherwise."""
_NO_LIMIT: Final = sys.maxsize + 1  # above the largest limit a trace takes (2^63 - 1)

FIELDS: Final = (
    "emit",
    "hook",
    "run",
    "step",
    "tool",
    "kind",
    "middleware",
    "band",
    "outcome",
    "modified",
    "code",
    "failure",
    "error",
    "fail_mode",
    "contract",
    "warnings",
    "audit",
    "input_identity",
    "enforced_identity",
    "t_ns",
    "duration_ns",
)
_OPTIONAL: Final = frozenset(
    {"middleware", "band", "code", "failure", "error", "fail_mode", "contract"}
)
_FLAGS: Final = frozenset({"audit"})  # I25: present (true) on an audited middleware's records
_CORRELATION: Final = frozenset({"run", "step", "tool"})  # I21; absent in older traces
_WARNINGS: Final = FIELDS.index("warnings")  # I24: present only when some
# I27: a hook record's identities, both or neither. Absent (no scheme) is None, as for every
# optional field; an identity that is null (an event outside I-JSON) is stored as NO_IDENTITY.
_IDENTITIES: Final = ("input_identity", "enforced_identity")
_INPUT: Final = FIELDS.index("input_identity")
NO_IDENTITY: Final = ""
"""How a shape holds a null identity (I27): no identity is the empty text."""
_SKIP_NONE: Final = _OPTIONAL | _CORRELATION | _FLAGS | {"warnings", *_IDENTITIES}
_KEY: Final = 5  # emit, hook, run, step, tool: one tuple per emit
_REQUIRED_BY_KIND: Final = {
    "outcome": frozenset({"middleware", "band"}),
    "failure": frozenset({"middleware", "band", "failure", "error", "fail_mode"}),
    "hook": frozenset(),
}
_VALUES: Final = {
    "kind": frozenset(_REQUIRED_BY_KIND),
    "outcome": frozenset({"continue", "retry", "escalate", "suspend", "block"}),
    "band": frozenset({"baseline", "platform", "app", "task"}),
    "failure": frozenset(
        {
            "exception",
            "timeout",
            "invalid_return",
            "wrong_event_type",
            "contract_violation",
            "cancelled",
            "deadline",
            "skipped",
        }
    ),
    "fail_mode": frozenset({"closed", "open"}),
}

Record = tuple[Any, ...]
Shape = tuple[Any, ...]
"""A record's fields from ``kind`` to ``enforced_identity``, in the order of ``FIELDS``."""
_WIDTH: Final = 4  # shape, key, start, end


def outcome_shape(name: str, band: str, outcome: str, modified: bool, code: str | None,
                  contract: str | None = None, audit: bool = False,
                  warnings: tuple[str, ...] | None = None) -> Shape:  # fmt: skip
    """The shape of a middleware's outcome record (``audit``: of an audited one, I25;
    ``warnings`` only when some, I24)."""
    flag = True if audit else None
    return ("outcome", name, band, outcome, modified, code, None, None, None, contract, warnings,
            flag, None, None)  # fmt: skip


def failure_shape(name: str, band: str, outcome: str, code: str | None, failure: str,
                  error: str, fail_mode: str, contract: str | None,
                  audit: bool = False) -> Shape:  # fmt: skip
    """The shape of a middleware's failure record (``audit``: of an audited one, I25)."""
    flag = True if audit else None
    return ("failure", name, band, outcome, False, code, failure, error, fail_mode, contract, None,
            flag, None, None)  # fmt: skip


def hook_shape(outcome: str, modified: bool, code: str | None) -> Shape:
    """The shape of an emit's hook record."""
    return ("hook", None, None, outcome, modified, code, None, None, None, None, None, None, None,
            None)  # fmt: skip


def identified(shape: Shape, given: str | None, enforced: str | None) -> Shape:
    """A hook record's shape with the identities of I27 (``None``: outside I-JSON)."""
    return (*shape[:-2], given or NO_IDENTITY, enforced or NO_IDENTITY)


def _rows(fields: list[Any]) -> Iterator[Record]:
    """The flat field list as one tuple of ``FIELDS`` per record."""
    for shape, key, start, end in zip(*[iter(fields)] * _WIDTH, strict=True):
        yield (*key, *shape, start, end - start)


def _stored(record: Record) -> tuple[Any, ...]:
    """A record (a tuple of ``FIELDS``) as ``Trace._fields`` keeps it."""
    start = record[-2]
    return (record[_KEY:-2], record[:_KEY], start, start + record[-1])


def _as_dict(record: Record) -> dict[str, Any]:
    data = {
        key: value
        for key, value in zip(FIELDS, record, strict=True)
        if value is not None or key not in _SKIP_NONE
    }
    if record[_WARNINGS] is not None:
        data["warnings"] = list(record[_WARNINGS])  # a JSON array, as the Rust core gives
    if record[_INPUT] is not None:
        data["input_identity"] = record[_INPUT] or None
        data["enforced_identity"] = record[_INPUT + 1] or None
    return data


@final("harnessweaver.Trace")
@uncopyable("Trace", LIVE)
class Trace:
    """Every record of the emits made with one run context: the newest ``limit`` (I20)."""

    __slots__ = (
        "_batch",
        "_dropped",
        "_due_at",
        "_fields",
        "_jsonl",
        "_limit",
        "_lock",
        "_ordinals",
        "_serving",
        "_sink",
        "_skip",
        "_warned",
        "precise",
    )

    def __init__(
        self,
        *,
        precise: bool = False,
        limit: int | None = DEFAULT_LIMIT,
        sink: Callable[[list[dict[str, Any]]], object] | None = None,
        batch: int = DEFAULT_BATCH,
    ) -> None:
        kept = None if limit is None else _count(limit)
        if limit is not None and kept is None:
            raise ValueError(
                f"Trace limit must be a positive number of records or None, got {_shown(limit)}"
                " (I20)"
            )
        per_batch = _count(batch)
        if per_batch is None:
            raise ValueError(
                f"Trace batch must be a positive number of records, got {_shown(batch)} (I20)"
            )
        limit, batch = kept, per_batch
        if sink is not None and not callable(sink):
            raise TypeError(f"Trace sink must be callable (taking a list of records), got {sink!r}")
        # The cores add an emit's records with one ``_fields.extend(batch)``: whole, under the
        # GIL. Everything that reads or moves the front, and the ordinals, takes ``_lock``
        # (the Rust core's trace does all of it under its lock; docs/trace.md, threads).
        self._fields: list[Any] = []
        self._lock = threading.RLock()
        # Emit ordinals (I8), each taken with one ``next()``: a single C call, so one per emit
        # whatever threads share the trace (the Rust core's atomic counter).
        self._ordinals = count(1)
        self._skip = 0  # records at the front of _fields already taken out or dropped
        self._limit = _NO_LIMIT if limit is None else limit
        self._dropped = 0
        self._sink = sink
        self._batch = batch
        from ..context import JsonlSink

        self._jsonl = isinstance(sink, JsonlSink)
        self._warned = False
        self._serving = False
        # Fields past which an emit's start has work: a batch for the sink, or records past
        # the limit to trim (some slack, so that trimming the list's front is amortised).
        past_limit = self._limit + max(self._limit // 8, 1024)
        self._due_at = _WIDTH * (min(batch, past_limit) if sink is not None else past_limit)
        self.precise = precise  # time every record on the precise clock

    @property
    def _emits(self) -> int:
        """The last ordinal handed out (``count`` shows the next one, and only in its repr)."""
        handed = int(repr(self._ordinals)[6:-1]) - 1
        return handed if handed <= MAX_EMIT else MAX_EMIT

    @_emits.setter
    def _emits(self, value: int) -> None:
        self._ordinals = count(min(value, MAX_EMIT) + 1)

    def _begin_emit(self) -> int:
        """The ordinal of an emit starting now: 1, 2, 3, ... (I8), at most MAX_EMIT (I19).
        First serves the sink or trims, when the records added since make it due. (``drive``
        does the same inline: a method call is a tenth of a short emit.)"""
        n: int = next(self._ordinals)
        if len(self._fields) >= self._due_at:
            self._serve(everything=False)
        return n if n <= MAX_EMIT else MAX_EMIT

    @property
    def limit(self) -> int | None:
        """How many records the trace keeps at most (I20); ``None`` for no bound."""
        return None if self._limit == _NO_LIMIT else self._limit

    @property
    def dropped(self) -> int:
        """Records dropped because the limit was reached or a sink failed to take them."""
        self._settle()
        return self._dropped

    @property
    def emits(self) -> int:
        """The number of emits begun on this trace: the last ordinal handed out (I8, I19)."""
        return self._emits

    @property
    def sink(self) -> Callable[[list[dict[str, Any]]], object] | None:
        return self._sink

    @property
    def batch(self) -> int:
        return self._batch

    def _settle(self) -> None:
        """Forget what is past the limit, and give back the list's dead front when large."""
        with self._lock:
            self._settle_locked()

    def _settle_locked(self) -> None:
        fields = self._fields
        held = len(fields) // _WIDTH - self._skip
        if held > self._limit:
            over = held - self._limit
            self._skip += over
            self._dropped += over
        if (self._skip and self._skip * _WIDTH * 2 >= len(fields)) or self._skip > 65536:
            del fields[: self._skip * _WIDTH]  # in place: emits in flight extend this list
            self._skip = 0
        if self._dropped and not self._warned:
            self._warned = True
            _log.warning(
                "harnessweaver trace dropped its oldest records: it keeps the newest %d (I20); "
                "give it a sink or drain() it",
                self._limit,
            )

    def _take(self, most: int) -> list[Record]:
        """The oldest ``most`` records held, taken out."""
        with self._lock:
            self._settle_locked()
            start = self._skip * _WIDTH
            count = min(most, len(self._fields) // _WIDTH - self._skip)
            fields = self._fields[start : start + count * _WIDTH]
            self._skip += count
            self._settle_locked()
        return list(_rows(fields))

    def _serve(self, *, everything: bool) -> int:
        """Hand the sink every full batch (every record with ``everything``). A failing sink's
        records are counted as dropped and its error type logged (never its message, R9); with
        ``everything`` (an explicit ``flush()``) the error is raised."""
        self._settle()
        sink = self._sink
        with self._lock:
            if sink is None or self._serving:
                return 0
            self._serving = True  # one thread serves; a sink that emits does not recurse
        served = 0
        try:
            while len(self) and (everything or len(self) >= self._batch):
                rows = self._take(self._batch)
                try:
                    if self._jsonl:
                        sink.write_text("".join(map(_line, rows)))  # type: ignore[attr-defined]
                    else:
                        sink([_as_dict(r) for r in rows])
                except Exception as exc:
                    self._dropped += len(rows)
                    if everything:
                        raise
                    _log.warning(
                        "harnessweaver trace sink failed (%s); %d records dropped",
                        exception_name(exc),  # the type's own name, bounded (I28)
                        len(rows),
                    )
                served += len(rows)
        finally:
            self._serving = False
        return served

    def drain(self) -> list[dict[str, Any]]:
        """Take out every record held, as dicts: they are no longer held. Ordinals go on."""
        return [_as_dict(r) for r in self._take(len(self))]

    def flush(self) -> int:
        """Hand every record held to the sink now; return how many. Without a sink, 0. A
        sink's error is raised (its records are counted as dropped)."""
        return self._serve(everything=True)

    def close(self) -> None:
        """``flush()``, then the sink's own ``close()`` when it has one."""
        self.flush()
        close = getattr(self._sink, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _live(self) -> list[Any]:
        """The fields of the records held, as of now (a copy: emits go on extending)."""
        with self._lock:
            self._settle_locked()
            return self._fields[self._skip * _WIDTH :]

    def __len__(self) -> int:
        with self._lock:
            self._settle_locked()
            return len(self._fields) // _WIDTH - self._skip

    def __sizeof__(self) -> int:
        # This object, its field list, and each distinct object the records hold: shapes,
        # keys and instants (an instant may end one record and start the next; a plain
        # Continue's shape belongs to its middleware and is counted once). The strings, small
        # integers and None inside shapes and keys are shared with the whole program.
        fields = self._fields
        held = {id(value): value for value in fields}
        owned = sum(map(sys.getsizeof, held.values()))
        return object.__sizeof__(self) + sys.getsizeof(fields) + owned

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(_as_dict, _rows(self._live()))

    def __getitem__(self, index: int) -> dict[str, Any]:
        # An int (bool and subclasses as their plain value, never through __index__); out of
        # range however large is an IndexError, anything else a TypeError (both cores).
        if type(index) is not int:
            if not isinstance(index, int):
                raise TypeError(f"trace indices must be integers, not {type(index).__name__}")
            index = int.__int__(index)
        with self._lock:
            count = len(self)
            if not -count <= index < count:
                raise IndexError(f"trace index {index} out of range")
            start = (self._skip + index % count) * _WIDTH
            fields = self._fields[start : start + _WIDTH]
        return _as_dict(next(_rows(fields)))

    def records(self) -> list[dict[str, Any]]:
        """Every record as a plain dict with the fields of ruling 20 / I8."""
        return [_as_dict(r) for r in _rows(self._live())]

    def to_jsonl(self) -> str:
        """The records as JSON Lines, one compact object per line."""
        return "".join(map(_line, _rows(self._live())))

    def write_jsonl(self, file: str | os.PathLike[str] | IO[str]) -> None:
        """Write the records as JSON Lines to a path or an open text file."""
        if isinstance(file, str | os.PathLike):
            with open(file, "w", encoding="utf-8") as handle:
                handle.writelines(map(_line, _rows(self._live())))
        else:
            file.writelines(map(_line, _rows(self._live())))

    @classmethod
    def from_jsonl(cls, text: str, *, limit: int | None = DEFAULT_LIMIT) -> Trace:
        """Read records written by ``to_jsonl``/``write_jsonl`` (any implementation's); the
        trace keeps the newest ``limit`` of them (I20)."""
        trace = cls(limit=limit)
        emits = 0
        # Lines end at "\n" only, as the Rust core reads them: ``str.splitlines`` would also
        # split at U+0085, U+2028, \x1c… which a record's texts hold unescaped.
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip(" \t\r\n"):
                record = _parse(line, number)
                trace._fields.extend(_stored(record))
                emits = max(emits, record[0])
        trace._emits = emits
        return trace

    @classmethod
    def read_jsonl(
        cls, file: str | os.PathLike[str] | IO[str], *, limit: int | None = DEFAULT_LIMIT
    ) -> Trace:
        """Read a JSON Lines trace from a path or an open text file."""
        if isinstance(file, str | os.PathLike):
            with open(file, encoding="utf-8") as handle:
                return cls.from_jsonl(handle.read(), limit=limit)
        return cls.from_jsonl(file.read(), limit=limit)

    def __repr__(self) -> str:
        return f"<Trace of {len(self)} records, {self._emits} emits>"


def _count(value: object) -> int | None:
    """A count of records (a limit, a batch): an ``int``, not a bool, from 1 to 2^63 - 1 (what
    the Rust core holds), read as its plain value; ``None`` for anything else."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    number = plain_int(value)
    assert isinstance(number, int)
    return number if 1 <= number <= _MAX_COUNT else None


def _shown(value: object) -> str:
    """A bad count as messages show it: an ``int`` as its plain value, else its repr."""
    if isinstance(value, bool) or not isinstance(value, int):
        return repr(value)
    return repr(plain_int(value))


_MAX_COUNT: Final = 2**63 - 1


def _line(record: Record) -> str:
    return json.dumps(_as_dict(record), separators=(",", ":"), ensure_ascii=False) + "\n"


def _bad(number: int, problem: str) -> Exception:
    return error_for("trace", "invalid_trace", "I8", f"invalid trace line {number}: {problem} (I8)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate field {key!r}")
        data[key] = value
    return data


def _parse(line: str, number: int) -> Record:
    """One line, checked as strictly as the Rust core's reader (``trace/read.rs``)."""
    try:
        data = json.loads(line, object_pairs_hook=_no_duplicates)
    except ValueError as exc:
        raise _bad(number, str(exc)) from None
    except RecursionError:  # I32: a record nests 2 deep; the parser recursed on far deeper
        raise _bad(number, "arrays and objects nest deeper than a record's (I32)") from None
    if not isinstance(data, dict):
        raise _bad(number, "not a JSON object")
    try:
        identities = _identities(data)
        record = _record({k: v for k, v in data.items() if v is not None})
    except ValueError as exc:
        raise _bad(number, str(exc)) from None
    if identities is None:
        return record
    return (*record[:_INPUT], *identities, *record[_INPUT + 2 :])


def _identities(data: dict[str, Any]) -> tuple[str, str] | None:
    """A hook record's identities as a shape holds them (I27): both keys or neither, each null
    or ``sha256:`` and 64 lowercase hex digits; ``None`` when the record has none."""
    present = [key for key in _IDENTITIES if key in data]
    if not present:
        return None
    if len(present) == 1:
        raise ValueError(f"{present[0]} without its pair: a hook record has both or neither (I27)")
    if data.get("kind") != "hook":
        raise ValueError("only a hook record has input_identity and enforced_identity (I27)")
    values = tuple(data.pop(key) for key in _IDENTITIES)
    for key, value in zip(_IDENTITIES, values, strict=True):
        if value is not None and not (isinstance(value, str) and _IDENTITY.fullmatch(value)):
            raise ValueError(f"invalid {key} {value!r}: null or sha256: and 64 hex digits (I27)")
    given, enforced = values
    return (given or NO_IDENTITY, enforced or NO_IDENTITY)


def _quoted(code: str | None) -> str:
    return "none" if code is None else f"'{code}'"


def _whole(data: dict[str, Any], key: str, default: int | None, limit: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
        raise ValueError(f"invalid {key} {value!r}")
    return value


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"invalid {key} {value!r}")
    if value is not None and not value.isascii() and shown_text(value) != value:
        # An escaped lone surrogate: the Rust core's reader refuses it as JSON, and no writer
        # writes one (I21 writes U+FFFD in its place).
        raise ValueError(f"invalid {key}: it holds a lone surrogate, which no trace writer writes")
    return value


def _check_contract(kind: str, modified: bool, failure: str | None, contract: str | None) -> None:
    """I14: a contract rule is named by the record of a modification that broke it (a modified
    outcome record in warn mode, a contract_violation failure record in strict mode), only."""
    from .contracts import CONTRACT_RULES

    if contract is not None and contract not in CONTRACT_RULES:
        raise ValueError(f"unknown contract '{contract}'")
    violation = failure == "contract_violation"
    if kind == "failure" and violation and contract is None:
        raise ValueError("a contract_violation failure record needs contract")
    if kind == "failure" and not violation and contract is not None:
        raise ValueError("only a contract_violation failure record has a contract")
    if kind == "outcome" and contract is not None and not modified:
        raise ValueError("only a modified outcome record has a contract")
    if kind == "hook" and contract is not None:
        raise ValueError("a hook record has no contract")


def _check_names(code: str | None, error: str | None) -> None:
    """A code within its bound, an error that is a type name (I28): what no implementation
    records is no trace line."""
    from .failure import MAX_TYPE_NAME, is_type_name
    from .outcomes import MAX_TOKEN_CHARS

    if code is not None and len(code) > MAX_TOKEN_CHARS:
        raise ValueError(f"invalid code: longer than {MAX_TOKEN_CHARS} characters (I28)")
    if error is not None and not is_type_name(error):
        raise ValueError(
            "invalid error: a type name is ASCII identifiers joined by dots, at most "
            f"{MAX_TYPE_NAME} characters (I28)"
        )


def _record(data: dict[str, Any]) -> Record:
    from .catalogue import ORDER
    from .failure import closed_code

    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    for key in ("emit", "hook", "kind", "outcome", "modified"):
        if key not in data:
            raise ValueError(f"missing field {key!r}")
    emit = _whole(data, "emit", None, 2**64 - 1)
    if emit == 0:
        raise ValueError("emit is an ordinal from 1, not 0")
    if emit > MAX_EMIT:
        raise ValueError(f"invalid emit {emit}: ordinals end at {MAX_EMIT} (I19)")
    for key, what in (("run", "a run id"), ("tool", "a tool name")):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"invalid {key} {data[key]!r}: {what} is a string (I21)")
    keys = ("hook", "kind", "outcome", "run", "tool", *_OPTIONAL)
    texts = {key: _text(data, key) for key in keys}
    step = data.get("step")
    if step is not None and not valid_step(step):
        raise ValueError(f"invalid step {step!r}: a step is an integer from 0 to {MAX_EMIT} (I21)")
    if texts["hook"] not in ORDER:
        raise ValueError(f"unknown hook '{texts['hook']}'")
    for key, allowed in _VALUES.items():
        if texts[key] is not None and texts[key] not in allowed:
            raise ValueError(f"unknown {key} '{texts[key]}'")
    modified = data["modified"]
    if not isinstance(modified, bool):
        raise ValueError(f"invalid modified {modified!r}")
    outcome, kind = texts["outcome"], texts["kind"]
    if modified and outcome != "continue":
        raise ValueError(f"modified is true only for a continue, not for '{outcome}'")
    if texts["code"] is not None and outcome == "continue":
        raise ValueError("a continue has no code")
    _check_names(texts["code"], texts["error"])
    wanted = _REQUIRED_BY_KIND[str(kind)]
    for key in _OPTIONAL - {"code", "contract"}:
        if key in wanted and texts[key] is None:
            raise ValueError(f"a {kind} record needs {key}")
        if key not in wanted and texts[key] is not None:
            raise ValueError(f"a {kind} record has no {key}")
    if kind == "failure":
        closed = texts["fail_mode"] == "closed"
        expected = ("block", closed_code(str(texts["failure"]))) if closed else ("continue", None)
        if (outcome, texts["code"]) != expected:
            raise ValueError(
                f"a {texts['failure']} failure of a fail_mode {texts['fail_mode']} middleware is "
                f"recorded as {expected[0]} with code {_quoted(expected[1])}"
            )
    _check_contract(str(kind), modified, texts["failure"], texts["contract"])
    warnings = data.get("warnings")
    if warnings is not None:
        if kind != "outcome":
            raise ValueError("only an outcome record has warnings (I24)")
        warnings = valid_in_trace(warnings)
    audit = data.get("audit")
    if audit is not None:
        if audit is not True:
            raise ValueError("audit is true when present (I25)")
        if kind == "hook":
            raise ValueError("a hook record has no audit")
    t_ns = _whole(data, "t_ns", 0, 2**64 - 1)
    duration_ns = _whole(data, "duration_ns", 0, 2**64 - 1)
    values = {**texts, "emit": emit, "step": step, "modified": modified, "warnings": warnings,
              "audit": audit, "input_identity": None, "enforced_identity": None, "t_ns": t_ns,
              "duration_ns": duration_ns}  # fmt: skip
    return tuple(values[key] for key in FIELDS)


# Public under the package's name, like the Rust core's classes (repr, pickling, docs).
for _cls in (Trace,):
    _cls.__module__ = "harnessweaver"
