"""``harnessweaver.cedar`` in a harness spec: files relative to the declaring file, read once
at load, SpecErrors at ``<file>:<line>`` (I38), ``harnessweaver hooks`` showing what it loads."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import harnessweaver as hw

pytest.importorskip("cedarpy")
pytestmark = pytest.mark.anyio

POLICIES = """// tools anyone may use
@id("allow-search")
permit(principal, action == Action::"tool.before", resource == Tool::"search");

@id("results")
permit(principal, action == Action::"tool.after", resource);
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return folder / "harness.yaml"


def spec(item: str) -> str:
    return "middleware:\n  - use: harnessweaver.cedar\n" + item


def call(name: str) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(tool=hw.ToolSpec(name=name), call=hw.ToolCall(name=name))


def problems(path: Path) -> list[tuple[Any, ...]]:
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path)
    return [(p.file, p.item, p.line, p.kind, p.rule, p.message) for p in caught.value.problems]


async def test_a_spec_loads_its_policies_relative_to_itself(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "harness.yaml": spec("    id: tool_policy\n    policies: rules/p.cedar\n"),
            "rules/p.cedar": POLICIES,
        },
    )
    harness = hw.load(path)
    ctx = hw.RunContext()
    assert (await harness.bus.emit("tool.before", call("search"), ctx)).outcome == hw.Continue()
    blocked = (await harness.bus.emit("tool.before", call("rm"), ctx)).outcome
    assert blocked == hw.Block(
        reason="no Cedar policy permits this request", code="cedar:no_permit"
    )
    # without hooks: tool.before only (I38)
    assert [d.name for d in harness.bus.chain("tool.before")] == ["tool_policy"]
    assert harness.bus.chain("tool.after") == () and harness.bus.chain("model.before") == ()


async def test_the_files_are_read_once_when_the_spec_loads(tmp_path: Path) -> None:
    path = write(tmp_path, {"harness.yaml": spec("    policies: p.cedar\n"), "p.cedar": POLICIES})
    harness = hw.load(path)
    (tmp_path / "p.cedar").write_text("forbid(principal, action, resource);", "utf-8")
    outcome = (await harness.bus.emit("tool.before", call("search"), hw.RunContext())).outcome
    assert outcome == hw.Continue()


async def test_hooks_choose_among_the_three(tmp_path: Path) -> None:
    item = "    hooks: [tool.after, model.before]\n    policies: p.cedar\n"
    harness = hw.load(write(tmp_path, {"harness.yaml": spec(item), "p.cedar": POLICIES}))
    assert harness.bus.chain("tool.before") == ()
    assert len(harness.bus.chain("tool.after")) == 1 and len(harness.bus.chain("model.before")) == 1
    result = hw.ToolResultEvent(tool=hw.ToolSpec(name="x"), call=hw.ToolCall(name="x"))
    assert (await harness.bus.emit("tool.after", result, hw.RunContext())).outcome == hw.Continue()


def test_a_profile_s_paths_are_relative_to_the_profile(tmp_path: Path) -> None:
    files = {
        "harness.yaml": "profiles: [org/base.yaml]\n",
        "org/base.yaml": "middleware:\n  - use: harnessweaver.cedar\n    policies: p.cedar\n",
        "org/p.cedar": POLICIES,
    }
    harness = hw.load(write(tmp_path, files))
    (entry,) = harness.entries
    assert entry.file == "org/base.yaml" and entry.loads == ("p.cedar",)


def test_absolute_paths_and_several_files_join_in_order(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    first = tmp_path / "elsewhere" / "a.cedar"
    first.write_text('@id("a") permit(principal, action, resource == Tool::"a");', "utf-8")
    item = f"    policies: [{json.dumps(str(first))}, b.cedar]\n"
    files = {"harness.yaml": spec(item), "b.cedar": "forbid(principal, action, resource);"}
    harness = hw.load(write(tmp_path, files))
    policy_set = harness.entries[0].declaration
    assert policy_set.name == "harnessweaver.cedar"
    assert harness.entries[0].loads == (str(first), "b.cedar")


def test_hooks_shows_the_files_each_item_loads(tmp_path: Path) -> None:
    item = (
        "    id: tool_policy\n    policies: [p.cedar]\n    schema: s.cedarschema\n"
        "    entities: e.json\n"
        "  - use: harnessweaver.tool_denylist\n    deny: [rm]\n"
    )
    schema = (
        "entity User; entity Agent; entity Tool;\n"
        'action "tool.before", "tool.after" appliesTo '
        "{ principal: [User, Agent], resource: [Tool] };\n"
    )
    files = {
        "harness.yaml": spec(item),
        "p.cedar": POLICIES,
        "s.cedarschema": schema,
        "e.json": "[]",
    }
    harness = hw.load(write(tmp_path, files))
    text = harness.render("text")
    rows = text.splitlines()
    at = next(i for i, row in enumerate(rows) if row.startswith("  1  tool_policy"))
    assert rows[at + 1] == "     loads: p.cedar, s.cedarschema, e.json"
    assert rows[at + 2].startswith("  2  harnessweaver.tool_denylist")
    assert text.count("loads:") == 1
    chain = next(
        h for h in json.loads(harness.render("json"))["hooks"] if h["hook"] == "tool.before"
    )
    assert chain["chain"][0]["loads"] == ["p.cedar", "s.cedarschema", "e.json"]
    assert list(chain["chain"][0])[-1] == "loads"
    assert "loads" not in chain["chain"][1]


ITEM = "middleware[0] (harnessweaver.cedar)"
ERRORS: list[tuple[str, dict[str, str], int, str]] = [
    (
        "    policies: p.cedar\n",
        {
            "p.cedar": "permit(principal, action, resource);\n\n// x;\n"
            "permit(principal,\n action, resource) when { 1 + };\n"
        },
        3,
        "p.cedar:4: the policy does not parse: unexpected token `}` (I38)",
    ),
    (
        "    policies: p.cedar\n",
        {
            "p.cedar": "permit(principal, action, resource);\n"
            "permit(principal == ?principal, action, resource);\n"
        },
        3,
        "p.cedar:2: policy policy1 is a template (?principal or ?resource): "
        "only static policies are allowed (I38)",
    ),
    (
        "    policies:\n      - a.cedar\n      - b.cedar\n",
        {
            "a.cedar": '@id("x")\npermit(principal, action, resource);\n',
            "b.cedar": '\n\n@id("x") forbid(principal, action, resource);\n',
        },
        3,
        'b.cedar:3: the policy id "x" is already used by the policy at a.cedar:1 (I38)',
    ),
    (
        "    policies: [a.cedar, b.cedar]\n",
        {
            "a.cedar": "permit(principal, action, resource);\n",
            "b.cedar": '@id("policy0") forbid(principal, action, resource);\n',
        },
        3,
        'b.cedar:1: the policy id "policy0" is already used by the policy at a.cedar:1 (I38)',
    ),
    ("    policies: nothere.cedar\n", {}, 3, "nothere.cedar:1: the file does not exist (I38)"),
    (
        "    policies: p.cedar\n    schema: s.cedarschema\n",
        {
            "p.cedar": "permit(principal, action, resource);\n",
            "s.cedarschema": "entity User;\nentity ;\n",
        },
        4,
        "s.cedarschema:1: the schema does not parse: "
        "error parsing schema: unexpected token `;` (I38)",
    ),
    (
        "    policies: p.cedar\n    schema: s.json\n",
        {
            "p.cedar": "permit(principal, action, resource);\n",
            "s.json": '{\n  "": {\n    "entityTypes": {,\n}}\n',
        },
        4,
        "s.json:3: the schema is not JSON (I38)",
    ),
    (
        "    policies: p.cedar\n    schema: s.cedarschema\n",
        {
            "p.cedar": 'permit(principal, action == Action::"tool.before", resource);\n'
            '@id("bad")\npermit(principal, action == Action::"tool.before", resource) '
            "when { context.nope };\n",
            "s.cedarschema": 'entity Agent; entity Tool;\naction "tool.before" appliesTo '
            "{ principal: [Agent], resource: [Tool], context: { hook: String } };\n",
        },
        3,
        "p.cedar:2: the schema rejects policy bad: for policy `policy1`, attribute `nope` in "
        'context for Action::"tool.before" not found (I38)',
    ),
    (
        "    policies: p.cedar\n    entities: e.json\n",
        {
            "p.cedar": "permit(principal, action, resource);\n",
            "e.json": '[\n {"uid": {"type": "User", "id": "a"}, "attrs": {}, "parents": []},\n'
            ' {"uid": 3}\n]\n',
        },
        4,
        "e.json:1: the entities do not parse: error during entity deserialization (I38)",
    ),
    (
        "    policies: p.cedar\n    entities: e.json\n",
        {"p.cedar": "permit(principal, action, resource);\n", "e.json": '[\n {"uid": \n'},
        4,
        "e.json:3: the entity file is not JSON (I38)",
    ),
    (
        "    policies: p.cedar\n    namespace: Acme::in\n",
        {"p.cedar": "permit(principal, action, resource);\n"},
        4,
        'harness.yaml:4: the namespace "Acme::in" is not a Cedar name (Name or A::B) (I38)',
    ),
    (
        "    hooks: [tool.before, model.after]\n    policies: p.cedar\n",
        {"p.cedar": "permit(principal, action, resource);\n"},
        3,
        "harness.yaml:3: harnessweaver.cedar runs on model.before, tool.before, tool.after, "
        "not 'model.after' (I38)",
    ),
    (
        "    policies: p.cedar\n",
        {"p.cedar": "permit(principal, action, resource);\n\xff"},
        3,
        "p.cedar:2: the file is not UTF-8 text (I38)",
    ),
]


@pytest.mark.parametrize(("item", "files", "line", "message"), ERRORS)
def test_load_errors_name_the_file_and_line(
    tmp_path: Path, item: str, files: dict[str, str], line: int, message: str
) -> None:
    encoded = {k: v for k, v in files.items() if "\xff" not in v}
    path = write(tmp_path, {"harness.yaml": spec(item), **encoded})
    for name, text in files.items():
        if "\xff" in text:  # a byte that is no UTF-8
            (tmp_path / name).write_bytes(text.replace("\xff", "").encode() + b"\xff\n")
    assert problems(path) == [("harness.yaml", ITEM, line, "invalid_policy", "I38", message)]


def test_an_entity_file_the_schema_rejects(tmp_path: Path) -> None:
    files = {
        "harness.yaml": spec(
            "    policies: p.cedar\n    schema: s.cedarschema\n    entities: e.json\n"
        ),
        "p.cedar": 'permit(principal, action == Action::"tool.before", resource);\n',
        "s.cedarschema": 'entity Agent; entity Tool;\naction "tool.before" appliesTo '
        "{ principal: [Agent], resource: [Tool] };\n",
        "e.json": '[{"uid": {"type": "Agent", "id": "a"}, "attrs": {"x": 1}, "parents": []}]\n',
    }
    ((file, _, line, kind, rule, message),) = problems(write(tmp_path, files))
    assert (file, line, kind, rule) == ("harness.yaml", 5, "invalid_policy", "I38")
    assert message.startswith("e.json:1: the schema rejects the entities: ")


def test_settings_are_checked_before_any_file_is_read(tmp_path: Path) -> None:
    item = "    policies: []\n    no_decision: allow\n"
    found = problems(write(tmp_path, {"harness.yaml": spec(item)}))
    assert {(p[3], p[4]) for p in found} == {("invalid_settings", "settings")}


def test_without_cedarpy_the_problem_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cedarpy", None)  # import cedarpy raises ImportError
    path = write(tmp_path, {"harness.yaml": spec("    policies: p.cedar\n"), "p.cedar": POLICIES})
    assert problems(path) == [
        (
            "harness.yaml",
            ITEM,
            3,
            "invalid_policy",
            "I38",
            "harness.yaml:3: harnessweaver.cedar needs the cedarpy package: "
            "pip install 'harnessweaver[cedar]' (I38)",
        )
    ]


def test_a_thousand_policies_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join(
        f'@id("p{i}") permit(principal, action == Action::"tool.before", resource == Tool::"t{i}")'
        f" when {{ context.arguments.n < {i} }};"
        for i in range(1000)
    )
    path = write(tmp_path, {"harness.yaml": spec("    policies: p.cedar\n"), "p.cedar": text})
    started = time.perf_counter()
    harness = hw.load(path)
    elapsed = time.perf_counter() - started
    with capsys.disabled():  # measured, never asserted
        print(f"\n1,000 Cedar policies: the spec loaded in {elapsed * 1000:.1f} ms")
    assert harness.entries[0].loads == ("p.cedar",)
    # and a bad one among them is found at its line
    lines = text.splitlines()
    lines[700] = lines[700].replace("when {", "when {{")
    (tmp_path / "p.cedar").write_text("\n".join(lines), "utf-8")
    ((_, _, _, _, _, message),) = problems(path)
    assert message.startswith("p.cedar:701: the policy does not parse")
