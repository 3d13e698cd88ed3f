"""The parsed form of a harness spec and of a profile: documents, references and items.

Parsing checks shapes only (a mapping where one is needed, known keys, ``use`` present,
``enabled`` a boolean) and records every problem; what the names refer to, the layer rules
and the settings are checked later, once plugins and profiles are loaded. The known keys are
the fields of the models of :mod:`.schema`, which ``harness.schema.json`` is generated from.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import schema
from .errors import Problems
from .yaml import line_of, plain, shown

__all__ = ["RESERVED", "Document", "Item", "Provenance", "Ref", "parse_profile", "parse_spec"]

SPEC_KEYS = tuple(schema.Spec.model_fields)
PROFILE_KEYS = tuple(schema.Profile.model_fields)
RESERVED = tuple(schema.Item.model_fields)
"""The keys of an item that are not settings."""
LAYER_KEYS = schema.LAYER_KEYS
_PLUGIN_KEYS = tuple(schema.Plugins.model_fields)
_ENV_KEYS = tuple(schema.Env.model_fields)
_TASK_KEYS = tuple(schema.Task.model_fields)
_VALIDATION_KEYS = tuple(schema.Validation.model_fields)
_LONG = 80
"""A ``use`` longer than this is cut short where it names its item."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an item was declared: its layer (I13), its file and line."""

    layer: str
    file: str
    line: int | None

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Ref:
    """A string in a list of the spec: a plugin module or namespace, or a profile."""

    value: str
    where: str
    file: str
    line: int | None


@dataclass(frozen=True, slots=True)
class Item:
    """One middleware item: ``use``, ``id`` and the layer keys as written, and its settings."""

    where: str
    use: str
    id: object
    label: str
    enabled: bool
    keys: Mapping[str, Any]
    settings: Mapping[str, Any]
    source: Provenance
    key_lines: Mapping[str, int] = field(default_factory=dict)

    def line(self, key: str | None = None) -> int | None:
        """The line of ``key`` in the item, or of the item."""
        return self.key_lines.get(key, self.source.line) if key else self.source.line


@dataclass(frozen=True, slots=True)
class Document:
    """A harness spec or a profile, parsed: what it loads and what it declares."""

    file: str
    local: tuple[Ref, ...] = ()
    installed: tuple[Ref, ...] = ()
    profiles: tuple[Ref, ...] = ()
    middleware: tuple[Item, ...] = ()
    envs: Mapping[str, tuple[Item, ...]] = field(default_factory=dict)
    tasks: Mapping[str, tuple[Item, ...]] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)
    """The line of each top-level key."""
    contracts: object = None
    """The spec's ``contracts:`` (the hook-contract mode) as written; checked by the loader."""
    identity: object = None
    """The spec's ``identity:`` (the content-identity scheme, I27) as written; checked by the
    loader."""
    deadlines: object = None
    """The spec's ``deadlines:`` (chain deadlines per hook point, I26) as read, with lines."""
    task_deadlines: Mapping[str, object] = field(default_factory=dict)
    """Each task's ``deadlines:`` as read (checked for every task, selected or not)."""
    mode: object = None
    """The spec's harness-wide ``mode:`` (I25) as written; checked by the loader."""
    state: object = None
    """The spec's ``state:`` (the state store, docs/state.md) as read, with lines; checked
    by the loader."""
    approvals: object = None
    """The spec's ``approvals:`` (durable approvals, docs/approvals.md) as read, with lines;
    checked by the loader."""
    env_modes: Mapping[str, object] = field(default_factory=dict)
    """Each env overlay's ``mode:`` as written (absent when it gives none)."""
    env_lines: Mapping[str, int | None] = field(default_factory=dict)
    """The line of each env overlay's ``mode:``."""
    task_modes: Mapping[str, object] = field(default_factory=dict)
    """Each task's ``mode:`` as written (absent when it gives none)."""
    task_lines: Mapping[str, int | None] = field(default_factory=dict)
    """The line of each task's ``mode:``."""


Label = Callable[[str], str]
_KINDS = {
    "YamlList": "a list",
    "list": "a list",
    "str": "text",
    "bool": "true or false",
    "int": "a number",
    "float": "a number",
    "bytes": "binary data",
    "datetime": "a date",
    "date": "a date",
    "set": "a set",
}
"""What a file's top level holds, as a problem says it (never the value itself)."""


class _Parser:
    def __init__(self, file: str, problems: Problems) -> None:
        self.file = file
        self.problems = problems

    def problem(self, where: str, line: int | None, kind: str, message: str) -> None:
        self.problems.add(self.file, where, line, kind, message)

    def mapping(self, value: object, where: str, line: int | None, what: str) -> Mapping[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.problem(
                where, line_of(value) or line, "not_a_mapping", f"{what}, got {shown(value)}"
            )
            return {}
        for key in value:
            if not isinstance(key, str):
                self.problem(
                    where, line_of(value, key), "bad_item", f"a key must be text: {shown(key)}"
                )
        return value

    def root(self, doc: object, keys: tuple[str, ...], what: str) -> Mapping[Any, Any]:
        """The top level of a spec or a profile. A file that is not one is not quoted at all
        (a spec can name any path as a profile): only what kind of value it holds is said."""
        if doc is None:
            return {}
        if not isinstance(doc, Mapping):
            found = _KINDS.get(type(doc).__name__, "something else")
            self.problem("", line_of(doc), "not_a_mapping", f"{what} is a mapping, got {found}")
            return {}
        if doc and not any(isinstance(key, str) and key in keys for key in doc):
            texts = [key for key in doc if isinstance(key, str)]
            close = [m for key in texts for m in difflib.get_close_matches(key, keys, n=1)]
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"not {what}: none of its keys is {', '.join(keys)}{hint}"
            self.problem("", line_of(doc), "not_a_spec", message)
            return {}
        self.mapping(doc, "", line_of(doc), f"{what} is a mapping")
        self.known(doc, keys, "")
        return doc

    def known(self, value: Mapping[Any, Any], keys: tuple[str, ...], where: str) -> None:
        for key in value:
            if isinstance(key, str) and key not in keys:
                close = difflib.get_close_matches(key, keys, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                self.problem(
                    where,
                    line_of(value, key),
                    "unknown_key",
                    f"unknown key {shown(key)}: the keys are {', '.join(keys)}{hint}",
                )

    def sequence(self, value: object, where: str, line: int | None, what: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(where, line_of(value) or line, "bad_item", f"{what}, got {shown(value)}")
            return []
        return value

    def refs(self, value: object, where: str, line: int | None, what: str) -> tuple[Ref, ...]:
        found = []
        for i, entry in enumerate(self.sequence(value, where, line, f"{what} is a list")):
            at = line_of(value, i) or line
            if isinstance(entry, str) and entry.strip():
                found.append(Ref(entry, f"{where}[{i}]", self.file, at))
            else:
                self.problem(f"{where}[{i}]", at, "bad_item", f"{what}: {shown(entry)}")
        return tuple(found)

    def plugins(self, doc: Mapping[Any, Any]) -> tuple[tuple[Ref, ...], tuple[Ref, ...]]:
        line = line_of(doc, "plugins")
        node = self.mapping(doc.get("plugins"), "plugins", line, "plugins is a mapping")
        self.known(node, _PLUGIN_KEYS, "plugins")
        local = self.refs(node.get("local"), "plugins.local", line, "a module name")
        installed = self.refs(node.get("installed"), "plugins.installed", line, "a namespace")
        return local, installed

    def items(
        self, value: object, where: str, line: int | None, layer: str, label: Label
    ) -> tuple[Item, ...]:
        found = []
        for i, node in enumerate(self.sequence(value, where, line, "a list of items")):
            item = self.item(node, f"{where}[{i}]", line_of(value, i) or line, layer, label, None)
            if item is not None:
                found.append(item)
        return tuple(found)

    def item(
        self,
        node: object,
        where: str,
        line: int | None,
        layer: str,
        label: Label,
        stage: str | None,
    ) -> Item | None:
        what = "an item is a mapping such as {use: acme.refund_cap, max_usd: 500}"
        if not isinstance(node, Mapping):
            self.problem(
                where, line_of(node) or line, "not_a_mapping", f"{what}, got {shown(node)}"
            )
            return None
        self.mapping(node, where, line, what)
        use, enabled = node.get("use"), node.get("enabled", True)
        at = line_of(node) or line
        if isinstance(use, str):
            where = f"{where} ({use if len(use) <= _LONG else shown(use)})"
        ok = isinstance(use, str) and isinstance(enabled, bool)
        ok = ok and all(isinstance(key, str) for key in node)  # else a bad_item already
        if not isinstance(use, str):
            self.problem(
                where, at, "bad_item", f"an item needs `use: namespace.name`, got {shown(use)}"
            )
        if not isinstance(enabled, bool):
            said = line_of(node, "enabled")
            self.problem(where, said, "bad_item", f"enabled is true or false, got {shown(enabled)}")
        keys = {k: plain(node[k]) for k in LAYER_KEYS if node.get(k) is not None}
        if stage is not None:
            if "hooks" in keys and keys["hooks"] != [stage]:
                said = line_of(node, "hooks")
                self.problem(
                    where, said, "bad_item", f"a guardrail of stage {stage} runs on {stage} only"
                )
                ok = False
            keys["hooks"] = [stage]
        if not ok:
            return None
        ident = node.get("id")
        if ident is None:  # `id: null` is no id, like every other reserved key's null
            ident = use
        return Item(
            where=where,
            use=str(use),
            id=plain(ident),
            label=label(ident if isinstance(ident, str) else str(use)),
            enabled=bool(enabled),
            keys=keys,
            settings={k: plain(v) for k, v in node.items() if k not in RESERVED},
            source=Provenance(layer, self.file, at),
            key_lines=dict(getattr(node, "key_lines", {})),
        )

    def named(self, doc: Mapping[Any, Any], key: str) -> Mapping[str, Any]:
        what = f"{key} maps a name to its definition"
        node = self.mapping(doc.get(key), key, line_of(doc, key), what)
        return {k: v for k, v in node.items() if isinstance(k, str)}

    def task(self, name: str, node: object, line: int | None) -> tuple[Item, ...]:
        where = f"tasks.{name}"
        task = self.mapping(node, where, line, "a task is a mapping of guardrails and validation")
        self.known(task, _TASK_KEYS, where)
        at = line_of(task, "guardrails") or line
        stages = self.mapping(task.get("guardrails"), f"{where}.guardrails", at, "guardrails map")
        items: list[Item] = []
        for stage, guards in stages.items():
            if not isinstance(stage, str):
                continue
            place = f"{where}.guardrails.{stage}"
            for i, node_i in enumerate(self.sequence(guards, place, at, "a list of items")):
                label = f"guardrails.{stage}[{{}}]".format
                at_i = line_of(guards, i) or at
                found = self.item(node_i, f"{place}[{i}]", at_i, "task", label, stage)
                items.extend([found] if found else [])
        at = line_of(task, "validation") or line
        rules = self.mapping(task.get("validation"), f"{where}.validation", at, "validation map")
        self.known(rules, _VALIDATION_KEYS, f"{where}.validation")
        label = "validation.rules[{}]".format
        items.extend(self.items(rules.get("rules"), f"{where}.validation.rules", at, "task", label))
        return tuple(items)


def _same(ident: str) -> str:
    return ident


def parse_spec(doc: object, file: str, problems: Problems) -> Document:
    """A harness.yaml's content, parsed; shape problems are added to ``problems``."""
    parser = _Parser(file, problems)
    root = parser.root(doc, SPEC_KEYS, "a harness spec")
    local, installed = parser.plugins(root)
    line = line_of(root, "profiles")
    envs = {}
    env_modes: dict[str, object] = {}
    env_lines: dict[str, int | None] = {}
    for name, node in parser.named(root, "envs").items():
        env = parser.mapping(node, f"envs.{name}", line_of(root, "envs"), "an env is a mapping")
        parser.known(env, _ENV_KEYS, f"envs.{name}")
        if env.get("mode") is not None:  # I25: the overlay's harness-wide mode
            env_modes[name], env_lines[name] = plain(env["mode"]), line_of(env, "mode")
        at = line_of(env, "middleware")
        envs[name] = parser.items(
            env.get("middleware"), f"envs.{name}.middleware", at, "env", _same
        )
    task_nodes = parser.named(root, "tasks")
    tasks = {
        name: parser.task(name, node, line_of(root, "tasks")) for name, node in task_nodes.items()
    }
    task_modes: dict[str, object] = {}
    task_lines: dict[str, int | None] = {}
    for name, node in parser.named(root, "tasks").items():
        if isinstance(node, Mapping) and node.get("mode") is not None:  # I25: the task's mode
            task_modes[name], task_lines[name] = plain(node["mode"]), line_of(node, "mode")
    return Document(
        file=file,
        local=local,
        installed=installed,
        profiles=parser.refs(root.get("profiles"), "profiles", line, "a profile reference"),
        middleware=parser.items(
            root.get("middleware"), "middleware", line_of(root, "middleware"), "app", _same
        ),
        envs=envs,
        tasks=tasks,
        lines=dict(getattr(root, "key_lines", {})),
        contracts=plain(root.get("contracts")),
        identity=plain(root.get("identity")),
        deadlines=root.get("deadlines"),
        task_deadlines={
            name: node.get("deadlines")
            for name, node in task_nodes.items()
            if isinstance(node, Mapping) and node.get("deadlines") is not None
        },
        mode=plain(root.get("mode")),
        state=root.get("state"),
        approvals=root.get("approvals"),
        env_modes=env_modes,
        env_lines=env_lines,
        task_modes=task_modes,
        task_lines=task_lines,
    )


def parse_profile(doc: object, file: str, layer: str, problems: Problems) -> Document:
    """A profile's content (``profile``, ``plugins``, ``middleware``), declared in ``layer``."""
    parser = _Parser(file, problems)
    root = parser.root(doc, PROFILE_KEYS, "a profile")
    name = root.get("profile")
    if name is not None and not isinstance(name, str):
        parser.problem(
            "profile", line_of(root, "profile"), "bad_item", f"a name, got {shown(name)}"
        )
    local, installed = parser.plugins(root)
    at = line_of(root, "middleware")
    items = parser.items(root.get("middleware"), "middleware", at, layer, _same)
    return Document(file=file, local=local, installed=installed, middleware=items)
