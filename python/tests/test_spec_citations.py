"""Every rule the repository cites resolves to a section of its own specification.

Code comments, error messages, docs and corpus cases cite the bus's rules by id: ``rule 2``,
``rules 1-2``, ``ruling 15``, ``rulings 11-12`` (hyphen or en dash), ``ruling-15``,
``detail-trace``, ``R2``, ``S8``, ``I14``, ``I22-I26``. Each of them must name a section of
``docs/spec/hook-bus.md`` (an ``<a id="...">`` anchor, or a heading, whose id is the rule id in
lower case); a project ruling ``I<n>`` must in addition be a ruling of
``conformance/INTERPRETING.md`` §10, which holds its full text. Quoted section titles
(``hook-bus.md, "Where bands come from"``) and links into the specification
(``hook-bus.md#ruling-15``) must name a heading or an anchor of it too.

Run as a script (``python python/tests/test_spec_citations.py``) it prints the citations it
found, counted per form and per id, and the ones that resolve nowhere.
"""

from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from checkout import CHECKOUT

ROOT = CHECKOUT or Path(__file__).resolve().parents[2]
"""The checkout scanned (``HARNESSWEAVER_CHECKOUT`` or the one this file is in)."""
SPEC = Path("docs/spec/hook-bus.md")
INTERPRETING = Path("conformance/INTERPRETING.md")

SCANNED_DIRS = (
    "python/harnessweaver",
    "crates/harnessweaver-core/src",
    "crates/harnessweaver-py/src",
    "ts-runner/src",
    "docs",
    "conformance/cases",
)
"""Trees whose files are scanned (``crates/*/src`` is spelled out: a new crate adds a line)."""
SCANNED_FILES = ("README.md", "conformance/INTERPRETING.md")
"""Single files scanned; ``conformance/*.md`` is added by :func:`scanned_files`."""
SUFFIXES = frozenset({".py", ".pyi", ".rs", ".ts", ".md", ".json"})
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "dist", "target"})

# --- finding citations -----------------------------------------------------------------------

_NUMBER = r"\d+(?:\s*[-\u2013]\s*\d+)?"
_SEPARATOR = r"(?:\s*,\s*|\s+and\s+|\s+or\s+)"
PROSE = re.compile(
    rf"\b(?P<word>[Rr]ul(?:e|ing)s?)\s+(?P<numbers>{_NUMBER}(?:{_SEPARATOR}{_NUMBER})*)\b"
)
"""``rule 2``, ``rules 1-2``, ``Ruling 16``, ``rulings 4, 5, 8``, ``rulings 4-5, 8``."""
DASHED = re.compile(r"(?<![\w-])(?P<id>(?:rule|ruling)-\d+|detail-[a-z]+(?:-[a-z]+)*)\b")
"""The ids of the corpus's ``rules`` lists, also used by error objects: ``ruling-15``."""
LETTERED = re.compile(
    r"(?<![\w./#-])(?P<letter>[RSI])(?P<first>\d+)(?:\s*[-\u2013]\s*(?P=letter)(?P<last>\d+))?(?![\w…])"
)
"""``R2``, ``S8``, ``I14``, ``[R2](#r2)``, and ranges such as ``I22-I26``. Not ``I/O``, not
``0x1F``, not a name such as ``S8_MAX`` or ``path.I1``, not ``S1…`` (a placeholder)."""
SECTION = re.compile(r"hook-bus\.md`?(?:'s)?,\s*\"(?P<title>[^\"]+)\"")
"""``hook-bus.md, "Where bands come from"``: a section cited by its title."""
LINK = re.compile(r"spec/hook-bus\.md#(?P<anchor>[\w-]+)")
"""A link to a section: ``docs/spec/hook-bus.md#ruling-15``."""

_COMMENT_LEAD = re.compile(r"^\s*(?:/\*\*|///|//!|//|#+|\*(?=\s|$)|>)?\s?")
_FORMAT_EXAMPLE = re.compile(r"`[\[{][^`\n]*`")
"""In Markdown, an inline code span that is a JSON object or list (``{"concurrent": [S1, S2,
...]}``): an example of a format, not prose; it is blanked out before searching."""


@dataclass(frozen=True)
class Citation:
    path: str
    line: int
    form: str
    """``prose`` (rule N, rulings N-M), ``dashed`` (ruling-N, detail-x), ``R/S`` or ``I``,
    ``section`` (a quoted title) or ``link`` (an anchor)."""
    text: str
    """As written."""
    id: str
    """The id it cites: ``rule-2``, ``ruling-15``, ``detail-trace``, ``R2``, ``I14``; for a
    section, its title; for a link, the anchor."""


def _expand(numbers: str) -> Iterator[int]:
    for part in re.split(_SEPARATOR, numbers):
        first, _, last = re.sub(r"\s", "", part).replace("\u2013", "-").partition("-")
        if last and int(first) <= int(last):
            yield from range(int(first), int(last) + 1)
        else:
            yield int(first)
            if last:
                yield int(last)


def _joined(text: str, markdown: bool) -> tuple[str, list[int]]:
    """The text with each line's comment lead (``//!``, ``///``, ``#``, `` * ``, ``>``)
    removed and the lines joined by one space, so a citation wrapped across comment lines
    (``rulings 4,`` / ``/// 5, 8``) reads as one; and where each line starts in it."""
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for line in text.split("\n"):
        line = _COMMENT_LEAD.sub("", line, count=1)
        if markdown:
            line = _FORMAT_EXAMPLE.sub(lambda m: " " * len(m.group()), line)
        starts.append(offset)
        parts.append(line)
        offset += len(line) + 1
    return " ".join(parts), starts


def citations_in(path: str, text: str) -> list[Citation]:
    """Every citation in one file's text, in order."""
    joined, starts = _joined(text, markdown=path.endswith(".md"))
    found: list[tuple[int, Citation]] = []

    def add(at: int, form: str, written: str, cited: str) -> None:
        line = bisect.bisect_right(starts, at)
        found.append((at, Citation(path, line, form, written, cited)))

    for m in PROSE.finditer(joined):
        kind = "ruling" if m["word"].lower().startswith("ruling") else "rule"
        for n in _expand(m["numbers"]):
            add(m.start(), "prose", m.group(), f"{kind}-{n}")
    for m in DASHED.finditer(joined):
        add(m.start(), "dashed", m.group(), m["id"])
    for m in LETTERED.finditer(joined):
        first = int(m["first"])
        last = int(m["last"]) if m["last"] else first
        form = "I" if m["letter"] == "I" else "R/S"
        for n in range(first, max(first, last) + 1):
            add(m.start(), form, m.group(), f"{m['letter']}{n}")
    for m in SECTION.finditer(joined):
        add(m.start(), "section", m.group(), re.sub(r"\s+", " ", m["title"]))
    for m in LINK.finditer(joined):
        add(m.start(), "link", m.group(), m["anchor"])
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def scanned_files(root: Path) -> Iterator[Path]:
    """The files :data:`SCANNED_DIRS` and :data:`SCANNED_FILES` name, plus
    ``conformance/*.md``, relative to ``root``, each once."""
    seen: set[Path] = set()
    candidates: list[Path] = [root / name for name in SCANNED_FILES]
    candidates += sorted((root / "conformance").glob("*.md"))
    for directory in SCANNED_DIRS:
        candidates += sorted(
            p
            for p in (root / directory).rglob("*")
            if p.is_file()
            and p.suffix in SUFFIXES
            and not SKIPPED_DIRS.intersection(p.relative_to(root).parts)
        )
    for path in candidates:
        relative = path.relative_to(root)
        if path.is_file() and relative not in seen:
            seen.add(relative)
            yield relative


def all_citations(root: Path) -> list[Citation]:
    return [
        citation
        for relative in scanned_files(root)
        for citation in citations_in(relative.as_posix(), (root / relative).read_text("utf-8"))
    ]


# --- what the specification defines ----------------------------------------------------------

_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"(?P<id>[^\"]+)\"\s*>")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)\s*#*\s*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def slug(title: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, markup and punctuation removed,
    spaces to hyphens."""
    title = re.sub(r"<[^>]+>", "", title)
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "").lower()
    kept = [c for c in title if c in " -_" or unicodedata.category(c)[0] in "LNM"]
    return "".join(kept).replace(" ", "-")


@dataclass(frozen=True)
class Spec:
    anchors: frozenset[str]
    """Every ``<a id>`` and heading slug."""
    titles: frozenset[str]
    """Every heading's text, markup removed."""


def read_spec(text: str) -> Spec:
    prose = _FENCE.sub("", text)
    anchors = {m["id"] for m in _ANCHOR.finditer(prose)}
    titles: set[str] = set()
    for m in _HEADING.finditer(prose):
        title = re.sub(r"<[^>]+>", "", m["title"]).replace("`", "").strip()
        titles.add(title)
        anchors.add(slug(m["title"]))
    return Spec(frozenset(anchors), frozenset(titles))


_RULINGS_SECTION = re.compile(r"^## 10\. .*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_RULING = re.compile(r"^(?:<a id=\"i\d+\"></a>\s*)?\*\*I(?P<n>\d+)\.", re.MULTILINE)


def project_rulings(interpreting: str) -> list[str]:
    """The ids of the rulings of INTERPRETING.md §10, in order: each starts a paragraph with
    ``**I<n>. Title.**``, after its anchor ``<a id="i<n>"></a>`` if it has one."""
    section = _RULINGS_SECTION.search(interpreting)
    return [f"I{m['n']}" for m in _RULING.finditer(section.group())] if section else []


def resolves(citation: Citation, spec: Spec, rulings: Iterable[str]) -> bool:
    if citation.form == "section":
        return citation.id in spec.titles
    if citation.form == "link":
        return citation.id in spec.anchors
    if citation.id.startswith("I") and citation.id not in rulings:
        return False
    return citation.id.lower() in spec.anchors


def unresolved(citations: Iterable[Citation], spec: Spec, rulings: Iterable[str]) -> list[Citation]:
    known = frozenset(rulings)
    return [c for c in citations if not resolves(c, spec, known)]


def _report(missing: list[Citation]) -> str:
    return "\n".join(f"{c.path}:{c.line}: {c.text!r} cites {c.id}" for c in missing)


# --- the checker checks ----------------------------------------------------------------------

SAMPLE_SPEC = """\
# A spec

<a id="rule-2"></a>
## Rule 2. Onion order

## ruling-15
Durations.

<a id="r2"></a>
### R2. Baseline fails closed

## Where bands come from

| id | ruling |
|---|---|
| <a id="i3"></a>I3 | hooks |

```
<a id="ruling-99"></a>
# not a heading: inside a fence
```
"""
SAMPLE_INTERPRETING = """\
## 9. The testee protocol
**I9. Not here.** Outside section 10.

## 10. Rulings of this project (I1…)

**I3. Hooks.** Text.

<a id="i4"></a>**I4. Check order.** Text.
"""


def test_the_checker_finds_each_form_of_citation() -> None:
    text = (
        "//! Severity (rule 3, rulings 4, 5 and 8); wrapped (rulings 11\u2013\n"
        "//! 12) and ranged (rules 1-2, I22\u2013I24).\n"
        '"rules": ["ruling-15", "detail-trace", "R2", "S8"]\n'
        '# hook-bus.md, "Where bands\n'
        '# come from" and [R9](docs/spec/hook-bus.md#r9)\n'
    )
    found = [(c.line, c.form, c.id) for c in citations_in("x.rs", text)]
    assert found == [
        (1, "prose", "rule-3"),
        (1, "prose", "ruling-4"),
        (1, "prose", "ruling-5"),
        (1, "prose", "ruling-8"),
        (1, "prose", "ruling-11"),
        (1, "prose", "ruling-12"),
        (2, "prose", "rule-1"),
        (2, "prose", "rule-2"),
        (2, "I", "I22"),
        (2, "I", "I23"),
        (2, "I", "I24"),
        (3, "dashed", "ruling-15"),
        (3, "dashed", "detail-trace"),
        (3, "R/S", "R2"),
        (3, "R/S", "S8"),
        (4, "section", "Where bands come from"),
        (5, "R/S", "R9"),
        (5, "link", "r9"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I/O errors",
        "0x1F and 0xS8",
        "let S8_MAX = 1; path.I1; foo-R2; #r2",
        'start the steps `{"concurrent": [S1, S2, ...]}` and `S1…`',
        "a ruling of its own; the rules of its hook point; step 2 of 3",
        "u8 i8 I8x",
    ],
)
def test_the_checker_ignores_what_is_not_a_citation(text: str) -> None:
    assert citations_in("x.md", text) == []


def test_the_checker_fails_on_an_id_the_spec_lacks() -> None:
    spec = read_spec(SAMPLE_SPEC)
    rulings = project_rulings(SAMPLE_INTERPRETING)
    assert rulings == ["I3", "I4"]
    text = (
        "(rule 2) (ruling 15) R2 I3 [x](spec/hook-bus.md#r2) "
        '(hook-bus.md, "Where bands come from")\n'
        "(rule 7) (ruling 99) R3 S8 I4 I9 I44 [y](spec/hook-bus.md#nowhere) "
        '(hook-bus.md, "Writing middleware")\n'
    )
    missing = unresolved(citations_in("x.py", text), spec, rulings)
    assert all(c.line == 2 for c in missing), _report(missing)
    assert [c.id for c in missing] == [
        "rule-7",
        "ruling-99",  # its anchor is inside a code fence: not a section
        "R3",
        "S8",
        "I4",  # a ruling of INTERPRETING.md, but not in the spec's table
        "I9",  # in the spec's table nowhere, and outside §10 of INTERPRETING.md
        "I44",
        "nowhere",
        "Writing middleware",
    ]


def test_slugs_are_githubs() -> None:
    assert slug("10. Rulings of this project (I1…)") == "10-rulings-of-this-project-i1"
    assert slug("Where bands come from") == "where-bands-come-from"
    assert slug("`detail-trace`: one record per middleware") == (
        "detail-trace-one-record-per-middleware"
    )


needs_checkout = pytest.mark.skipif(
    CHECKOUT is None, reason="reads the source checkout's files (set HARNESSWEAVER_CHECKOUT)"
)


@needs_checkout
def test_every_citation_resolves_to_a_section_of_the_spec() -> None:
    spec = read_spec((ROOT / SPEC).read_text("utf-8"))
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    citations = all_citations(ROOT)
    assert len(citations) > 1000, "the scan found almost nothing: are the paths right?"
    missing = unresolved(citations, spec, rulings)
    assert not missing, "citations of ids that docs/spec/hook-bus.md lacks:\n" + _report(missing)


@needs_checkout
def test_every_id_a_case_may_cite_is_a_section() -> None:
    import json

    schema = json.loads((ROOT / "conformance/schema/case.schema.json").read_text("utf-8"))
    ids: list[str] = schema["$defs"]["rule"]["enum"]
    spec = read_spec((ROOT / SPEC).read_text("utf-8"))
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    missing = [
        i for i in ids if i.lower() not in spec.anchors or (i[0] == "I" and i not in rulings)
    ]
    assert not missing


@needs_checkout
def test_the_spec_indexes_every_project_ruling_and_no_other() -> None:
    text = (ROOT / SPEC).read_text("utf-8")
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    assert rulings, "no rulings found in INTERPRETING.md §10"
    indexed = [f"I{n}" for n in re.findall(r"<a id=\"i(\d+)\"></a>", text)]
    assert indexed == rulings


@needs_checkout
def test_the_specs_links_into_the_repository_resolve() -> None:
    text = (ROOT / SPEC).read_text("utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", _FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (ROOT / SPEC).parent / file if file else ROOT / SPEC
        assert path.exists(), target
        if anchor and path.suffix == ".md":
            assert anchor in read_spec(path.read_text("utf-8")).anchors, target


if __name__ == "__main__":  # python python/tests/test_spec_citations.py
    found = all_citations(ROOT)
    print(f"{len(found)} citations in {len({c.path for c in found})} files")
    for form, count in Counter(c.form for c in found).most_common():
        print(f"  {form}: {count}")
    by_id = Counter(c.id for c in found if c.form not in ("section", "link"))
    print("  per id:", ", ".join(f"{i} {n}" for i, n in sorted(by_id.items())))
    if (ROOT / SPEC).is_file():
        lost = unresolved(
            found,
            read_spec((ROOT / SPEC).read_text("utf-8")),
            project_rulings((ROOT / INTERPRETING).read_text("utf-8")),
        )
        print(f"{len(lost)} unresolved\n{_report(lost)}")
    sys.exit(0)
