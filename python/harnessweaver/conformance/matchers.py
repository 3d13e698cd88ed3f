"""Compare a case's ``then`` with an observation (INTERPRETING.md §6.4).

The comparison lives here and only here: runners report observations, the driver judges. The
result is a list of :class:`Diff` entries addressed by JSON pointers into the observation;
an empty list means the observation matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from harnessweaver.conformance.canonical import canonical_json

__all__ = [
    "ABSENT",
    "MATCHER_KEYS",
    "Diff",
    "compare_observation",
    "compare_value",
    "first_difference",
    "is_matcher",
    "matcher_problems",
    "pointer",
]


class _Absent:
    """The value of a key that is not there (distinct from JSON ``null``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = _Absent()
MATCHER_KEYS: Final = frozenset({"$any", "$contains", "$regex"})


@dataclass(frozen=True, slots=True)
class Diff:
    """One difference: what ``then`` expected at ``path`` and what was observed there.

    ``expected`` or ``actual`` is :data:`ABSENT` when that side has no value at ``path``; the
    JSON form then leaves the key out.
    """

    path: str
    expected: Any
    actual: Any

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        if self.actual is not ABSENT:
            out["actual"] = self.actual
        return out


def pointer(path: str, key: str | int) -> str:
    """Append one reference token to a JSON pointer (RFC 6901 escaping)."""
    token = str(key).replace("~", "~0").replace("/", "~1")
    return f"{path}/{token}"


def is_matcher(value: Any) -> bool:
    """Whether ``value`` is one of the matcher objects of §6.4."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in MATCHER_KEYS


def matcher_problems(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(path, problem)`` for every malformed matcher object inside ``value``.

    A one-key object whose key starts with ``$`` is taken to be meant as a matcher, so an
    unknown one (``{"$absent": true}``) is reported rather than silently compared as data.
    """
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from matcher_problems(item, pointer(path, index))
        return
    if not isinstance(value, dict):
        return
    if len(value) == 1:
        key, argument = next(iter(value.items()))
        if key.startswith("$"):
            problem = _matcher_problem(key, argument)
            if problem is not None:
                yield path or "/", problem
            return
    for key, item in value.items():
        yield from matcher_problems(item, pointer(path, key))


def _matcher_problem(key: str, argument: Any) -> str | None:
    if key == "$any":
        return None if argument is True else '"$any" takes true'
    if key == "$contains":
        return None if isinstance(argument, str) else '"$contains" takes a string'
    if key == "$regex":
        if not isinstance(argument, str):
            return '"$regex" takes a string'
        try:
            re.compile(argument)
        except re.error as exc:
            return f'"$regex" {argument!r} does not compile: {exc}'
        return None
    return f"unknown matcher {key!r} (known: {', '.join(sorted(MATCHER_KEYS))})"


def _matches(matcher: dict[str, Any], actual: Any) -> bool:
    ((key, argument),) = matcher.items()
    if key == "$any":
        return True
    if not isinstance(actual, str):
        return False
    if key == "$contains":
        return str(argument) in actual
    return re.search(str(argument), actual) is not None


def _scalar_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        return expected == actual
    return type(expected) is type(actual) and bool(expected == actual)


def compare_value(
    expected: Any, actual: Any, path: str = "", *, matchers: bool = True
) -> list[Diff]:
    """JSON equality with matchers: key order never matters, ``1 == 1.0``, ``true != 1``."""
    if matchers and is_matcher(expected):
        return [] if _matches(expected, actual) else [Diff(path, expected, actual)]
    if isinstance(expected, dict) and isinstance(actual, dict):
        diffs: list[Diff] = []
        for key in sorted(expected.keys() | actual.keys()):
            here = pointer(path, key)
            if key not in expected:
                diffs.append(Diff(here, ABSENT, actual[key]))
            else:
                item = actual.get(key, ABSENT)
                diffs.extend(compare_value(expected[key], item, here, matchers=matchers))
        return diffs
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [Diff(path, expected, actual)]
        diffs = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            diffs.extend(compare_value(want, got, pointer(path, index), matchers=matchers))
        return diffs
    if isinstance(expected, dict | list) or isinstance(actual, dict | list):
        return [Diff(path, expected, actual)]
    return [] if _scalar_equal(expected, actual) else [Diff(path, expected, actual)]


def first_difference(left: Any, right: Any) -> str | None:
    """The JSON pointer of the first difference between two plain JSON values, or ``None``."""
    diffs = compare_value(left, right, matchers=False)
    return (diffs[0].path or "/") if diffs else None


def compare_observation(then: Mapping[str, Any], actual: Any) -> list[Diff]:
    """Compare an expected observation (a case's ``then``) with an actual one."""
    if not isinstance(actual, dict):
        return [Diff("", then, actual)]
    diffs: list[Diff] = []
    if "error" not in then and actual.get("error") is not None:
        diffs.append(Diff("/error", None, actual["error"]))
    for key in sorted(then):
        expected = then[key]
        got = actual.get(key, ABSENT)
        if key == "excludes":
            continue
        if key == "emits":
            diffs.extend(_compare_emits(expected, got))
        elif key == "error":
            diffs.extend(_compare_error(expected, got))
        elif key == "chains":
            diffs.extend(_compare_chains(expected, got))
        elif key == "approvals":
            diffs.extend(_compare_approvals(expected, got))
        else:
            diffs.extend(compare_value(expected, got, pointer("", key)))
    diffs.extend(_compare_excludes(then.get("excludes", []), actual))
    return diffs


def _compare_emits(expected: Any, actual: Any) -> list[Diff]:
    """Same number of emits; inside an entry only the keys written in ``then`` count."""
    if not (isinstance(expected, list) and isinstance(actual, list)):
        return compare_value(expected, actual, "/emits")
    if len(expected) != len(actual):
        return [Diff("/emits", expected, actual)]
    diffs: list[Diff] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        here = pointer("/emits", index)
        if not (isinstance(want, dict) and isinstance(got, dict)):
            diffs.extend(compare_value(want, got, here))
            continue
        for key in sorted(want):
            diffs.extend(compare_value(want[key], got.get(key, ABSENT), pointer(here, key)))
    return diffs


def _compare_approvals(expected: Any, actual: Any) -> list[Diff]:
    """One entry per approval step (I34); inside an entry, a verdict, a refusal and a record
    (at any depth of those) only the keys written in ``then`` are compared, each exactly: a
    case pins what it is about, ``--require-identical`` pins the rest."""
    if not (isinstance(expected, list) and isinstance(actual, list)):
        return compare_value(expected, actual, "/approvals")
    if len(expected) != len(actual):
        return [Diff("/approvals", expected, actual)]
    diffs: list[Diff] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        diffs.extend(_compare_keys(want, got, pointer("/approvals", index), depth=0))
    return diffs


_PARTIAL = frozenset({"record", "verdict", "refused"})
"""Keys of an approval step's answer whose objects are compared by the keys written."""


def _compare_keys(want: Any, got: Any, here: str, depth: int) -> list[Diff]:
    if not (isinstance(want, dict) and isinstance(got, dict)) or is_matcher(want):
        return compare_value(want, got, here)
    diffs: list[Diff] = []
    for key in sorted(want):
        at = pointer(here, key)
        if key in _PARTIAL and depth < 2:
            diffs.extend(_compare_keys(want[key], got.get(key, ABSENT), at, depth + 1))
        else:
            diffs.extend(compare_value(want[key], got.get(key, ABSENT), at))
    return diffs


def _compare_error(expected: Any, actual: Any) -> list[Diff]:
    """As any value, but a problem written without ``message`` leaves its message uncompared
    (free text, §6.4: a case that pins it does so through a matcher)."""
    problems = expected.get("problems") if isinstance(expected, dict) else None
    if not (isinstance(problems, list) and isinstance(actual, dict)):
        return compare_value(expected, actual, "/error")
    got = actual.get("problems")
    if isinstance(got, list) and len(got) == len(problems):
        got = [
            {k: v for k, v in have.items() if k != "message" or "message" in want}
            if isinstance(want, dict) and isinstance(have, dict)
            else have
            for want, have in zip(problems, got, strict=True)
        ]
        actual = {**actual, "problems": got}
    return compare_value(expected, actual, "/error")


def _compare_chains(expected: Any, actual: Any) -> list[Diff]:
    """Only the hook points listed in ``then.chains`` are compared, each list exactly."""
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return compare_value(expected, actual, "/chains")
    diffs: list[Diff] = []
    for hook in sorted(expected):
        here = pointer("/chains", hook)
        diffs.extend(compare_value(expected[hook], actual.get(hook, ABSENT), here))
    return diffs


def _compare_excludes(excludes: Any, actual: dict[str, Any]) -> list[Diff]:
    """None of the strings may occur in the canonical JSON of the whole observation (R9).

    A hit is reported at the innermost value (or key) whose canonical JSON holds the string,
    with ``{"$excludes": S}`` as the expectation; a hit that spans several values is
    reported at the root with an excerpt of the canonical JSON around it.
    """
    text = canonical_json(actual)
    diffs: list[Diff] = []
    for needle in excludes:
        at = text.find(needle)
        if at < 0:
            continue
        expected = {"$excludes": needle}
        found = _find_occurrence(actual, needle, "")
        if found is not None:
            diffs.append(Diff(found[0], expected, found[1]))
        else:
            excerpt = text[max(0, at - 40) : at + len(needle) + 40]
            diffs.append(Diff("", expected, excerpt))
    return diffs


def _find_occurrence(value: Any, needle: str, path: str) -> tuple[str, Any] | None:
    if isinstance(value, dict):
        for key in sorted(value):
            here = pointer(path, key)
            if needle in canonical_json(key):
                return here, value[key]
            found = _find_occurrence(value[key], needle, here)
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_occurrence(item, needle, pointer(path, index))
            if found is not None:
                return found
        return None
    return (path, value) if needle in canonical_json(value) else None
