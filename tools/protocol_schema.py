"""Generate ``conformance/schema/protocol.schema.json`` from ``case.schema.json``.

The case schema is the one place the corpus's vocabulary is written: hook names, features,
rules, error kinds, outcomes, trace records. A testee's answer holds an observation (§6.1),
which is what a case's ``then`` describes minus the matchers, so the protocol schema is derived
here, not written by hand (it fell behind the corpus once, issue 17):

* definitions that hold no matcher (hook names, features, the case a ``run`` carries) are
  ``$ref``-ed from the case schema;
* those that do (the error, outcomes, emits, records, identities) are copied with every
  matcher alternative removed, since an observation holds values, never matchers;
* the observation is ``then`` made complete: every key (but ``harness``, there when a spec
  was loaded), every hook point's chain, every emit's key and every problem's key required,
  ``excludes`` (a check, not something observed) left out, and trace records allowed their
  timing fields (I8; the driver strips them).

Change the vocabulary in ``case.schema.json`` and the envelope of the messages (§9) here, then

    python tools/protocol_schema.py          # rewrite the protocol schema
    python tools/protocol_schema.py --check  # exit 1 if the committed file is not generated

``python/tests/test_protocol_schema.py`` fails when the committed file differs from the
generated one. The file is laid out as the case files are (``case_file_json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
try:
    from harnessweaver.conformance.canonical import case_file_json
except ImportError:  # not installed here: this checkout's source has it
    sys.path.append(str(ROOT / "python"))
    from harnessweaver.conformance.canonical import case_file_json

SCHEMA_DIR = ROOT / "conformance" / "schema"
CASE_SCHEMA = SCHEMA_DIR / "case.schema.json"
PROTOCOL_SCHEMA = SCHEMA_DIR / "protocol.schema.json"

MATCHER = {"$ref": "#/$defs/matcher"}
LOCAL = "#/$defs/"
CASE = "case.schema.json#/$defs/"
# Case definitions whose strict copy is named for what it is in an answer, not in a case.
RENAMED = {
    "then": "observation",
    "errorExpected": "error",
    "emitExpected": "emit",
    "problemExpected": "problem",
}
OPTIONAL = ("harness", "approvals")
"""Keys of an observation present only sometimes: ``harness`` when a spec was loaded (§6.1),
``approvals`` in a case of an approvals book (I34)."""
TIMING = {"type": "integer", "minimum": 0}  # t_ns and duration_ns (I8), never compared
PROTOCOL = 1
IMPLEMENTATION = ("name", "language", "version", "core")


def mentions_matcher(defs: dict[str, Any], name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a case definition allows a matcher anywhere in it, through its references."""
    text = json.dumps(defs[name])
    if json.dumps(MATCHER) in text:
        return True
    names = {n for n in defs if f'"{LOCAL}{n}"' in text} - seen - {name}
    return any(mentions_matcher(defs, n, seen | {name}) for n in names)


class _Strict:
    """Strict copies of the case definitions an observation needs, made on demand."""

    def __init__(self, case_schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = case_schema["$defs"]
        self.made: dict[str, Any] = {}

    def ref(self, name: str) -> str:
        if name == "matcher":  # only an alternative (anyOf) can be removed
            raise ValueError("the case schema allows a matcher outside an anyOf")
        if not mentions_matcher(self.defs, name):
            return f"{CASE}{name}"
        local = RENAMED.get(name, name)
        if local not in self.made:
            self.made[local] = None  # taken before recursing: definitions may recurse
            self.made[local] = self.copy(self.defs[name])
        return f"{LOCAL}{local}"

    def copy(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.copy(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(LOCAL):
                out[key] = self.ref(value.removeprefix(LOCAL))
            elif key == "anyOf" and MATCHER in value:
                options = [self.copy(option) for option in value if option != MATCHER]
                if len(options) != 1:  # none left is an empty anyOf, which check_schema refuses
                    out[key] = options
                elif set(options[0]) & set(node):
                    raise ValueError(f"cannot fold {options[0]} into {node}")
                else:
                    out.update(options[0])
            else:
                out[key] = self.copy(value)
        return out


def _complete(case_schema: dict[str, Any], made: dict[str, Any]) -> None:
    """Turn the copy of ``then`` into the observation a runner must send in full (§6.1)."""
    observation = made["observation"]
    del observation["properties"]["excludes"]
    observation["required"] = [k for k in observation["properties"] if k not in OPTIONAL]
    observation["description"] = "What a runner observes (INTERPRETING.md section 6.1)."
    chains = observation["properties"]["chains"]
    chains["required"] = case_schema["$defs"]["knownHook"]["enum"]
    emit = made["emit"]
    emit["required"] = list(emit["properties"])
    problem = made["problem"]  # its message is free text, but always sent
    problem["required"] = list(problem["properties"])
    _complete_approvals(made)
    record = made["record"]
    record["properties"] |= {"t_ns": TIMING, "duration_ns": TIMING}
    record["description"] = "One trace record (INTERPRETING.md I8)."


def _complete_approvals(made: dict[str, Any]) -> None:
    """An approval step's answer is sent whole (I34): every key of a record, of its decision
    and use, of a verdict and of a refusal (``then`` writes only those a case pins)."""
    record = made["approvalRecord"]
    record["required"] = list(record["properties"])
    for key in ("decision", "used"):
        for option in record["properties"][key]["oneOf"]:
            if option.get("type") == "object":
                option["required"] = list(option["properties"])
    for option in made["approvalSeen"]["oneOf"]:
        if "action" in option["properties"]:
            option["required"] = list(option["properties"])
        for key in ("verdict", "refused"):
            inner = option["properties"].get(key)
            if inner is not None:
                inner["required"] = list(inner["properties"])


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    """An object with exactly these keys, all required."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "required": list(properties),
    }


def _refs(*names: str) -> list[dict[str, str]]:
    return [{"$ref": f"{LOCAL}{name}"} for name in names]


def _envelope() -> dict[str, Any]:
    """The messages of section 9 around the case and the observation."""
    seq = {"$ref": f"{LOCAL}seq"}
    implementation = {
        "type": "object",
        "description": "Who is answering; further keys (such as the Python testee's backends) "
        "are allowed.",
        "properties": {k: {"type": "string", "minLength": 1} for k in IMPLEMENTATION},
        "required": list(IMPLEMENTATION),
    }
    features = {"type": "array", "uniqueItems": True, "items": {"$ref": f"{CASE}feature"}}
    return {
        "request": {"oneOf": _refs("helloRequest", "runRequest", "stopRequest")},
        "answer": {"oneOf": _refs("helloAnswer", "runActual", "runSkipped", "runErrored")},
        "helloRequest": _closed({"cmd": {"const": "hello"}, "protocol": {"const": PROTOCOL}}),
        "runRequest": _closed(
            {"cmd": {"const": "run"}, "seq": seq, "case": {"$ref": f"{CASE}case"}}
        ),
        "stopRequest": _closed({"cmd": {"const": "stop"}}),
        "helloAnswer": _closed(
            {
                "protocol": {"const": PROTOCOL},
                "implementation": implementation,
                "features": features,
            }
        ),
        "seq": {"type": "integer", "minimum": 0},
        "runActual": _closed({"seq": seq, "actual": {"$ref": f"{LOCAL}observation"}}),
        "runSkipped": _closed(
            {"seq": seq, "skipped": {"const": True}, "reason": {"type": "string"}}
        ),
        "runErrored": _closed(
            {"seq": seq, "errored": {"const": True}, "message": {"type": "string"}}
        ),
    }


def protocol_schema(case_schema: dict[str, Any]) -> dict[str, Any]:
    """The protocol schema for ``case_schema`` (INTERPRETING.md section 9)."""
    strict = _Strict(case_schema)
    strict.ref("then")
    _complete(case_schema, strict.made)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": case_schema["$id"].replace("case.schema.json", "protocol.schema.json"),
        "$comment": "Generated from case.schema.json by tools/protocol_schema.py: do not edit.",
        "title": "harnessweaver testee protocol message",
        "description": "One JSON Lines message of the testee protocol (INTERPRETING.md section 9).",
        "oneOf": _refs("request", "answer"),
        "$defs": _envelope() | strict.made,
    }


def generated_text(case_schema_path: Path = CASE_SCHEMA) -> str:
    case_schema = json.loads(case_schema_path.read_text(encoding="utf-8"))
    return case_file_json(protocol_schema(case_schema)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the committed file")
    args = parser.parse_args(argv)
    text = generated_text()
    if args.check:
        current = PROTOCOL_SCHEMA.read_text(encoding="utf-8") if PROTOCOL_SCHEMA.exists() else ""
        if current != text:
            print(f"{PROTOCOL_SCHEMA} is not generated: run python tools/protocol_schema.py")
            return 1
        return 0
    PROTOCOL_SCHEMA.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
