"""``harness.schema.json``: generated from the spec's models, shipped in the package, and it
accepts a document exactly when the loader's parser finds nothing wrong with its structure."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from checkout import CHECKOUT, PACKAGE, require_checkout
from jsonschema import Draft202012Validator

from harnessweaver.approvals.config import APPROVALS_KEYS, NOTIFY_KEYS
from harnessweaver.builtins import plugin
from harnessweaver.middleware import spec_of
from harnessweaver.spec import schema
from harnessweaver.spec.errors import Problems
from harnessweaver.spec.model import (
    LAYER_KEYS,
    PROFILE_KEYS,
    RESERVED,
    SPEC_KEYS,
    parse_profile,
    parse_spec,
)
from harnessweaver.spec.resolve import builtin_profiles
from harnessweaver.spec.yaml import parse_yaml, plain
from harnessweaver.state.config import CONFIG_KEYS

SCHEMA: dict[str, Any] = json.loads(
    files("harnessweaver").joinpath("spec/harness.schema.json").read_text(encoding="utf-8")
)
STRUCTURAL = {"not_a_spec", "not_a_mapping", "bad_item", "unknown_key"}
"""The problems of a document's structure, which the schema is about."""


def validator(definition: str | None = None) -> Draft202012Validator:
    """The schema's root (a spec or a profile), or one of its ``$defs``."""
    root = SCHEMA if definition is None else {**SCHEMA, "$ref": f"#/$defs/{definition}"}
    if definition is not None:
        del root["anyOf"]
    return Draft202012Validator(root)


SPEC, PROFILE, ROOT = validator("spec"), validator("profile"), validator()


def schema_errors(check: Draft202012Validator, document: object) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in check.iter_errors(document)]


def structural(text: str, as_profile: bool = False) -> list[str]:
    """The structural problems the loader's parser finds in ``text``."""
    problems = Problems()
    content = parse_yaml(text)
    if as_profile:
        parse_profile(content, "p.yaml", "profile_file", problems)
    else:
        parse_spec(content, "harness.yaml", problems)
    return [str(p) for p in problems.error().problems if p.kind in STRUCTURAL]


def test_the_committed_schema_is_the_generated_one() -> None:
    path = require_checkout() / "tools" / "harness_schema.py"
    spec = importlib.util.spec_from_file_location("harness_schema", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = (CHECKOUT / "python/harnessweaver/spec/harness.schema.json").read_text()  # type: ignore[operator]
    assert committed == tool.generated_text(), "run: python tools/harness_schema.py"


def test_the_check_option_says_when_the_file_is_stale(tmp_path: Path) -> None:
    root = require_checkout()
    tool = root / "tools" / "harness_schema.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    copy = tmp_path / "tools" / "harness_schema.py"  # a checkout whose schema was edited
    copy.parent.mkdir()
    copy.write_text(tool.read_text())
    stale = tmp_path / "python/harnessweaver/spec/harness.schema.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n")
    done = subprocess.run([sys.executable, str(copy), "--check"], capture_output=True, text=True)
    assert done.returncode == 1
    assert "is not generated: run python tools/harness_schema.py" in done.stdout


def test_the_package_ships_the_schema_as_a_2020_12_schema() -> None:
    assert (PACKAGE / "spec" / "harness.schema.json").is_file()
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)


def test_the_key_tables_of_the_parser_are_the_schemas() -> None:
    defs = SCHEMA["$defs"]
    assert tuple(defs["spec"]["properties"]) == tuple(sorted(SPEC_KEYS))
    assert tuple(defs["profile"]["properties"]) == tuple(sorted(PROFILE_KEYS))
    assert tuple(defs["item"]["properties"]) == tuple(sorted(RESERVED))
    assert defs["item"]["required"] == ["use"]
    assert set(LAYER_KEYS) == set(RESERVED) - {"id", "use", "enabled"}
    # The order messages list the keys in is the models' ("the keys are plugins, profiles...").
    assert SPEC_KEYS[:3] == ("plugins", "profiles", "middleware")
    assert schema.Spec.model_config.get("extra") == "forbid"


def test_every_builtin_with_a_config_has_its_settings_schema() -> None:
    defs = SCHEMA["$defs"]
    for middleware in plugin.middleware:
        spec = spec_of(middleware)
        assert spec is not None and spec.config is not None
        settings = defs[f"settings.harnessweaver.{spec.name}"]
        assert settings["type"] == "object"
        assert settings["additionalProperties"] is False  # unknown settings are refused
        assert set(settings["properties"]) == set(spec.config.model_fields)
        if spec.sample is not None:  # the project's own settings for it fit
            assert not schema_errors(Draft202012Validator(settings), dict(spec.sample))


def test_loop_guard_settings_in_full() -> None:
    assert SCHEMA["$defs"]["settings.harnessweaver.loop_guard"]["properties"] == {
        "block_after": {"default": 5, "minimum": 2, "type": "integer"},
        # No default: it follows block_after (a TS loader filling 3 in would refuse
        # `block_after: 3` alone, issue 32).
        "warn_after": {
            "anyOf": [{"minimum": 2, "type": "integer"}, {"type": "null"}],
            "description": "default 3, or block_after - 1 when that is less (null when "
            "block_after is 2)",
        },
        "window": {"default": 20, "maximum": 10000, "minimum": 2, "type": "integer"},
        # Whose record it is and how long it lasts (issue 30, I33).
        "scope": {
            "default": "run",
            "enum": ["run", "session", "user", "task", "app", "org"],
            "type": "string",
        },
        "lifetime": {
            "anyOf": [
                {"pattern": "^([0-9]+(\\.[0-9]+)?|\\.[0-9]+)(ms|s|m|h|d)$", "type": "string"},
                {"exclusiveMinimum": 0, "type": "number"},
            ],
            "default": "30d",
        },
    }


def _example_files() -> list[Path]:
    root = require_checkout()
    return sorted((root / "examples").rglob("*.yaml"))


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: p.relative_to(CHECKOUT).as_posix())  # type: ignore[union-attr]
def test_every_example_spec_and_profile_is_valid(path: Path) -> None:
    check = SPEC if path.name == "harness.yaml" else PROFILE
    document = plain(parse_yaml(path.read_text(encoding="utf-8")))
    assert not schema_errors(check, document)
    assert not schema_errors(ROOT, document)


@pytest.mark.parametrize("name", list(builtin_profiles()))
def test_every_builtin_profile_and_its_settings_are_valid(name: str) -> None:
    document = plain(parse_yaml(builtin_profiles()[name].read_text(encoding="utf-8")))
    assert not schema_errors(PROFILE, document)
    for item in document["middleware"]:
        namespace, _, short = item["use"].partition(".")
        settings = {k: v for k, v in item.items() if k not in RESERVED}
        check = validator(f"settings.{namespace}.{short}")
        assert not schema_errors(check, settings), item


SPECS_VALID = {
    "empty mapping": "{}",
    "every key": """
        plugins: {local: [app.plugin], installed: [acme]}
        profiles: [org://acme/base, profile://rag, ./p.yaml]
        middleware:
          - {use: acme.cap, id: cap, band: task, hooks: [tool.before], fail_mode: closed,
             timeout: 2s, match: {tool: [refund_*]}, mode: audit, enabled: false, max_usd: 5}
        envs:
          staging: {middleware: [{use: acme.cap, id: s}], mode: enforce}
          empty:
        tasks:
          refund:
            guardrails:
              tool.before: [{use: acme.guard, hooks: [tool.before]}]
              model.before:
            validation: {rules: [{use: acme.cap, id: r, max_usd: 50}]}
            deadlines: {tool.before: 500ms}
            mode: audit
          bare:
        contracts: warn
        deadlines: {tool.before: 2s}
        mode: audit
        identity: jcs-sha256
    """,
    "null sections": "plugins:\nprofiles:\nmiddleware:\nenvs:\ntasks:\ndeadlines:\n",
    "values the loader checks": """
        middleware: [{use: acme.x, band: core, timeout: [1], id: 5, hooks: tool.before}]
        contracts: loud
        mode: 3
        identity: sha1
        deadlines: {tool.before: five}
    """,
    "a setting named like a section": "middleware: [{use: acme.x, tasks: 3, profile: p}]",
}
SPECS_INVALID = {
    "unknown top-level key": "middlewares: []",
    "unknown key beside known ones": "middleware: []\nchecks: 1",
    "not a mapping": "- a\n- b",
    "text": "hello",
    "item without use": "middleware: [{id: a}]",
    "use that is not text": "middleware: [{use: [a]}]",
    "enabled not a boolean": "middleware: [{use: a.b, enabled: maybe}]",
    "enabled null": "middleware: [{use: a.b, enabled: null}]",
    "item not a mapping": "middleware: [a.b]",
    "null item": "middleware: [null]",
    "a list where a mapping goes": "plugins: [a]",
    "a mapping where a list goes": "middleware: {use: a.b}",
    "blank plugin": "plugins: {local: ['  ']}",
    "unknown plugins key": "plugins: {remote: [a]}",
    "profile not text": "profiles: [1]",
    "envs a list": "envs: [a]",
    "unknown env key": "envs: {s: {middlewares: []}}",
    "env item without use": "envs: {s: {middleware: [{}]}}",
    "unknown task key": "tasks: {t: {checks: 1}}",
    "guardrails a list": "tasks: {t: {guardrails: []}}",
    "guardrail item without use": "tasks: {t: {guardrails: {tool.before: [{id: x}]}}}",
    "unknown validation key": "tasks: {t: {validation: {rule: []}}}",
    "rules a mapping": "tasks: {t: {validation: {rules: {use: a.b}}}}",
    "deadlines a list": "deadlines: [2s]",
    "task deadlines text": "tasks: {t: {deadlines: 2s}}",
}


def _deadline_problems(text: str) -> list[str]:
    """``deadlines:`` that are not mappings: found by the loader's deadline check."""
    from harnessweaver.spec.deadlines import spec_deadlines

    problems = Problems()
    spec = parse_spec(parse_yaml(text), "harness.yaml", problems)
    spec_deadlines(spec, None, problems)
    return [str(p) for p in problems.error().problems if p.kind in STRUCTURAL]


@pytest.mark.parametrize("text", SPECS_VALID.values(), ids=list(SPECS_VALID))
def test_a_structurally_sound_spec_is_valid(text: str) -> None:
    import textwrap

    text = textwrap.dedent(text)
    assert not _deadline_problems(text)
    assert not schema_errors(SPEC, plain(parse_yaml(text)))


@pytest.mark.parametrize("text", SPECS_INVALID.values(), ids=list(SPECS_INVALID))
def test_a_structurally_broken_spec_is_refused_by_both(text: str) -> None:
    assert _deadline_problems(text), "the loader finds nothing wrong"
    document = plain(parse_yaml(text))
    assert schema_errors(SPEC, document)
    assert schema_errors(ROOT, document)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("profile: base\nmiddleware: [{use: a.b, band: baseline}]", True),
        ("plugins: {installed: [acme]}\nmiddleware:", True),
        ("profile:\n", True),
        ("profile: [a]", False),
        ("middleware: [{id: x}]", False),
        ("profile: p\nenvs: {}", False),
        ("tasks: {}", False),
    ],
)
def test_profiles_are_checked_like_the_loader_does(text: str, valid: bool) -> None:
    assert bool(structural(text, as_profile=True)) is not valid
    assert bool(schema_errors(PROFILE, plain(parse_yaml(text)))) is not valid


def test_a_guardrails_hooks_are_left_to_the_loader() -> None:
    """The one structural rule the schema cannot say: a guardrail runs at its stage only."""
    text = "tasks: {t: {guardrails: {tool.before: [{use: a.b, hooks: [tool.after]}]}}}"
    assert structural(text) == [
        "harness.yaml:1: tasks.t.guardrails.tool.before[0] (a.b): a guardrail of stage "
        "tool.before runs on tool.before only (spec)"
    ]
    assert not schema_errors(SPEC, plain(parse_yaml(text)))


def _harness_cases() -> list[Any]:
    from checkout import CORPUS

    from harnessweaver.conformance.cases import load_cases

    folder = CORPUS / "cases" / "harness"
    if not folder.is_dir():
        return []
    return [case for case in load_cases(folder) if "harness" in case.data["given"]]


def _documents(given: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """``(file as problems name it, YAML text, is the spec)`` of every document of a case: its
    YAML files (a Cedar item's policy, schema and entity files are the engine's to judge)."""
    spec = given.get("spec", "harness.yaml")
    folder = spec.rpartition("/")[0]
    found = []
    for name, text in given["files"].items():
        if not name.endswith((".yaml", ".yml")):
            continue
        shown = name.removeprefix(f"{folder}/") if folder else name
        found.append((shown, text, name == spec))
    for scripted in given.get("plugins", []):
        for profile, text in scripted.get("profiles", {}).items():
            found.append((f"profile://{scripted['namespace']}.{profile}", text, False))
    return found


BLOCK_KEYS = {
    "state": set(CONFIG_KEYS),
    "approvals": set(APPROVALS_KEYS),
    "approvals.notify": set(NOTIFY_KEYS),
}
"""The keys of the blocks whose loader reports an unknown key under the block's own kind
(``invalid_state``, ``invalid_approvals``), which the schema refuses as structure."""


def _unknown_block_key(item: str) -> bool:
    block, _, key = item.rpartition(".")
    return block in BLOCK_KEYS and key not in BLOCK_KEYS[block]


@pytest.mark.parametrize("case", _harness_cases(), ids=lambda case: case.id)
def test_every_corpus_document_is_valid_unless_its_structure_is_at_fault(case: Any) -> None:
    """A document of a spec-level case is valid exactly when the case expects no structural
    problem of it (a guardrail's hooks aside, which the schema leaves to the loader)."""
    error = case.data["then"].get("error") or {}
    problems = error.get("problems", [])
    for file, text, is_spec in _documents(case.data["given"]["harness"]):
        if any(p["file"] == file and p["kind"] == "unreadable_yaml" for p in problems):
            continue
        broken = any(
            p["file"] == file
            and (p["kind"] in STRUCTURAL or _unknown_block_key(p["item"]))
            and ".guardrails." not in p["item"]
            for p in problems
        )
        document = plain(parse_yaml(text)) if text.strip() else {}
        errors = schema_errors(SPEC if is_spec else PROFILE, document)
        assert bool(errors) is broken, (file, errors)


def test_the_corpus_has_spec_level_cases_to_check() -> None:
    assert len(_harness_cases()) >= 30
