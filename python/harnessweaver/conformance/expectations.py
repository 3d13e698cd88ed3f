"""Case results and the strict known-failure lists (INTERPRETING.md §7).

``expectations/<impl>.json`` lists the cases an implementation is known to fail (``xfail``)
or must not run (``skip``). The list is strict, after protobuf's failure lists and
smithy-rs's ``ExpectFail``: an unlisted failure fails the run, a listed case that passes
(``xpass``) fails the run, an entry that matches no case fails the run, and every entry
needs a reason.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from harnessweaver.conformance.canonical import parse_json
from harnessweaver.conformance.matchers import Diff

__all__ = [
    "FAILING",
    "CaseResult",
    "Entry",
    "Expectations",
    "ExpectationsError",
    "Status",
    "apply_expectation",
    "load_expectations",
    "parse_expectations",
]


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    XFAIL = "xfail"
    XPASS = "xpass"
    SKIP = "skip"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"


FAILING = frozenset({Status.FAIL, Status.XPASS, Status.ERROR, Status.CRASH, Status.TIMEOUT})
"""Statuses that fail the run."""

_UNSUCCESSFUL = frozenset({Status.FAIL, Status.ERROR, Status.CRASH, Status.TIMEOUT})
_ENTRY_ID = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*(\*)?$|^[a-z0-9]+([.-][a-z0-9]+)*[.-]\*$")
_ENTRY_KEYS = frozenset({"id", "status", "reason", "issue"})


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The verdict on one case for one implementation.

    ``detail`` (the runner's stderr tail after a crash or timeout) is shown on the console
    but never written to the results file, which stays byte-stable.
    """

    id: str
    status: Status
    actual: Any = None
    diff: tuple[Diff, ...] = ()
    reason: str | None = None
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"id": self.id, "status": str(self.status), "actual": self.actual}
        if self.diff:
            line["diff"] = [diff.to_json() for diff in self.diff]
        if self.reason is not None:
            line["reason"] = self.reason
        return line


class ExpectationsError(Exception):
    """A known-failure list that cannot be used."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a known-failure list; an ``id`` ending in ``*`` matches a prefix."""

    id: str
    status: Status
    reason: str
    issue: str | None = None

    @property
    def is_prefix(self) -> bool:
        return self.id.endswith("*")

    def matches(self, case_id: str) -> bool:
        if self.is_prefix:
            return case_id.startswith(self.id[:-1])
        return case_id == self.id


@dataclass(frozen=True, slots=True)
class Expectations:
    """An implementation's known-failure list (empty when it has none)."""

    implementation: str
    entries: tuple[Entry, ...] = ()
    source: Path | None = None

    def lookup(self, case_id: str) -> Entry | None:
        """The entry for a case: an exact id wins over prefixes, a longer prefix over a
        shorter one."""
        matching = [entry for entry in self.entries if entry.matches(case_id)]
        return max(matching, key=_specificity, default=None)

    def unmatched(self, case_ids: Iterable[str]) -> list[Entry]:
        """Entries that match none of ``case_ids`` (each fails the run)."""
        ids = list(case_ids)
        return [entry for entry in self.entries if not any(map(entry.matches, ids))]


def _specificity(entry: Entry) -> tuple[bool, int]:
    return (not entry.is_prefix, len(entry.id))


def load_expectations(directory: Path | None, impl: str) -> Expectations:
    """Load ``directory/<impl>.json``; no directory or no file means no known failures."""
    if directory is None:
        return Expectations(impl)
    path = directory / f"{impl}.json"
    if not path.is_file():
        return Expectations(impl)
    try:
        document = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExpectationsError(f"{path}: cannot read JSON: {exc}") from exc
    return parse_expectations(document, impl, path)


def parse_expectations(document: Any, impl: str, source: Path | None = None) -> Expectations:
    """Check and convert a known-failure list; every problem names the file and the entry."""
    where = str(source) if source is not None else f"expectations for {impl}"
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise ExpectationsError(f'{where}: must be an object with an "entries" list')
    named = document.get("implementation")
    if named != impl:
        raise ExpectationsError(f'{where}: "implementation" is {named!r}, expected {impl!r}')
    entries: list[Entry] = []
    for index, raw in enumerate(document["entries"]):
        entry = _parse_entry(raw, f"{where}: entries[{index}]")
        if any(existing.id == entry.id for existing in entries):
            raise ExpectationsError(f"{where}: entry {entry.id!r} is listed twice")
        entries.append(entry)
    return Expectations(impl, tuple(entries), source)


def _parse_entry(raw: Any, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise ExpectationsError(f"{where}: not an object")
    entry_id = raw.get("id")
    if not isinstance(entry_id, str) or not _ENTRY_ID.match(entry_id):
        raise ExpectationsError(f"{where}: id {entry_id!r} is not a case id or an id prefix + *")
    where = f"{where} ({entry_id})"
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        raise ExpectationsError(f"{where}: unknown key(s): {', '.join(unknown)}")
    status = raw.get("status")
    if status not in (Status.XFAIL, Status.SKIP):
        raise ExpectationsError(f'{where}: status must be "xfail" or "skip", not {status!r}')
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectationsError(f"{where}: reason is required (a non-empty string)")
    issue = raw.get("issue")
    if issue is not None and not isinstance(issue, str):
        raise ExpectationsError(f"{where}: issue must be a string")
    return Entry(entry_id, Status(status), reason, issue)


def apply_expectation(result: CaseResult, entry: Entry | None) -> CaseResult:
    """Turn a raw verdict into the final one under a known-failure entry (strict)."""
    if entry is None or result.status is Status.SKIP:
        return result
    if entry.status is Status.SKIP:
        return CaseResult(result.id, Status.SKIP, reason=entry.reason)
    if result.status is Status.PASS:
        reason = f"listed as xfail ({entry.reason}) but passed: remove the entry"
        return dataclasses.replace(result, status=Status.XPASS, reason=reason)
    if result.status in _UNSUCCESSFUL:
        reason = entry.reason
        if result.status is not Status.FAIL:
            reason = f"{entry.reason} [{result.status}: {result.reason}]"
        return dataclasses.replace(result, status=Status.XFAIL, reason=reason)
    return result
