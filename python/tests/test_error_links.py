"""Every error names its rule and links to where the rule is written.

The rule id (``ruling-15``, ``I27``) is stable and compared by the corpus; ``link`` is the
section that states it, ``docs/spec/hook-bus.md#<id>`` for a rule of the bus; a traceback
shows ``see <link>`` as a note (PEP 678) while ``str(err)``, the message the corpus compares,
stays as it was.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import pickle
import re
import sys
import tomllib
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from checkout import CORPUS, PACKAGE, require_checkout

import harnessweaver as hw
from harnessweaver.conformance.cases import load_cases
from harnessweaver.conformance.testee import _CaseRun
from harnessweaver.errors import DOCUMENTATION, GUIDES, SPEC, rule_link, rule_url

ROOT = require_checkout()
SAMPLES: dict[str, Any] = json.loads((CORPUS / "catalogue.json").read_text())["samples"]


def _load_tool() -> ModuleType:
    path = ROOT / "tools" / "spec_citations.py"
    spec = importlib.util.spec_from_file_location("spec_citations", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool
    spec.loader.exec_module(tool)
    return tool


tool = _load_tool()


def anchors(path: str) -> frozenset[str]:
    anchored: frozenset[str] = tool.read_spec((ROOT / path).read_text("utf-8")).anchors
    return anchored


def error_table() -> dict[str, str]:
    """INTERPRETING.md §5's table of error kinds: ``{kind: rule}``."""
    text = (ROOT / "conformance" / "INTERPRETING.md").read_text("utf-8")
    section = text[text.index("## 5. ") : text.index("## 6. ")]
    rows = re.findall(r"^\| `([a-z_]+)` \| .* \| `([^`]+)` \|$", section, re.MULTILINE)
    return dict(rows)


TABLE = error_table()
BLOB = "https://github.com/harnessweaver/harnessweaver/blob/main/"


CASES = load_cases(CORPUS / "cases")
NO_CASE: dict[str, Any] = {"invalid_contracts": lambda: hw.HookBus(contracts="loud")}
"""How to raise the kinds that no corpus case expects."""


def raised(kind: str) -> hw.HarnessweaverError:
    """The error the selected core raises in the first corpus case that expects ``kind``."""
    if kind in NO_CASE:
        with pytest.raises(hw.HarnessweaverError) as caught:
            NO_CASE[kind]()
        return caught.value
    case = next(c.data for c in CASES if (c.data["then"].get("error") or {}).get("kind") == kind)
    run = _CaseRun(dict(case), SAMPLES)

    async def steps() -> None:
        if run.refused is not None:
            raise run.refused
        for decl in case.get("given", {}).get("middleware", []):
            run.register(decl)
        for step in case.get("when", []):
            await run.step(step)

    with pytest.raises(hw.HarnessweaverError) as caught:
        anyio.run(steps)
    return caught.value


def test_the_table_is_read() -> None:
    assert len(TABLE) >= 24
    assert TABLE["invalid_duration"] == "ruling-15"


@pytest.mark.parametrize("kind", sorted(TABLE))
def test_every_error_kind_links_to_its_rule(kind: str) -> None:
    error = raised(kind)
    assert (error.kind, error.rule) == (kind, TABLE[kind])
    assert error.link == f"{SPEC}#{error.rule.lower()}"
    file, _, anchor = error.link.partition("#")
    assert anchor in anchors(file), f"{error.link} names no anchor of {file}"
    assert error.url == f"{BLOB}{error.link}"
    assert error.__notes__ == [f"see {error.url}"]
    assert error.link not in str(error)  # the message the corpus compares is unchanged


def test_a_traceback_shows_the_link_and_the_message_is_unchanged() -> None:
    with pytest.raises(hw.DeclarationError) as caught:

        @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="2 s")
        async def guard(event: Any, envelope: Any) -> None:
            return None

    error = caught.value
    assert str(error) == (
        "invalid timeout '2 s': a timeout is a positive number of seconds or a string with a "
        "unit such as 250ms, 2s, 1.5s or 1m (ruling 15)"
    )
    assert (error.rule, error.link) == ("ruling-15", "docs/spec/hook-bus.md#ruling-15")
    text = "".join(traceback.format_exception(error))
    # The note is a URL a wheel user can open: the section online, not a path in a clone.
    url = "https://github.com/harnessweaver/harnessweaver/blob/main/docs/spec/hook-bus.md#ruling-15"
    assert text.endswith(f"{error!s}\nsee {url}\n")


def test_a_pickled_error_keeps_its_link_and_one_note() -> None:
    error = hw.RegistrationError("duplicate_name", "I2", "a middleware named 'x' ... (I2)")
    copy = pickle.loads(pickle.dumps(error))
    url = f"{BLOB}{SPEC}#i2"
    assert (copy.rule, copy.link, copy.url, copy.__notes__) == (
        "I2",
        f"{SPEC}#i2",
        url,
        [f"see {url}"],
    )


@pytest.mark.parametrize("rule", sorted(GUIDES))
def test_the_rules_around_the_bus_link_to_a_section_of_the_user_docs(rule: str) -> None:
    link = rule_link(rule)
    assert link is not None
    file, _, anchor = link.partition("#")
    assert anchor in anchors(file), f"{link} names no section of {file}"


def test_an_unknown_rule_has_no_link_and_no_note() -> None:
    error = hw.HarnessweaverError("odd", "no-such-rule", "odd")
    assert error.link is None and error.url is None
    assert not getattr(error, "__notes__", [])


def _rules_raised() -> dict[str, str]:
    """Every rule id the package passes where it makes an error: ``{rule: where}``."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        names = {
            target.id: node.value.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name) and isinstance(node.value.value, str)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            at = 2 if name == "error_for" else 1 if name.endswith("Error") else None
            if at is None or len(node.args) <= at:
                continue
            arg = node.args[at]
            ident = getattr(arg, "id", "")
            value = arg.value if isinstance(arg, ast.Constant) else names.get(ident)
            if isinstance(value, str):
                found.setdefault(value, f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_every_rule_the_package_raises_has_a_link_to_an_anchor() -> None:
    rules = _rules_raised()
    from harnessweaver.spec.errors import RULES

    rules.update({rule: f"spec/errors.py RULES[{kind!r}]" for kind, rule in RULES.items()})
    rules["spec"] = "spec/errors.py SpecError"
    assert {"I27", "writing-middleware", "plugins", "budgets"} <= rules.keys()
    for rule, where in sorted(rules.items()):
        link = rule_link(rule)
        assert link is not None, f"{where}: rule {rule!r} has no link"
        file, _, anchor = link.partition("#")
        assert anchor in anchors(file), f"{where}: {link} names no anchor"


def test_links_are_repository_paths_and_urls_start_with_the_documentation_url() -> None:
    """The one documentation URL: pyproject's [project.urls] (what a wheel's metadata shows),
    package.json's homepage (npm's), and the base both languages' error URLs start from."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["urls"]
    assert urls["Documentation"] == DOCUMENTATION
    package = json.loads((ROOT / "ts-runner" / "package.json").read_text("utf-8"))
    assert package["homepage"] == DOCUMENTATION
    assert f"{BLOB}docs/index.md" == DOCUMENTATION
    assert rule_link("I2") == "docs/spec/hook-bus.md#i2"
    assert rule_url("I2") == f"{BLOB}docs/spec/hook-bus.md#i2"
    assert rule_url("writing-middleware") == f"{BLOB}{GUIDES['writing-middleware']}"
    assert Path(ROOT / SPEC).is_file()


def test_the_typescript_errors_make_the_same_urls() -> None:
    """errors.ts holds the same documentation URL and joins paths to it the same way."""
    text = (ROOT / "ts-runner" / "src" / "errors.ts").read_text("utf-8")
    assert f'export const DOCUMENTATION = "{DOCUMENTATION}";' in text
