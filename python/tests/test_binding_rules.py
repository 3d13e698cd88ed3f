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
