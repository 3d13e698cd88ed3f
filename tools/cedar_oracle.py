"""Check the expected answers of every ``policy.cedar.*`` case against raw Cedar (ruling I38).

The corpus states, for every emit, what the ``cedar`` middleware answers; the four
implementations are judged by it. This checker does not trust the corpus nor any
implementation: it builds each Cedar request with its own small mapping (below, written from
INTERPRETING.md's I38, not imported from ``harnessweaver.policies``), asks ``cedarpy`` (the
Cedar 4.12 engine the Python implementation uses) for the decision, turns the decision into
the outcome I38 prescribes and compares it with what the case expects:

* the trace record of the cedar middleware for that emit (``kind``, ``outcome``, ``code``,
  and for a failure the ``error`` type, CedarRequestError or CedarEvaluationError);
* the emit's combined outcome too, whole (reason, code, approver role), when the cedar
  middleware is the only one that ran.

It checks the spec-form cases (``harness.builtins.cedar.*``) too: it reads the items of the
spec and of its profile files, their policy, schema and entity files relative to the file
that declares them, and compares each emit's outcome (those chains hold cedar items alone);
a case that expects the spec to fail to load must hold a cedar item that Cedar (or I38's
checks of hooks and namespace) refuses.

A disagreement is a case written wrong or a finding about Cedar; either way it is printed and
the exit status is 1.

    python tools/cedar_oracle.py            # every case of conformance/cases/policy
    python tools/cedar_oracle.py -k values  # the cases whose id holds "values"
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cedarpy
import yaml

__all__ = [
    "Answer",
    "Unbuildable",
    "answer",
    "cedar_value",
    "check_case",
    "check_spec_case",
    "main",
    "request",
]

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "conformance" / "cases" / "policy"
SPEC_CASES = ROOT / "conformance" / "cases" / "harness" / "builtins-cedar.json"
SAMPLES: dict[str, Any] = json.loads((ROOT / "conformance" / "catalogue.json").read_text())[
    "samples"
]

MAX_SAFE = 2**53 - 1  # the largest integer every implementation's numbers hold exactly
MAX_DEPTH = 32  # the converted value (arguments, attributes) is level 1
RESERVED = frozenset({"__entity", "__extn", "__expr"})  # Cedar's JSON escapes
APPROVAL = ("requireApproval", "escalate")  # in this order: requireApproval's value first
CODE_MAX, REASON_MAX = 128, 4096  # I28, counted in code points (Python str length)
HOOKS = ("tool.before", "tool.after", "model.before")  # the hook points the middleware takes
CEDAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*")
SEVERITY = {"continue": 0, "suspend": 1, "block": 2}
SURROGATE = re.compile("[\ud800-\udfff]")


class Unbuildable(Exception):
    """The event cannot be made into a Cedar request: I38's CedarRequestError."""


@dataclass(frozen=True)
class Answer:
    """What the cedar middleware answers: an outcome (``kind`` continue, block, suspend) or a
    failure (``kind`` failure, ``error`` the exception's type name)."""

    kind: str
    reason: str | None = None
    code: str | None = None
    approver_role: str | None = None
    error: str | None = None

    def as_outcome(self) -> dict[str, Any]:
        if self.kind == "continue":
            return {"kind": "continue", "modified": False}
        if self.kind == "block":
            return {"kind": "block", "reason": self.reason, "code": self.code}
        return {
            "kind": "suspend",
            "reason": self.reason,
            "approver_role": self.approver_role,
            "code": self.code,
        }


def cedar_value(value: Any, depth: int, path: str) -> Any:
    """A JSON value in the form Cedar's JSON reader takes for a context value, or
    :class:`Unbuildable`. ``depth`` is the level of ``value`` when it is a container."""
    if isinstance(value, str):
        return _text(value, path)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE:
            raise Unbuildable(f"{path}: an integer past 2^53-1")
        return value
    if isinstance(value, float):
        if not value.is_integer() or abs(value) > MAX_SAFE:
            raise Unbuildable(f"{path}: a number that is not a Long")
        return int(value)
    if isinstance(value, list | dict) and depth > MAX_DEPTH:
        raise Unbuildable(f"{path}: nested deeper than {MAX_DEPTH}")
    if isinstance(value, list):
        return [
            cedar_value(item, depth + 1, f"{path}[{i}]")
            for i, item in enumerate(value)
            if item is not None
        ]
    if isinstance(value, dict):
        reserved = RESERVED.intersection(value)
        if reserved:
            raise Unbuildable(f"{path}: the reserved key {sorted(reserved)[0]}")
        return {
            _text(key, path): cedar_value(item, depth + 1, f"{path}.{key}")
            for key, item in value.items()
            if item is not None
        }
    raise Unbuildable(f"{path}: not a JSON value")


def _text(text: str, path: str) -> str:
    """Text as Cedar holds it: a lone surrogate (which JSON escapes can spell and Python and
    JavaScript strings hold) is no Unicode scalar value, so no Cedar string holds it."""
    if SURROGATE.search(text):
        raise Unbuildable(f"{path}: text holding a lone surrogate")
    return text


def _type(namespace: str | None, name: str) -> str:
    return f"{namespace}::{name}" if namespace else name


def request(
    hook: str, event: dict[str, Any], attributes: dict[str, Any], namespace: str | None
) -> dict[str, Any]:
    """The Cedar request of I38 for an emit, entity ids in the ``{type, id}`` form."""
    user, agent = attributes.get("user"), attributes.get("agent")
    if isinstance(user, str):
        principal = {"type": _type(namespace, "User"), "id": _text(user, "user")}
    elif isinstance(agent, str):
        principal = {"type": _type(namespace, "Agent"), "id": _text(agent, "agent")}
    else:
        principal = {"type": _type(namespace, "Agent"), "id": "anonymous"}
    context: dict[str, Any] = {
        "hook": hook,
        "step": cedar_value(event["step"], 1, "step"),
        "attributes": cedar_value(attributes, 1, "attributes"),
    }
    if hook in ("tool.before", "tool.after"):
        name = _text(event["call"]["name"] or event["tool"]["name"], "tool")
        resource = {"type": _type(namespace, "Tool"), "id": name}
        context["tool"] = name
        context["arguments"] = cedar_value(event["call"]["arguments"], 1, "arguments")
        if hook == "tool.after":
            context["is_error"] = bool(event["result"]["is_error"])
    else:
        model = _text(event["request"]["model"], "model")
        resource = {"type": _type(namespace, "Model"), "id": model}
        context["model"] = model
        context["tools"] = [_text(tool["name"], "tools") for tool in event["request"]["tools"]]
        context["messages"] = len(event["request"]["messages"])
    return {
        "principal": principal,
        "action": {"type": _type(namespace, "Action"), "id": hook},
        "resource": resource,
        "context": context,
    }


@dataclass
class Engine:
    """One declaration's policies, annotations and entities, loaded once."""

    policies: Any
    annotations: dict[str, dict[str, str]]
    entities: Any
    settings: dict[str, Any]

    @classmethod
    def load(cls, settings: dict[str, Any]) -> Engine:
        text: str = settings["policies"]
        policies = cedarpy.PolicySet.from_str(text)
        static = json.loads(cedarpy.policies_to_json_str(text))["staticPolicies"]
        annotations = {
            pid: {k: v or "" for k, v in body.get("annotations", {}).items()}
            for pid, body in static.items()
        }
        shown = [a.get("id", pid) for pid, a in annotations.items()]
        if len(shown) != len(set(shown)):
            raise ValueError("two policies with the same shown id (I38: a SpecError)")
        schema: Any = None
        if "schema" in settings:
            if settings.get("schema_format", "cedar") == "json":
                schema = cedarpy.Schema.from_json_str(settings["schema"])
            else:
                schema = cedarpy.Schema.from_str(settings["schema"])
            checked = cedarpy.validate_policies(text, schema)
            if not checked.validation_passed:
                raise ValueError(f"the schema rejects the policies: {checked.errors}")
        # Read with the schema: it validates them, types their attributes (an ipaddr attribute
        # written as text is an IP address) and adds the actions and action groups it declares.
        entities = cedarpy.Entities.from_json_str(json.dumps(settings.get("entities", [])), schema)
        return cls(policies, annotations, entities, settings)

    def shown(self, pid: str) -> str:
        return self.annotations[pid].get("id", pid)


def _ids(engine: Engine, pids: list[str]) -> list[str]:
    return sorted({engine.shown(pid) for pid in pids})


def answer(engine: Engine, hook: str, event: dict[str, Any], attributes: dict[str, Any]) -> Answer:
    """What I38 says the middleware answers to this emit."""
    try:
        built = request(hook, event, attributes, engine.settings.get("namespace"))
    except Unbuildable:
        return Answer("failure", error="CedarRequestError")
    result = cedarpy.is_authorized(built, engine.policies, engine.entities)
    diagnostics = result.diagnostics
    if diagnostics.errors and engine.settings.get("on_error", "fail") == "fail":
        return Answer("failure", error="CedarEvaluationError")
    determining: list[str] = list(diagnostics.reasons)
    if result.decision == cedarpy.Decision.Allow:
        marked = [p for p in determining if any(a in engine.annotations[p] for a in APPROVAL)]
        if not marked:
            return Answer("continue")
        ids = _ids(engine, marked)
        first = next(p for p in marked if engine.shown(p) == ids[0])
        notes = engine.annotations[first]
        role = notes["requireApproval"] if "requireApproval" in notes else notes["escalate"]
        if len(role) > CODE_MAX:  # I28: a role past 128 code points is an invalid return
            return Answer("failure", error="InvalidReturn")
        return Answer(
            "suspend",
            reason=("approval required by Cedar policy " + ", ".join(ids))[:REASON_MAX],
            code=("cedar:" + ",".join(ids))[:CODE_MAX],
            approver_role=role or None,
        )
    if determining:
        ids = _ids(engine, determining)
        return Answer(
            "block",
            reason=("forbidden by Cedar policy " + ", ".join(ids))[:REASON_MAX],
            code=("cedar:" + ",".join(ids))[:CODE_MAX],
        )
    if engine.settings.get("no_decision", "block") == "continue":
        return Answer("continue")
    return Answer("block", reason="no Cedar policy permits this request", code="cedar:no_permit")


def _emit_steps(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for step in case["when"]:
        yield from step.get("concurrent", [step] if "emit" in step else [])


def check_case(case: dict[str, Any]) -> tuple[int, list[str]]:
    """(answers checked, disagreements) of one case."""
    given = case["given"]
    engines = {
        decl["name"]: Engine.load(decl["does"]["cedar"])
        for decl in given.get("middleware", [])
        if "cedar" in decl.get("does", {})
    }
    contexts: dict[str, Any] = given.get("contexts", {})
    then = case["then"]
    ordinals: dict[str, int] = {}
    checked, problems = 0, []
    for index, (step, emitted) in enumerate(zip(_emit_steps(case), then["emits"], strict=True)):
        hook = step["emit"]
        context = step.get("context", "main")
        ordinals[context] = ordinals.get(context, 0) + 1
        event = step.get("event", SAMPLES[hook])
        attributes = contexts.get(context, {}).get("attributes", {})
        records = [r for r in then["traces"][context] if r["emit"] == ordinals[context]]
        for name, engine in engines.items():
            if name not in emitted["ran"]:
                continue
            want = answer(engine, hook, event, attributes)
            where = f"emit {index + 1} ({hook}, {name})"
            record = next(r for r in records if r.get("middleware") == name)
            checked += 1
            if want.kind == "failure":
                if (record["kind"], record.get("error")) != ("failure", want.error):
                    problems.append(f"{where}: Cedar says failure {want.error}, case {record}")
                continue
            got = (record["kind"], record["outcome"], record.get("code"))
            if got != ("outcome", want.kind, want.code):
                problems.append(f"{where}: Cedar says {want.as_outcome()}, case {record}")
            elif emitted["ran"] == [name] and emitted["outcome"] != want.as_outcome():
                problems.append(
                    f"{where}: Cedar says {want.as_outcome()}, case {emitted['outcome']}"
                )
    return checked, problems


@dataclass
class SpecItem:
    """A harnessweaver.cedar item of a harness spec: where it is declared, its settings."""

    file: str
    layer: str
    item: dict[str, Any]


def _spec_items(case: dict[str, Any]) -> list[SpecItem]:
    """The cedar items of the spec and of its profile files, profiles first (their band,
    baseline, runs before the app's on an inbound hook point)."""
    harness = case["given"]["harness"]
    files: dict[str, str] = harness["files"]
    spec = harness.get("spec", "harness.yaml")
    top: dict[str, Any] = yaml.safe_load(files[spec]) or {}
    folder = posixpath.dirname(spec)
    sources = [
        (posixpath.normpath(posixpath.join(folder, p)), "profile_file")
        for p in top.get("profiles", [])
        if "://" not in p
    ]
    sources.append((spec, "app"))
    found = []
    for path, layer in sources:
        doc: dict[str, Any] = top if path == spec else (yaml.safe_load(files[path]) or {})
        for item in doc.get("middleware", []):
            if item.get("use") == "harnessweaver.cedar":
                found.append(SpecItem(path, layer, item))
    return found


SETTINGS = {"use", "id", "hooks", "fail_mode", "policies", "schema", "entities", "namespace"}
SETTINGS |= {"no_decision", "on_error"}


def _settings_valid(item: dict[str, Any]) -> bool:
    """Whether the item's settings have the shape the settings schema asks for; an item that
    does not is a settings problem (rule settings), not one of I38."""
    policies = item.get("policies")
    as_list = policies if isinstance(policies, list) else [policies]
    return (
        set(item) <= SETTINGS
        and bool(as_list)
        and all(isinstance(p, str) for p in as_list)
        and item.get("no_decision", "block") in ("block", "continue")
        and item.get("on_error", "fail") in ("fail", "skip")
    )


def _resolved(got: Answer, name: str, fail_mode: str) -> Answer:
    """A failure as its fail mode resolves it (I6); any other answer as it is."""
    if got.kind != "failure":
        return got
    if fail_mode == "open":
        return Answer("continue")
    kind = "invalid_return" if got.error == "InvalidReturn" else "exception"
    return Answer("block", reason=f"middleware {name} failed: {kind}", code="middleware_error")


def _load_item(spec_item: SpecItem, files: dict[str, str]) -> Engine:
    """The engine of a spec item, its files read relative to the file that declares it;
    ValueError (or KeyError for a missing file) when I38 refuses it."""
    item = spec_item.item
    folder = posixpath.dirname(spec_item.file)

    def read(path: str) -> str:
        return files[posixpath.normpath(posixpath.join(folder, path))]

    hooks = item.get("hooks", ["tool.before"])
    if any(h not in HOOKS for h in hooks):
        raise ValueError("a hook point outside tool.before, tool.after, model.before")
    namespace = item.get("namespace")
    if namespace is not None and not CEDAR_NAME.fullmatch(namespace):
        raise ValueError("a namespace that is not a Cedar name")
    paths = item["policies"] if isinstance(item["policies"], list) else [item["policies"]]
    settings: dict[str, Any] = {"policies": "\n".join(read(p) for p in paths)}
    if json.loads(cedarpy.policies_to_json_str(settings["policies"]))["templates"]:
        raise ValueError("a template (a policy with ?principal or ?resource)")
    if "schema" in item:
        settings["schema"] = read(item["schema"])
        settings["schema_format"] = "json" if item["schema"].endswith(".json") else "cedar"
    if "entities" in item:
        settings["entities"] = json.loads(read(item["entities"]))
    for key in ("namespace", "no_decision", "on_error"):
        if key in item:
            settings[key] = item[key]
    return Engine.load(settings)


def check_spec_case(case: dict[str, Any]) -> tuple[int, list[str]]:
    """(outcomes checked, disagreements) of one spec-form case."""
    files: dict[str, str] = case["given"]["harness"]["files"]
    items = _spec_items(case)
    then = case["then"]
    if then.get("error"):
        refused = 0
        for spec_item in items:
            if not _settings_valid(spec_item.item):
                continue
            try:
                _load_item(spec_item, files)
            except (ValueError, KeyError, json.JSONDecodeError):
                refused += 1
        expected = [p for p in then["error"]["problems"] if p["kind"] == "invalid_policy"]
        if refused != len(expected):
            return 1, [f"Cedar refuses {refused} items, the case expects {len(expected)}"]
        return 1, []
    engines = [(spec_item, _load_item(spec_item, files)) for spec_item in items]
    contexts: dict[str, Any] = case["given"].get("contexts", {})
    checked, problems = 0, []
    for index, (step, emitted) in enumerate(zip(_emit_steps(case), then["emits"], strict=True)):
        hook = step["emit"]
        event = step.get("event", SAMPLES[hook])
        attributes = contexts.get(step.get("context", "main"), {}).get("attributes", {})
        combined = Answer("continue")
        for spec_item, engine in engines:
            if hook not in spec_item.item.get("hooks", ["tool.before"]):
                continue
            item = spec_item.item
            got = _resolved(
                answer(engine, hook, event, attributes),
                item.get("id", item["use"]),
                item.get("fail_mode", "closed"),
            )
            if SEVERITY[got.kind] > SEVERITY[combined.kind]:
                combined = got
            if got.kind == "block":
                break
        checked += 1
        if emitted["outcome"] != combined.as_outcome():
            problems.append(
                f"emit {index + 1} ({hook}): Cedar says {combined.as_outcome()}, "
                f"case {emitted['outcome']}"
            )
    return checked, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only the cases whose id holds this text")
    parser.add_argument("--cases", type=Path, default=CASES, help="folder of case files")
    args = parser.parse_args(argv)
    total_cases = total_checks = 0
    failed: list[str] = []
    paths = sorted(args.cases.glob("*.json"))
    if args.cases == CASES:
        paths.append(SPEC_CASES)
    for path in paths:
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            if args.k not in case["id"]:
                continue
            total_cases += 1
            check = check_spec_case if "harness" in case["given"] else check_case
            try:
                checked, problems = check(case)
            except (ValueError, KeyError, StopIteration) as exc:
                checked, problems = 0, [f"cannot check: {type(exc).__name__}: {exc}"]
            total_checks += checked
            failed.extend(f"{case['id']}: {p}" for p in problems)
    for line in failed:
        print(line)
    print(
        f"{total_cases} cases, {total_checks} answers checked against cedarpy, "
        f"{len(failed)} disagreements"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
