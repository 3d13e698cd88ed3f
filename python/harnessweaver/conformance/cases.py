"""Find the conformance corpus and load its cases (INTERPRETING.md §1).

Loading checks what the driver relies on (ids, required keys, feature lists, matcher objects)
and fails with a message naming the file and the case; the full shape of a case is the
business of ``schema/case.schema.json``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessweaver.conformance.canonical import parse_json
from harnessweaver.conformance.matchers import matcher_problems

__all__ = [
    "CASE_ID",
    "CHECKOUT_CORPUS",
    "CORPUS_ENV",
    "PACKAGE_CORPUS",
    "REQUIRED_KEYS",
    "Case",
    "CaseLoadError",
    "CorpusNotFound",
    "Selection",
    "corpus_version",
    "find_corpus",
    "load_cases",
    "select",
]

CORPUS_ENV = "HARNESSWEAVER_CORPUS"
CASE_ID = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
REQUIRED_KEYS = ("id", "description", "given", "when", "then")
_MARKERS = ("VERSION", "catalogue.json")
CHECKOUT_CORPUS = Path(__file__).resolve().parents[3] / "conformance"
"""The corpus of a source checkout (``<repo>/conformance``)."""
PACKAGE_CORPUS = Path(__file__).resolve().parents[1] / "corpus"
"""The corpus the package ships (``harnessweaver/corpus``), the last resort: in a checkout a
symlink to ``conformance/``, in a wheel or sdist a copy of it made by the build, so an installed
package runs the corpus of its own release (docs/packaging.md, "The corpus")."""
_SHAPES: dict[str, type] = {"given": dict, "when": list, "then": dict}


class CaseLoadError(Exception):
    """A case file that the driver cannot use."""


class CorpusNotFound(Exception):
    """No corpus was given and none could be found."""


@dataclass(frozen=True, slots=True)
class Case:
    """One case as written, with the file it came from."""

    id: str
    data: Mapping[str, Any]
    source: Path

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.data.get("features", ()))

    @property
    def then(self) -> Mapping[str, Any]:
        value: Mapping[str, Any] = self.data["then"]
        return value


@dataclass(frozen=True, slots=True)
class Selection:
    """Where the cases and the known-failure lists come from."""

    cases_dir: Path
    expectations_dir: Path | None
    corpus_version: str | None
    corpus: Path | None = None


def _is_corpus(path: Path) -> bool:
    return path.is_dir() and all((path / marker).is_file() for marker in _MARKERS)


def find_corpus(
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    checkout: Path | None = None,
) -> Path:
    """The default corpus: ``$HARNESSWEAVER_CORPUS``, else the nearest ``conformance``
    directory (with ``VERSION`` and ``catalogue.json``) walking up from ``cwd``, else the
    source checkout's ``conformance/``, else the one installed with the package (``checkout``
    replaces these last two)."""
    environ = os.environ if environ is None else environ
    configured = environ.get(CORPUS_ENV)
    if configured:
        path = Path(configured)
        if not path.is_dir():
            raise CorpusNotFound(f"{CORPUS_ENV}={configured} is not a directory")
        return path
    start = (cwd or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        for candidate in (directory, directory / "conformance"):
            if candidate.name == "conformance" and _is_corpus(candidate):
                return candidate
    last = (CHECKOUT_CORPUS, PACKAGE_CORPUS) if checkout is None else (checkout,)
    for candidate in last:
        if _is_corpus(candidate):
            return candidate
    raise CorpusNotFound(
        "no conformance corpus found: set "
        f"{CORPUS_ENV}, run from inside a checkout, or pass --cases DIR"
    )


def corpus_version(corpus: Path) -> str | None:
    """The text of ``corpus/VERSION``, or ``None`` when there is none."""
    path = corpus / "VERSION"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def select(
    cases: Path | None,
    expectations: Path | None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Selection:
    """Resolve ``--cases``/``--expectations`` against the default corpus.

    With ``--cases`` the corpus's known-failure lists are not applied (only an explicit
    ``--expectations``); the corpus version is read from ``DIR`` or, when ``DIR`` is a
    corpus's ``cases/``, from its parent.
    """
    if cases is not None:
        if not cases.is_dir():
            raise CaseLoadError(f"--cases {cases}: not a directory")
        corpus = next((path for path in (cases, cases.parent) if _is_corpus(path)), None)
        version = corpus_version(corpus) if corpus is not None else None
        return Selection(cases, expectations, version, corpus)
    corpus = find_corpus(cwd, environ)
    default_expectations = corpus / "expectations"
    if expectations is None and default_expectations.is_dir():
        expectations = default_expectations
    return Selection(corpus / "cases", expectations, corpus_version(corpus), corpus)


def load_cases(directory: Path) -> list[Case]:
    """Every case under ``directory`` (``*.json`` files with a ``cases`` list), sorted by id."""
    if not directory.is_dir():
        raise CaseLoadError(f"{directory}: no such directory of cases")
    seen: dict[str, Case] = {}
    files = 0
    for path in sorted(directory.rglob("*.json")):
        document = _read(path)
        if not (isinstance(document, dict) and isinstance(document.get("cases"), list)):
            continue
        files += 1
        for index, raw in enumerate(document["cases"]):
            case = _check_case(raw, path, index)
            if case.id in seen:
                raise CaseLoadError(
                    f"{path}: case {case.id!r} duplicates the id of a case in "
                    f"{seen[case.id].source}"
                )
            seen[case.id] = case
    if files == 0:
        raise CaseLoadError(f'{directory}: no case files (JSON objects with a "cases" list)')
    return [seen[case_id] for case_id in sorted(seen)]


def _read(path: Path) -> Any:
    try:
        return parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CaseLoadError(f"{path}: cannot read JSON: {exc}") from exc


def _check_case(raw: Any, path: Path, index: int) -> Case:
    if not isinstance(raw, dict):
        raise CaseLoadError(f"{path}: cases[{index}] is not an object")
    case_id = raw.get("id")
    name = f"case {case_id!r}" if isinstance(case_id, str) else f"cases[{index}]"
    missing = [key for key in REQUIRED_KEYS if key not in raw]
    if missing:
        raise CaseLoadError(f"{path}: {name} lacks required key(s): {', '.join(missing)}")
    if not isinstance(case_id, str) or not CASE_ID.match(case_id):
        raise CaseLoadError(f"{path}: {name}: id must match {CASE_ID.pattern}")
    for problem in _problems(raw):
        raise CaseLoadError(f"{path}: {name}: {problem}")
    return Case(case_id, raw, path)


def _problems(raw: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if not isinstance(raw["description"], str) or not raw["description"].strip():
        problems.append("description must be a non-empty string")
    for key, shape in _SHAPES.items():
        if not isinstance(raw[key], shape):
            problems.append(f"{key} must be a JSON {'object' if shape is dict else 'array'}")
    features = raw.get("features", [])
    if not (isinstance(features, list) and all(isinstance(tag, str) for tag in features)):
        problems.append("features must be a list of strings")
    given = raw["given"]
    if isinstance(given, dict) and "harness" in given and "harness-spec" not in features:
        problems.append("a case with given.harness carries the feature harness-spec (§8)")
    if isinstance(given, dict) and "approvals" in given and "approvals" not in features:
        problems.append("a case with given.approvals carries the feature approvals (§8)")
    then = raw["then"]
    if isinstance(then, dict):
        error = then.get("error")
        found = error.get("problems", []) if isinstance(error, dict) else []
        for i, problem in enumerate(found if isinstance(found, list) else []):
            message = problem.get("message") if isinstance(problem, dict) else None
            if isinstance(message, str):
                problems.append(
                    f"then.error.problems[{i}].message: free text, compared through a "
                    "matcher only (§6.4)"
                )
        steps = then.get("approvals", [])
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            refused = step.get("refused") if isinstance(step, dict) else None
            if isinstance(refused, dict) and isinstance(refused.get("message"), str):
                problems.append(
                    f"then.approvals[{i}].refused.message: free text, compared through a "
                    "matcher only (§6.4)"
                )
        excludes = then.get("excludes", [])
        if not (isinstance(excludes, list) and all(isinstance(s, str) for s in excludes)):
            problems.append("then.excludes must be a list of strings")
        problems.extend(f"then{at}: {problem}" for at, problem in matcher_problems(then))
    return problems
