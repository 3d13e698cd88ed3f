"""tools/check_snippets.py, on pages made for the test: a bad block of each kind is caught and
named by page and line; a marked illustration is not checked; a marker without a reason, or
not before a block, is refused.

The mypy and tsc checks need those tools (the ``docs`` group, a built ts-runner): where they
are absent those tests skip, except under ``nox -s docs``, which sets
``HARNESSWEAVER_REQUIRE_SNIPPET_TOOLS`` so that they fail instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType

import pytest
from checkout import require_checkout

ROOT = require_checkout()
REQUIRED = os.environ.get("HARNESSWEAVER_REQUIRE_SNIPPET_TOOLS") == "1"


def _load() -> ModuleType:
    path = ROOT / "tools" / "check_snippets.py"
    spec = importlib.util.spec_from_file_location("check_snippets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_snippets"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


cs = _load()


def _needs(tool: str, present: bool) -> None:
    if not present:
        if REQUIRED:
            pytest.fail(f"{tool} is needed here (HARNESSWEAVER_REQUIRE_SNIPPET_TOOLS=1)")
        pytest.skip(f"{tool} is not available to this Python")


def _check(page: str) -> list[str]:
    blocks, problems = cs.snippets(page, "page.md")
    return [str(p) for p in [*problems, *cs.check(blocks)]]


def test_blocks_are_found_with_their_lines_languages_and_markers() -> None:
    page = (
        "# Title\n"  # 1
        "\n"  # 2
        "```python\n"  # 3
        "x = 1\n"  # 4
        "```\n"  # 5
        "- in a list:\n"  # 6
        "  <!-- snippet: illustration: a fragment -->\n"  # 7
        "  ~~~~yaml\n"  # 8
        "  a: 1\n"  # 9
        "  ```\n"  # 10: not the closing fence (another kind, shorter)
        "  ~~~~\n"  # 11
    )
    blocks, problems = cs.snippets(page, "page.md")
    assert problems == []
    assert [(b.line, b.lang, b.marker, b.reason) for b in blocks] == [
        (3, "python", None, None),
        (8, "yaml", "illustration", "a fragment"),
    ]
    assert blocks[1].code == "a: 1\n```\n"


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- snippet: illustration -->", "needs a reason"),
        ("<!-- snippet: illustration:   -->", "needs a reason"),
        ("<!-- snippet: skip: because -->", "unknown snippet marker 'skip'"),
        ("<!-- snippet: illustration: why --> and text", "alone on its line"),
    ],
)
def test_a_wrong_marker_is_refused(marker: str, message: str) -> None:
    _, problems = cs.snippets(f"{marker}\n```json\n{{}}\n```\n", "page.md")
    assert len(problems) == 1 and message in str(problems[0]), problems


def test_a_marker_not_right_before_a_block_is_refused() -> None:
    _, problems = cs.snippets("<!-- snippet: illustration: why -->\n\n```json\n{}\n```\n", "p.md")
    assert [str(p) for p in problems] == [
        "p.md:1: a snippet marker must be right before a fenced block"
    ]


def test_bad_json_is_caught_and_an_illustration_is_not_checked() -> None:
    page = (
        '```json\n{"a": 1,}\n```\n'  # 1-3: a trailing comma
        '```json\n{"a": 1}\n{"b": 2}\n```\n'  # 4-7: JSONL, fine
        "<!-- snippet: illustration: values elided -->\n"  # 8
        '```json\n{"a": …}\n```\n'  # 9-11: not checked
    )
    problems = _check(page)
    assert len(problems) == 1 and problems[0].startswith("page.md:2: JSON:"), problems


def test_a_shell_block_that_does_not_parse_is_caught() -> None:
    problems = _check("```sh\ngit clone <this repository> && cd x\n```\n")
    assert len(problems) == 1 and problems[0].startswith("page.md:1: bash -n:"), problems
    assert _check("```sh\npip install '.[mcp]'\n```\n") == []


def test_a_harness_spec_the_loader_refuses_is_caught() -> None:
    bad = "```yaml\nmiddleware:\n  - {use: harnessweaver.tool_allowlist, id: t, allow: 3}\n```\n"
    problems = _check(bad)
    assert len(problems) == 1 and problems[0].startswith("page.md:1: harness spec refused"), (
        problems
    )
    assert "allow" in problems[0]
    good = "```yaml\nmiddleware:\n  - {use: harnessweaver.tool_allowlist, id: t, allow: [a]}\n```\n"
    assert _check(good) == []


def test_a_task_of_a_spec_is_loaded_too() -> None:
    page = (
        "```yaml\ntasks:\n  t:\n    guardrails:\n      tool.before:\n"
        "        - {use: harnessweaver.no_such_thing}\n```\n"
    )
    problems = _check(page)
    assert len(problems) == 1 and "no_such_thing" in problems[0], problems


def test_other_yaml_is_parsed_only() -> None:
    assert _check("```yaml\non: push\njobs: {}\n```\n") == []
    assert len(_check("```yaml\na: [1\n```\n")) == 1


def test_cedar_policies_and_schemas_that_do_not_parse_are_caught() -> None:
    _needs("cedarpy", importlib.util.find_spec("cedarpy") is not None)
    bad = "```cedar\npermit(principal, action, resource) when { x };\n```\n"
    problems = _check(bad)
    assert len(problems) == 1 and problems[0].startswith("page.md:1: Cedar policies:"), problems
    assert _check("```cedar\nforbid(principal, action, resource);\n```\n") == []
    schema = "```cedarschema\nentity User in;\n```\n"
    problems = _check(schema)
    assert len(problems) == 1 and problems[0].startswith("page.md:1: Cedar schema:"), problems
    assert _check("```cedarschema\nentity User;\n```\n") == []


def test_a_file_block_is_checked_and_may_not_leave_the_example() -> None:
    _needs("cedarpy", importlib.util.find_spec("cedarpy") is not None)
    outside = (
        "<!-- snippet: file: ../../escape.cedar -->\n"
        "```cedar\nforbid(principal, action, resource);\n```\n"
    )
    problems = _check(outside)
    assert problems == ["page.md:2: file: '../../escape.cedar' is outside the example"], problems
    bad = "<!-- snippet: file: p.cedar -->\n```cedar\npermit(\n```\n"
    problems = _check(bad)
    assert len(problems) == 1 and problems[0].startswith("page.md:2: Cedar policies:"), problems


def test_a_python_block_that_fails_mypy_or_its_run_is_caught() -> None:
    _needs("mypy", importlib.util.find_spec("mypy") is not None)
    page = (
        "```python\n"  # 1
        "def f(x: int) -> str:\n"  # 2
        "    return x\n"  # 3: a type error
        "```\n"
        "```python\n"  # 5
        'raise SystemExit("boom")\n'  # 6: type-checks, fails when run
        "```\n"
        "<!-- snippet: no-run: would fail if run -->\n"  # 8
        "```python\n"
        'raise SystemExit("boom")\n'
        "```\n"
        "```python\n"  # 12
        "import harnessweaver as hw\n"
        "print(hw.HookBus())\n"
        "```\n"
    )
    problems = _check(page)
    assert len(problems) == 2, problems
    assert problems[0].startswith("page.md:3: mypy: Incompatible return value type"), problems
    assert problems[1].startswith("page.md:5: exited 1"), problems


def test_a_python_syntax_error_does_not_hide_the_other_blocks_errors() -> None:
    _needs("mypy", importlib.util.find_spec("mypy") is not None)
    page = "```python\ndef (\n```\n```python\nx: int = 'a'\n```\n"
    problems = _check(page)
    assert problems[0].startswith("page.md:2: mypy:") and "[syntax]" in problems[0], problems
    assert problems[-1].startswith("page.md:5: mypy: Incompatible types in assignment"), problems


def test_a_typescript_block_is_checked_against_the_built_package() -> None:
    ts = ROOT / "ts-runner"
    built = (ts / "dist" / "index.d.ts").exists() and (
        ts / "node_modules" / ".bin" / "tsc"
    ).exists()
    _needs("a built ts-runner (npm ci && npm run build)", built)
    page = (
        "```ts\n"  # 1
        'import { HookBus } from "harnessweaver";\n'
        "const bus: HookBus = new HookBus();\n"
        "const n: number = bus;\n"  # 4: a type error
        "```\n"
    )
    problems = _check(page)
    assert len(problems) == 1 and problems[0].startswith("page.md:4: tsc: TS2322"), problems
    fine = '```ts\nimport { HookBus } from "harnessweaver";\nnew HookBus();\n```\n'
    assert _check(fine) == []


def test_a_python_block_runs_beside_the_spec_its_page_showed_before_it() -> None:
    _needs("mypy", importlib.util.find_spec("mypy") is not None)
    load = (
        "```python\n"
        "import harnessweaver as hw\n"
        'names = [entry.name for entry in hw.load("harness.yaml").entries]\n'
        'assert names == ["only_x"], names\n'
        "```\n"
    )
    spec = "```yaml\nmiddleware:\n  - {use: harnessweaver.tool_allowlist, id: only_x, allow: [x]}\n"
    spec += "```\n"
    assert _check(spec + load) == []
    # without it, the folder's harness.yaml is the running example's (examples/refunds)
    problems = _check(load)
    assert len(problems) == 1 and problems[0].startswith("page.md:1: exited 1"), problems
