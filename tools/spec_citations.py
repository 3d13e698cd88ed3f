"""Every rule the repository cites resolves to a section of its own specification.

Code comments, error messages, docs and corpus cases cite the bus's rules by id: ``rule 2``,
``rules 1-2``, ``ruling 15``, ``rulings 11-12`` (hyphen or en dash), ``ruling-15``,
``detail-trace``, ``R2``, ``S8``, ``I14``, ``I22-I26``. Each of them must name a section of
``docs/spec/hook-bus.md`` (an ``<a id="...">`` anchor, or a heading, whose id is the rule id in
lower case); a project ruling ``I<n>`` must in addition be a ruling of
``conformance/INTERPRETING.md`` §10, which holds its full text. Quoted section titles
(``hook-bus.md, "Where bands come from"``) and links into the specification
(``hook-bus.md#ruling-15``) must name a heading or an anchor of it too.

    python tools/spec_citations.py [--root DIR]

prints the citations it found, counted per form and per id, and the ones that resolve
nowhere; it exits 1 when there is one. ``python/tests/test_spec_citations.py`` runs the same
checks (and checks the checker).
"""

from __future__ import annotations

import argparse
import bisect
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout this file is in."""
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
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


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
    prose = FENCE.sub("", text)
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


def report(missing: Iterable[Citation]) -> str:
    """One line per citation: ``path:line: 'text' cites id``."""
    return "\n".join(f"{c.path}:{c.line}: {c.text!r} cites {c.id}" for c in missing)


# --- the command -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Print the citations under ``--root`` (this checkout by default), counted per form and
    per id, then the unresolved ones; 1 when there is one."""
    parser = argparse.ArgumentParser(description="Check that every rule citation resolves.")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to scan")
    root: Path = parser.parse_args(argv).root
    found = all_citations(root)
    print(f"{len(found)} citations in {len({c.path for c in found})} files")
    for form, count in Counter(c.form for c in found).most_common():
        print(f"  {form}: {count}")
    by_id = Counter(c.id for c in found if c.form not in ("section", "link"))
    print("  per id:", ", ".join(f"{i} {n}" for i, n in sorted(by_id.items())))
    lost = unresolved(
        found,
        read_spec((root / SPEC).read_text("utf-8")),
        project_rulings((root / INTERPRETING).read_text("utf-8")),
    )
    print(f"{len(lost)} unresolved")
    if lost:
        print(report(lost))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
