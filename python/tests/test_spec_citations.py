"""Every rule the repository cites resolves to a section of its own specification.

The scanner is ``tools/spec_citations.py`` (its docstring says what a citation is and where
it must resolve; run it to list them). These tests check the checker on samples, then run it
over the checkout.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from checkout import require_checkout

ROOT = require_checkout()
"""The checkout scanned (``HARNESSWEAVER_CHECKOUT`` or the one this file is in)."""


def _load_tool() -> ModuleType:
    path = ROOT / "tools" / "spec_citations.py"
    spec = importlib.util.spec_from_file_location("spec_citations", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool  # its dataclasses look their module up
    spec.loader.exec_module(tool)
    return tool


tool = _load_tool()
SPEC, INTERPRETING = tool.SPEC, tool.INTERPRETING
citations_in, read_spec, project_rulings = tool.citations_in, tool.read_spec, tool.project_rulings
unresolved, slug, all_citations = tool.unresolved, tool.slug, tool.all_citations
_report = tool.report
_FENCE = tool.FENCE

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


def test_every_citation_resolves_to_a_section_of_the_spec() -> None:
    spec = read_spec((ROOT / SPEC).read_text("utf-8"))
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    citations = all_citations(ROOT)
    assert len(citations) > 1000, "the scan found almost nothing: are the paths right?"
    missing = unresolved(citations, spec, rulings)
    assert not missing, "citations of ids that docs/spec/hook-bus.md lacks:\n" + _report(missing)


def test_every_id_a_case_may_cite_is_a_section() -> None:
    schema = json.loads((ROOT / "conformance/schema/case.schema.json").read_text("utf-8"))
    ids: list[str] = schema["$defs"]["rule"]["enum"]
    spec = read_spec((ROOT / SPEC).read_text("utf-8"))
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    missing = [
        i for i in ids if i.lower() not in spec.anchors or (i[0] == "I" and i not in rulings)
    ]
    assert not missing


def test_the_spec_indexes_every_project_ruling_and_no_other() -> None:
    text = (ROOT / SPEC).read_text("utf-8")
    rulings = project_rulings((ROOT / INTERPRETING).read_text("utf-8"))
    assert rulings, "no rulings found in INTERPRETING.md §10"
    indexed = [f"I{n}" for n in re.findall(r"<a id=\"i(\d+)\"></a>", text)]
    assert indexed == rulings


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


def test_the_command_lists_what_is_unresolved_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs" / "spec").mkdir(parents=True)
    (tmp_path / "conformance").mkdir()
    (tmp_path / SPEC).write_text('<a id="rule-2"></a>\n## Rule 2. Onion order\n', "utf-8")
    (tmp_path / INTERPRETING).write_text("## 10. Rulings of this project\n", "utf-8")
    (tmp_path / "README.md").write_text("Bands (rule 2); durations (ruling 16).\n", "utf-8")
    assert tool.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.endswith("1 unresolved\nREADME.md:1: 'ruling 16' cites ruling-16\n"), out
    (tmp_path / "README.md").write_text("Bands (rule 2).\n", "utf-8")
    assert tool.main(["--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith("0 unresolved\n")


def test_the_command_passes_on_the_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main(["--root", str(ROOT)]) == 0, capsys.readouterr().out
