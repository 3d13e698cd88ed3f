"""Generate ``python/harnessweaver/spec/harness.schema.json`` from the spec's pydantic models.

The schema (JSON Schema 2020-12) describes ``harness.yaml`` (``#/$defs/spec``) and profile
files (``#/$defs/profile``); its root accepts either, for editors
(``# yaml-language-server: $schema=...``). It holds one ``$defs`` entry per built-in
middleware's settings, ``settings.harnessweaver.<name>``, generated from the pydantic
``config`` of the built-in: the TypeScript built-ins validate their settings with them.

    python tools/harness_schema.py          # rewrite the schema
    python tools/harness_schema.py --check  # exit 1 if the committed file is not generated

``python/tests/spec/test_harness_schema.py`` fails when the committed file differs from the
generated one. Keys are sorted, so the file depends on what the models say, not on the order
pydantic happens to write them in.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
try:
    from harnessweaver.builtins import plugin
    from harnessweaver.middleware import spec_of
    from harnessweaver.spec import schema
except ImportError:  # not installed here: this checkout's source has it (and no compiled core,
    sys.path.append(str(ROOT / "python"))  # which the schema does not need)
    os.environ.setdefault("HARNESSWEAVER_CORE", "python")
    from harnessweaver.builtins import plugin
    from harnessweaver.middleware import spec_of
    from harnessweaver.spec import schema

SCHEMA = ROOT / "python" / "harnessweaver" / "spec" / "harness.schema.json"
SCHEMA_ID = "https://example.invalid/harnessweaver/harness.schema.json"
MODELS: dict[str, type[BaseModel]] = {
    "spec": schema.Spec,
    "profile": schema.Profile,
    "item": schema.Item,
    "plugins": schema.Plugins,
    "env": schema.Env,
    "task": schema.Task,
    "validation": schema.Validation,
    "state": schema.State,
    "approvals": schema.Approvals,
    "notify": schema.Notify,
}
"""The ``$defs`` name of each model (pydantic would name them by their class)."""
_NAMED = ("properties", "$defs", "patternProperties")
"""Keywords whose value maps names to schemas (a ``title`` there is a name, not a title)."""


def _tidy(node: Any, renames: dict[str, str], nulls: bool, named: bool = False) -> Any:
    """``node`` without pydantic's generated titles (and ``"default": null`` unless ``nulls``),
    its ``$ref``s renamed, its descriptions one line of Markdown (docstrings are reST)."""
    if isinstance(node, list):
        return [_tidy(item, renames, nulls) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if named:
            out[key] = _tidy(value, renames, nulls)
            continue
        if key == "title" or (key == "default" and value is None and not nulls):
            continue
        if key == "$ref" and isinstance(value, str):
            value = renames.get(value, value)
        if key == "description" and isinstance(value, str):
            value = " ".join(value.replace("``", "`").split())
        out[key] = _tidy(value, renames, nulls, named=key in _NAMED)
    return out


def _models() -> dict[str, Any]:
    """The definitions of the spec and the profile, and of what they are made of."""
    defs: dict[str, Any] = {}
    renames = {}
    for name, model in MODELS.items():
        found = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(found.pop("$defs", {}))
        defs[model.__name__] = found
        renames[f"#/$defs/{model.__name__}"] = f"#/$defs/{name}"
    unnamed = set(defs) - {model.__name__ for model in MODELS.values()}
    if unnamed:
        raise ValueError(f"models without a $defs name in MODELS: {sorted(unnamed)}")
    return {name: _tidy(defs[model.__name__], renames, False) for name, model in MODELS.items()}


def _settings() -> dict[str, Any]:
    """``settings.harnessweaver.<name>`` of every built-in middleware with a config."""
    defs: dict[str, Any] = {}
    for middleware in plugin.middleware:
        spec = spec_of(middleware)
        if spec is None or spec.config is None:
            continue
        name = f"settings.{plugin.namespace}.{spec.name}"
        found = spec.config.model_json_schema(ref_template=f"#/$defs/{name}.{{model}}")
        inner = found.pop("$defs", {})
        defs[name] = _tidy(found, {}, True)  # a null default is a setting's real default
        defs.update({f"{name}.{key}": _tidy(value, {}, True) for key, value in inner.items()})
    return defs


def harness_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "$comment": "Generated from harnessweaver.spec.schema and the built-ins' settings by "
        "tools/harness_schema.py: do not edit.",
        "title": "harnessweaver harness spec or profile",
        "description": "harness.yaml (#/$defs/spec) or a profile file (#/$defs/profile); "
        "docs/harness-spec.md. The structure only: values (bands, durations, hook points, "
        "modes, settings) are checked by the loader.",
        "anyOf": [{"$ref": "#/$defs/spec"}, {"$ref": "#/$defs/profile"}],
        "$defs": _models() | _settings(),
    }


def generated_text() -> str:
    return json.dumps(harness_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the committed file")
    args = parser.parse_args(argv)
    text = generated_text()
    if args.check:
        current = SCHEMA.read_text(encoding="utf-8") if SCHEMA.exists() else ""
        if current != text:
            print(f"{SCHEMA} is not generated: run python tools/harness_schema.py")
            return 1
        return 0
    SCHEMA.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
