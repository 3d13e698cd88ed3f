"""Canonical JSON: one byte sequence per JSON value, whatever language produced it.

Observations and result lines are written canonically (INTERPRETING.md §7): keys sorted, no
insignificant white space, non-ASCII kept as is (but a lone surrogate, which UTF-8 cannot
carry, written as its ``\\udcff`` escape, as ``JSON.stringify`` writes it), and integral
floats written as integers so that ``0.0`` from one implementation and ``0`` from another
serialise the same.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "TIMING_FIELDS",
    "canonical_json",
    "case_file_json",
    "normalize",
    "parse_json",
    "pinned",
    "strip_timings",
]

TIMING_FIELDS = frozenset({"t_ns", "duration_ns"})
"""Trace-record fields that are never compared nor written (INTERPRETING.md §6.1, I8)."""


def normalize(value: Any) -> Any:
    """Return a copy of a JSON value with integral floats turned into ints.

    Booleans are left alone (``True`` is not ``1`` in JSON). Non-finite floats are rejected,
    since JSON has no spelling for them.
    """
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a JSON number: {value!r}")
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(key): normalize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(item) for item in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def canonical_json(value: Any) -> str:
    """Serialise a JSON value canonically (sorted keys, compact, integral floats as ints)."""
    text = json.dumps(
        normalize(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    # A str holds a surrogate only unpaired (json.loads joins escaped pairs): only inside a
    # JSON string, where its escape is valid JSON that every reader turns back into it.
    return text if text.isascii() else _SURROGATE.sub(_escape_surrogate, text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not a JSON number: {name}")


MAX_DEPTH = 128
"""How deeply arrays and objects nest in a JSON text the driver reads (a case file, a known-
failure list, a testee's message; the text itself is 1). The corpus nests about 10 deep; the
bound keeps what walks a value afterwards (the schema check, the matchers, ``normalize``,
all recursive) well inside Python's recursion limit."""


def parse_json(text: str) -> Any:
    """Parse strict JSON: ``NaN`` and ``Infinity`` (which Python accepts by default) fail, and
    so does nesting deeper than :data:`MAX_DEPTH` (a ``ValueError`` like any other fault, not
    the parser's ``RecursionError``)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(f"arrays and objects nest more than {MAX_DEPTH} deep") from None
    _check_depth(value)
    return value


_CONTAINERS = (dict, list)  # what json.loads makes: exactly these types
# (harnessweaver/jsondepth.py walks the same way; the driver imports no module of the package
# outside harnessweaver.conformance, so that it judges implementations without loading one.)


def _check_depth(value: Any) -> None:
    """``ValueError`` when ``value`` (as ``json.loads`` made it) nests deeper than
    :data:`MAX_DEPTH`: a walk a level at a time, without recursion."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:  # a level at a time: the containers one deeper than the last
        depth += 1
        if depth > MAX_DEPTH:
            raise ValueError(f"arrays and objects nest more than {MAX_DEPTH} deep")
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]


def strip_timings(observation: Any) -> Any:
    """Return a copy of an observation without ``t_ns``/``duration_ns`` in its trace records.

    Only ``observation["traces"][context][i]`` records are touched; anything that is not
    shaped like an observation is returned unchanged (the matchers report the shape).
    """
    if not isinstance(observation, dict):
        return observation
    traces = observation.get("traces")
    if not isinstance(traces, dict):
        return dict(observation)
    stripped = {
        context: [_strip_record(record) for record in records]
        if isinstance(records, list)
        else records
        for context, records in traces.items()
    }
    return {**observation, "traces": stripped}


def pinned(observation: Any) -> Any:
    """Return a copy of an observation without the free text the corpus does not pin.

    The only such text is an error's ``message`` and the ``message`` of each of its
    ``problems`` (a spec that fails to load, INTERPRETING.md §6.1): prose for people, which
    ``then`` compares through matchers alone (§6.4), so its wording is each implementation's.
    Everything else an observation holds is pinned: kinds, rules, a problem's file, item and
    line, outcomes (their reasons are fixed texts, I6), events, chains, the harness loaded and
    trace records (which hold no message, R9). An approval refusal's ``message`` (I34) is free
    text too. ``--require-identical`` compares what this leaves (§7).
    """
    if not isinstance(observation, dict):
        return observation
    observation = _without_refusal_messages(observation)
    error = observation.get("error")
    if not isinstance(error, dict):
        return dict(observation)
    kept = {key: value for key, value in error.items() if key != "message"}
    problems = kept.get("problems")
    if isinstance(problems, list):
        kept["problems"] = [
            {k: v for k, v in p.items() if k != "message"} if isinstance(p, dict) else p
            for p in problems
        ]
    return {**observation, "error": kept}


def _without_refusal_messages(observation: dict[str, Any]) -> dict[str, Any]:
    """An approval refusal's ``message`` (I34) is free text like an error's."""
    steps = observation.get("approvals")
    if not isinstance(steps, list):
        return observation
    kept = [
        {**step, "refused": {k: v for k, v in step["refused"].items() if k != "message"}}
        if isinstance(step, dict) and isinstance(step.get("refused"), dict)
        else step
        for step in steps
    ]
    return {**observation, "approvals": kept}


def _strip_record(record: Any) -> Any:
    if not isinstance(record, dict):
        return record
    return {key: value for key, value in record.items() if key not in TIMING_FIELDS}


CASE_FILE_WIDTH = 140


def case_file_json(value: Any, indent: int = 0, lead: int = 0) -> str:
    """JSON laid out the way the corpus's case files are: a container stays on one line when
    it fits in 140 columns or holds only scalars (a trace record, a list of names)."""
    flat = json.dumps(value, ensure_ascii=False)
    if (
        not isinstance(value, dict | list)
        or not value
        or indent + lead + len(flat) <= CASE_FILE_WIDTH
    ):
        return flat
    items = value.values() if isinstance(value, dict) else value
    if all(not isinstance(item, dict | list) for item in items):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            name = json.dumps(key, ensure_ascii=False) + ": "
            lines.append(pad + name + case_file_json(item, indent + 2, len(name)))
        return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"
    lines = [pad + case_file_json(item, indent + 2) for item in value]
    return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"
