"""The PyO3 binding holds no rule of the bus (issue 17): every rule id its sources cite is also
cited in the Rust core's sources, where the rule is implemented. A reader runs this to check.

Rule ids as the code cites them: ``ruling 15`` (``rulings 4, 5, 8``, ``rulings 16-18``),
``rule 1``/``rule-1``, and ``I26``, ``R2``, ``S8`` (docs/spec/hook-bus.md and
conformance/INTERPRETING.md §10 define them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDING = ROOT / "crates" / "harnessweaver-py" / "src"
CORE = ROOT / "crates" / "harnessweaver-core" / "src"

_DASH = "-\u2013"  # a hyphen or an en dash: "rulings 16-18", "rules 1\u20132"
_NUMBERS = rf"(\d+(?:\s*(?:[{_DASH},]|and)\s*\d+)*)"
_RULING = re.compile(rf"\brulings?\s+{_NUMBERS}", re.IGNORECASE)
_RULE = re.compile(rf"\brules?[\s-]+{_NUMBERS}\b")
_ID = re.compile(r"(?<![\w/.-])([IRS]\d{1,2})(?![\w-])")


def _numbers(spec: str) -> set[int]:
    found: set[int] = set()
    for part in re.split(r"\s*(?:,|and)\s*", spec):
        if re.search(f"[{_DASH}]", part):
            first, last = re.split(rf"\s*[{_DASH}]\s*", part)
            found |= set(range(int(first), int(last) + 1))
        elif part.strip():
            found.add(int(part))
    return found


def cited(text: str) -> set[str]:
    """The rule ids `text` cites, normalised: ``ruling 15``, ``rule 1``, ``I26``."""
    ids: set[str] = set()
    for match in _RULING.finditer(text):
        ids |= {f"ruling {n}" for n in _numbers(match.group(1))}
    for match in _RULE.finditer(text):
        ids |= {f"rule {n}" for n in _numbers(match.group(1))}
    ids |= set(_ID.findall(text))
    return ids


def cited_in(directory: Path) -> dict[str, list[str]]:
    """Each rule id cited under `directory`, with the files citing it."""
    where: dict[str, list[str]] = {}
    for path in sorted(directory.rglob("*.rs")):
        for rule in cited(path.read_text(encoding="utf-8")):
            where.setdefault(rule, []).append(path.name)
    return where


def test_the_citation_reader_reads_every_form() -> None:
    text = "rulings 4, 5 and 8; rulings 16-18; rule-1 and rule 2; (ruling 15); I26, R2, S8."
    assert cited("rules 1\u20132") == {"rule 1", "rule 2"}
    assert cited(text) == {
        "ruling 4",
        "ruling 5",
        "ruling 8",
        "ruling 16",
        "ruling 17",
        "ruling 18",
        "ruling 15",
        "rule 1",
        "rule 2",
        "I26",
        "R2",
        "S8",
    }
    # Not rule ids: hook names, paths, type names, identifiers.
    assert cited("tool.before/I26x, rfc8785 I2C A1 PyO3 S8_X R2-D2 x86") == set()


@pytest.mark.skipif(not BINDING.is_dir(), reason="needs the repository's Rust sources")
def test_every_rule_the_binding_cites_is_implemented_in_the_core() -> None:
    binding = cited_in(BINDING)
    core = cited_in(CORE)
    assert binding, "the binding cites rules: the reader must find them"
    missing = {rule: files for rule, files in binding.items() if rule not in core}
    assert not missing, (
        "rules cited in crates/harnessweaver-py but in no source of crates/harnessweaver-core "
        f"(the binding holds no rule of the bus, issue 17): {missing}"
    )


# Unsafe code in one place (issue 17): raw CPython calls and raw-pointer conversions live in
# cpython.rs behind safe functions; gil_cell.rs is the GIL-guarded cell's own small abstraction.
# Anywhere else the only `unsafe` allowed is an `unsafe impl Plain` that cell asks for, under a
# `// SAFETY:` comment saying why the impl holds.
UNSAFE_MODULES = {"cpython.rs", "gil_cell.rs"}
_UNSAFE = re.compile(r"\bunsafe\b")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_PLAIN_IMPL = re.compile(r"^\s*unsafe impl(?:<[^>]*>)? Plain for [^{]+\{\}\s*$")


def unsafe_lines(text: str) -> list[tuple[int, str]]:
    """The lines of Rust `text` whose code (not comments, not strings) says `unsafe`."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        code = _STRING.sub('""', line).split("//", 1)[0]
        if _UNSAFE.search(code):
            found.append((number, line))
    return found


def stray_unsafe(text: str) -> list[tuple[int, str]]:
    """The `unsafe` lines of a module other than UNSAFE_MODULES that the rule does not allow:
    all but an `unsafe impl Plain` directly under a `// SAFETY:` comment."""
    lines = text.splitlines()
    stray = []
    for number, line in unsafe_lines(text):
        above = number - 2
        while above >= 0 and lines[above].strip().startswith("//"):
            if lines[above].strip().startswith("// SAFETY:"):
                break
            above -= 1
        documented = above >= 0 and lines[above].strip().startswith("// SAFETY:")
        if not (_PLAIN_IMPL.match(line) and documented):
            stray.append((number, line.strip()))
    return stray


def test_the_unsafe_reader_tells_code_from_comments() -> None:
    text = (
        "// an unsafe word in a comment\n"
        'let s = "unsafe in a string"; // and unsafe here\n'
        "let n = unsafe { ffi::Py_REFCNT(p) };\n"
        "// SAFETY: cloning an `Arc` runs no Python code.\n"
        "// (a second line)\n"
        "unsafe impl Plain for Option<Plan> {}\n"
        "unsafe impl Plain for Undocumented {}\n"
        "// SAFETY: a Sync impl is not a Plain impl.\n"
        "unsafe impl Sync for Cell {}\n"
    )
    assert [n for n, _ in unsafe_lines(text)] == [3, 6, 7, 9]
    assert [n for n, _ in stray_unsafe(text)] == [3, 7, 9]


@pytest.mark.skipif(not BINDING.is_dir(), reason="needs the repository's Rust sources")
def test_unsafe_code_is_only_in_cpython_rs_and_gil_cell_rs() -> None:
    names = {path.name for path in BINDING.rglob("*.rs")}
    assert names >= UNSAFE_MODULES, "the modules that hold the binding's unsafe code moved"
    for name in UNSAFE_MODULES:
        text = (BINDING / name).read_text(encoding="utf-8")
        assert unsafe_lines(text), f"{name} holds unsafe code: the reader must find it"
    stray = {
        path.name: found
        for path in sorted(BINDING.rglob("*.rs"))
        if path.name not in UNSAFE_MODULES
        and (found := stray_unsafe(path.read_text(encoding="utf-8")))
    }
    assert not stray, (
        "unsafe code outside cpython.rs and gil_cell.rs (issue 17: raw CPython calls go behind "
        f"safe functions in cpython.rs; elsewhere only a documented `unsafe impl Plain`): {stray}"
    )
