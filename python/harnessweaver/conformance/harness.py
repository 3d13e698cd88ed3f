"""Spec-level cases (``given.harness``, INTERPRETING.md §2): a harness spec loaded by the loader.

The case's files are written under a fresh directory (the root), its scripted plugins are made
reachable the way the loader finds plugins — a module file at the dotted name under the
spec's folder for ``local``, an entry point of the group ``harnessweaver.plugins`` (a
``*.dist-info`` on ``sys.path``) for ``installed`` — and ``hw.load`` loads the spec. Each
plugin module hands the loader a :class:`~harnessweaver.Plugin` the runner made: its
middleware are classes whose ``__call__`` does the declaration's behaviour (§3) and whose
``config``, when the declaration has ``settings``, is a pydantic model made from that JSON
Schema. Nothing stays behind: the modules, ``sys.path`` entries and files of a case go with it.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

import harnessweaver as hw

from .behaviours import RAN, Behaviours, CaseFault

__all__ = ["HarnessCase", "problem_json", "scripted", "settings_model"]

_MADE: dict[str, hw.Plugin] = {}
"""The plugins of the cases in progress, by the token their module file names."""
_MODULE = "from harnessweaver.conformance.harness import scripted\n\nplugin = scripted({!r})\n"
_TYPES: dict[str, Any] = {"integer": int, "number": float, "string": str, "boolean": bool}


_BASE: list[Path] = []


def _root(given: Mapping[str, Any]) -> Path:
    """A fresh, empty directory for a case's files, named after the case: a case run twice
    (under asyncio, then trio) has the same paths, so its problems' messages, which may name
    them, are the same."""
    if not _BASE:
        _BASE.append(Path(tempfile.mkdtemp(prefix="hwcases-")).resolve())
        atexit.register(shutil.rmtree, _BASE[0], True)
    digest = hashlib.sha256(json.dumps(given, sort_keys=True).encode()).hexdigest()[:16]
    root = _BASE[0] / digest
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    return root


def scripted(token: str) -> hw.Plugin:
    """The plugin a case's module file stands for (called by that file as it is imported)."""
    return _MADE[token]


def _field_type(schema: Mapping[str, Any], where: str) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    if kind == "array":
        return list[_field_type(schema.get("items", {"type": "string"}), where)]  # type: ignore[misc]
    if kind not in _TYPES:
        raise CaseFault(f"settings of {where}: type {kind!r} is not one of §2's")
    return _TYPES[kind]


def settings_model(schema: Mapping[str, Any], where: str) -> type[BaseModel]:
    """A pydantic model validating as the JSON Schema of §2 does: no coercion (strict), no
    unknown keys, a key that is neither required nor defaulted may be left out."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for key, spec in schema.get("properties", {}).items():
        bounds = {"ge": spec.get("minimum"), "le": spec.get("maximum")}
        bounds = {k: v for k, v in bounds.items() if v is not None}
        default = ... if key in required else spec.get("default")
        fields[key] = (_field_type(spec, where), Field(default, **bounds))
    config = ConfigDict(extra="forbid", strict=True, frozen=True)
    model: type[BaseModel] = create_model(f"Settings_{len(_MADE)}", __config__=config, **fields)
    return model


def problem_json(problem: hw.Problem) -> dict[str, Any]:
    return {
        "file": problem.file,
        "item": problem.item,
        "line": problem.line,
        "kind": problem.kind,
        "rule": problem.rule,
        "message": problem.message,
    }


def problems_json(error: hw.SpecError) -> list[dict[str, Any]]:
    """The problems in the order of §6.1: file, line (none first), item, kind, rule."""
    found = [problem_json(p) for p in error.problems]
    return sorted(
        found,
        key=lambda p: (
            p["file"],
            p["line"] is not None,
            p["line"] or 0,
            p["item"],
            p["kind"],
            p["rule"],
        ),
    )


class HarnessCase:
    """One ``given.harness``: ``with HarnessCase(given, behaviours) as case: await case.load()``."""

    def __init__(
        self,
        given: Mapping[str, Any],
        behaviours: Behaviours,
        emitted: Callable[[], int] = lambda: 0,
    ) -> None:
        self.given = given
        self.emitted = emitted
        self.behaviours = behaviours
        self.root = _root(given)
        self.tokens: list[str] = []
        self.site = self.root.parent / f"{self.root.name}-site"
        shutil.rmtree(self.site, ignore_errors=True)
        self.saved: dict[str, Any] = {}
        self.built: dict[str, list[str]] = {}
        """The registered names of each ``use``, in registration order (after loading)."""

    def __enter__(self) -> HarnessCase:
        for name, text in self.given.get("files", {}).items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for plugin in self.given.get("plugins", []):
            self._plugin(plugin)
        importlib.invalidate_caches()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for name, module in list(sys.modules.items()):
            where = getattr(module, "__file__", None) or ""
            if where.startswith((str(self.root), str(self.site))):
                del sys.modules[name]
        sys.modules.update(self.saved)
        if str(self.site) in sys.path:
            sys.path.remove(str(self.site))
        for token in self.tokens:
            _MADE.pop(token, None)
        for folder in list(sys.path_importer_cache):
            if folder.startswith((str(self.root), str(self.site))):
                del sys.path_importer_cache[folder]
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.site, ignore_errors=True)
        importlib.invalidate_caches()

    @property
    def spec(self) -> str:
        return str(self.given.get("spec", "harness.yaml"))

    async def load(self) -> hw.Harness:
        """``hw.load`` of the case's spec, with its task, env and org-profile directories, on
        the case's scripted store when it gives one (``state``, I33)."""
        folders = [self.root / folder for folder in self.given.get("org_profiles", [])]
        options: dict[str, Any] = {}
        if "state" in self.given:
            from .state import ScriptedStore

            scripted = ScriptedStore(self.given["state"].get("down", []), self.emitted)
            await scripted.seed(self.given["state"].get("seed", {}))
            options["open_state"] = lambda config: scripted
        harness = hw.load(
            self.root / self.spec,
            task=self.given.get("task"),
            env=self.given.get("env"),
            org_profiles=folders,
            **options,
        )
        for entry in harness.entries:
            if entry.use is not None:
                self.built.setdefault(entry.use, []).append(entry.name)
        return harness

    def document(self, harness: hw.Harness) -> dict[str, Any]:
        """What ``harnessweaver hooks --format json`` prints for it, the spec as written."""
        shown: dict[str, Any] = json.loads(harness.render("json"))
        shown["spec"] = self.spec
        return shown

    def _plugin(self, given: Mapping[str, Any]) -> None:
        token = f"{self.root.name}_{len(self.tokens)}"
        namespace = given["namespace"]
        middleware = [self._middleware(namespace, decl) for decl in given.get("middleware", [])]
        profiles = {
            name: json.loads(json.dumps(_yaml(text)))
            for name, text in given.get("profiles", {}).items()
        }
        _MADE[token] = hw.Plugin(namespace, given["version"], middleware, profiles=profiles)
        self.tokens.append(token)
        if "local" in given:
            self._local(given["local"], token)
        else:
            self._installed(given["installed"], token)

    def _local(self, dotted: str, token: str) -> None:
        """``<spec folder>/a/b.py`` for ``a.b`` (with ``__init__.py`` on the way, so that no
        package of that name elsewhere on ``sys.path`` is found instead)."""
        top = dotted.partition(".")[0]
        for name in [n for n in sys.modules if n == top or n.startswith(f"{top}.")]:
            self.saved[name] = sys.modules.pop(name)  # a module of that name already imported
        folder = (self.root / self.spec).parent
        *packages, module = dotted.split(".")
        for package in packages:
            folder = folder / package
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").touch()
        (folder / f"{module}.py").write_text(_MODULE.format(token), encoding="utf-8")

    def _installed(self, name: str, token: str) -> None:
        """An entry point ``name`` of the group ``harnessweaver.plugins``: a distribution's
        ``entry_points.txt`` in a folder put on ``sys.path``."""
        module = f"_hwcase_{token}"
        self.site.mkdir(exist_ok=True)
        (self.site / f"{module}.py").write_text(_MODULE.format(token), encoding="utf-8")
        info = self.site / f"{module}-1.0.dist-info"
        info.mkdir()
        metadata = f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n"
        (info / "METADATA").write_text(metadata, encoding="utf-8")
        points = f"[harnessweaver.plugins]\n{name} = {module}:plugin\n"
        (info / "entry_points.txt").write_text(points, encoding="utf-8")
        if str(self.site) not in sys.path:
            sys.path.append(str(self.site))

    def _middleware(self, namespace: str, decl: Mapping[str, Any]) -> type:
        """A middleware class doing ``decl["does"]``; each instance (one per item the loader
        builds, in registration order) says the name its item is registered under in ``ran``."""
        use = f"{namespace}.{decl['name']}"
        does = decl.get("does", {"return": "none"})
        behaviours, built = self.behaviours, self.built
        made: list[object] = []

        def registered(index: int) -> str:
            names = built.get(use, [])
            return names[index] if index < len(names) else use

        class Scripted:
            def __init__(self, config: BaseModel | None = None) -> None:
                self.index = len(made)
                made.append(self)

            async def __call__(self, event: Any, env: hw.Envelope) -> Any:
                RAN.get().append(registered(self.index))
                return await behaviours.perform(does, event, env)

        keys = ("hooks", "fail_mode", "band", "timeout", "match", "mode")
        declared = {key: decl[key] for key in keys if key in decl}
        config = settings_model(decl["settings"], use) if "settings" in decl else None
        wrap: Callable[[type], type] = hw.middleware(name=decl["name"], config=config, **declared)
        return wrap(Scripted)


def _yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)
