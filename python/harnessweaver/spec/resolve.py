"""Finding what a spec names: plugins (in-repo modules, entry points) and profiles.

Plugins listed anywhere (the spec or any profile) are available to every item; the built-in
plugin, namespace ``harnessweaver``, always is. Profiles are ``org://path`` (searched in the
org-profile directories), ``profile://namespace.name`` (a plugin's), ``profile://name`` (a
built-in one) or a file path relative to the spec.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import logging
import os
import re
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from types import ModuleType
from typing import Any

from ..plugin import Plugin
from .errors import Problems
from .importfail import described
from .limits import MAX_BYTES
from .model import PROFILE_KEYS, Document, Ref
from .yaml import YamlProblem, parse_yaml

__all__ = [
    "BUILTIN_NAMESPACE",
    "ENTRY_POINT_GROUP",
    "NO_ORG_DIRS",
    "ORG_PROFILES_ENV",
    "Context",
    "Plugins",
    "Profile",
    "builtin_profiles",
    "find_profile",
]

_log = logging.getLogger(__name__)

BUILTIN_NAMESPACE = "harnessweaver"
ENTRY_POINT_GROUP = "harnessweaver.plugins"
ORG_PROFILES_ENV = "HARNESSWEAVER_ORG_PROFILES"
NO_ORG_DIRS = "no org-profile directories are set"
"""How the problem of an ``org://`` profile with no directory to look in begins."""
_ORG_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")
_PLUGIN_PROFILE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_-]*)")


@dataclass(frozen=True, slots=True)
class Context:
    """One load: the spec's directory, the org-profile directories, the problems found."""

    root: Path
    org_dirs: tuple[Path, ...]
    problems: Problems

    @classmethod
    def of(cls, spec: Path, org_dirs: Iterable[str | os.PathLike[str]] | None) -> Context:
        if org_dirs is None:
            found = os.environ.get(ORG_PROFILES_ENV, "").split(os.pathsep)
            org_dirs = [entry for entry in found if entry.strip()]
        dirs = tuple(Path(entry).resolve() for entry in org_dirs)
        return cls(spec.resolve().parent, dirs, Problems())

    def display(self, path: Path) -> str:
        """``path`` relative to the spec's directory when it is inside it, else absolute."""
        full = path.resolve()
        try:
            return full.relative_to(self.root).as_posix()
        except ValueError:
            return full.as_posix()

    def read(
        self, source: Path | Traversable, file: str, keys: Collection[str]
    ) -> tuple[bool, object]:
        """The YAML content of a file: ``(True, value)``, or ``(False, None)`` and a problem.

        ``keys`` are the top-level keys of what the file should be. Nothing of a file that is
        not known to be one is quoted (its content might be anyone's: a spec can name any
        path); a file of more than :data:`MAX_BYTES` is not parsed at all.
        """
        try:
            with source.open("rb") as stream:
                data = stream.read(MAX_BYTES + 1)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            self.problems.add(file, "", None, "unreadable_yaml", f"cannot read the file: {reason}")
            return False, None
        _log.debug("read %s: %d bytes", file, len(data))
        if len(data) > MAX_BYTES:
            message = f"the file is larger than {MAX_BYTES:,} bytes"
            self.problems.add(file, "", None, "too_large", message)
            return False, None
        try:
            return True, parse_yaml(data.decode("utf-8"), keys)
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            message = "cannot read the file: not UTF-8 text"
            self.problems.add(file, "", line, "unreadable_yaml", message)
        except YamlProblem as exc:
            message = exc.shown if exc.kind != "unreadable_yaml" else f"not YAML: {exc.shown}"
            self.problems.add(file, "", exc.line, exc.kind, message)
        return False, None


def _import(name: str, base: Path) -> ModuleType:
    """Import module ``name`` with ``base`` (the listing file's directory) on ``sys.path``."""
    entry = str(base)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        return importlib.import_module(name)
    finally:
        if added:
            sys.path.remove(entry)


def _offered(module: ModuleType) -> list[object] | None:
    """What a plugin module offers: its ``plugin``, or the items of its ``plugins``; ``None``
    when it has neither. Read inside the import's guard: a module ``__getattr__`` may raise."""
    plugin = getattr(module, "plugin", None)
    if isinstance(plugin, Plugin):
        return [plugin]
    plugins = getattr(module, "plugins", None)
    return list(plugins) if isinstance(plugins, list | tuple) else None


class Plugins:
    """The plugins loaded so far, by namespace."""

    def __init__(self, problems: Problems) -> None:
        from ..builtins import plugin

        self.problems = problems
        self.loaded: dict[str, tuple[Plugin, str]] = {BUILTIN_NAMESPACE: (plugin, "built in")}

    def load(self, doc: Document, base: Path) -> None:
        """The plugins a document lists: its in-repo modules, then its installed namespaces."""
        for ref in doc.local:
            self._local(ref, base)
        for ref in doc.installed:
            self._installed(ref)

    def _problem(self, ref: Ref, kind: str, message: str) -> None:
        self.problems.add(ref.file, ref.where, ref.line, kind, message)

    def _add(self, plugin: object, ref: Ref, origin: str) -> None:
        if not isinstance(plugin, Plugin):
            self._problem(ref, "plugin_import_error", f"{origin} gives {plugin!r}, not a Plugin")
            return
        known = self.loaded.get(plugin.namespace)
        if known is None:
            self.loaded[plugin.namespace] = (plugin, origin)
        elif known[0] is not plugin:
            self._problem(
                ref,
                "duplicate_plugin",
                f"{origin} gives plugin namespace {plugin.namespace!r}, which {known[1]} "
                "already gives",
            )

    def _local(self, ref: Ref, base: Path) -> None:
        try:
            module = _import(ref.value, base)
            offered = _offered(module)
        except KeyboardInterrupt:  # Ctrl-C stops the load, as anywhere (docs/harness-spec.md)
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit...: the plugin's, not ours
            message = f"cannot import {ref.value}: {described(exc)}"
            self._problem(ref, "plugin_import_error", message)
            return
        origin = f"module {ref.value}"
        if offered is None:
            message = f"module {ref.value} has no `plugin` (an hw.Plugin) or `plugins` (a list)"
            self._problem(ref, "plugin_import_error", message)
            return
        for plugin in offered:
            self._add(plugin, ref, origin)

    def _installed(self, ref: Ref) -> None:
        found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        chosen = [ep for ep in found if ep.name == ref.value]
        if not chosen:
            names = sorted({ep.name for ep in found})
            close = difflib.get_close_matches(ref.value, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self._problem(
                ref,
                "unknown_plugin",
                f"no installed plugin {ref.value!r}: no entry point of that name in the group "
                f"{ENTRY_POINT_GROUP} (installed: {', '.join(names) or 'none'}){hint}",
            )
            return
        origin = f"entry point {ref.value} ({chosen[0].value})"
        try:
            loaded: Any = chosen[0].load()
            plugin = loaded if isinstance(loaded, Plugin) or not callable(loaded) else loaded()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # as for a local module: the type, never the message
            self._problem(ref, "plugin_import_error", f"{origin}: {described(exc)}")
            return
        if isinstance(plugin, Plugin) and plugin.namespace != ref.value:
            message = f"{origin} gives plugin namespace {plugin.namespace!r}, not {ref.value!r}"
            self._problem(ref, "plugin_import_error", message)
            return
        self._add(plugin, ref, origin)

    def find(self, use: str) -> tuple[Any, str]:
        """The middleware ``use`` names, or ``None`` and why not."""
        namespace = use.partition(".")[0]
        loaded = self.loaded.get(namespace)
        if loaded is not None and use in loaded[0].names():
            return loaded[0].get(use), ""
        everything = [full for plugin, _ in self.loaded.values() for full in plugin.names()]
        close = difflib.get_close_matches(use, everything, n=2, cutoff=0.8)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        if loaded is None:
            plugins = ", ".join(sorted(self.loaded))
            why = f"no plugin {namespace!r} is loaded (the plugins are {plugins})"
        else:
            why = f"plugin {namespace} has {', '.join(loaded[0].names())}"
        return None, f"unknown middleware {use!r}: {why}{hint}"


@dataclass(frozen=True, slots=True)
class Profile:
    """A profile found: the layer it declares in, its file as shown, its content."""

    layer: str
    file: str
    base: Path
    content: object


def builtin_profiles() -> dict[str, Traversable]:
    """The built-in profiles shipped in ``harnessweaver/profiles/``, by name."""
    folder = files("harnessweaver").joinpath("profiles")
    found = {
        entry.name.removesuffix(".yaml"): entry
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    }
    return dict(sorted(found.items()))


def find_profile(ref: Ref, ctx: Context, plugins: Plugins) -> Profile | None:
    """The profile ``ref`` names, read; ``None`` (and a problem) when it cannot be."""
    text = ref.value
    if text.startswith("org://"):
        return _org(ref, text.removeprefix("org://"), ctx)
    if text.startswith("profile://"):
        name = text.removeprefix("profile://")
        if "." in name:
            return _plugin_profile(ref, name, ctx, plugins)
        return _builtin(ref, name, ctx)
    if "://" in text:
        return _unknown(ref, ctx, "a profile is org://…, profile://… or a file path")
    path = ctx.root / text
    if not path.is_file():
        return _unknown(ref, ctx, f"no profile file {text!r} (looked for {path.as_posix()})")
    return _read(ref, "profile_file", path, ctx)


def _unknown(ref: Ref, ctx: Context, why: str) -> Profile | None:
    """No profile: an ``unknown_profile`` problem saying ``why``."""
    ctx.problems.add(ref.file, ref.where, ref.line, "unknown_profile", f"{ref.value}: {why}")
    return None


def _read(ref: Ref, layer: str, path: Path, ctx: Context) -> Profile | None:
    file = ctx.display(path)
    ok, content = ctx.read(path, file, PROFILE_KEYS)
    return Profile(layer, file, path.resolve().parent, content) if ok else None


def _org(ref: Ref, path: str, ctx: Context) -> Profile | None:
    if _ORG_PATH.fullmatch(path) is None or ".." in path.split("/"):
        return _unknown(ref, ctx, "an org profile is org://<dir>/<name>, such as org://acme/base")
    if not ctx.org_dirs:
        return _unknown(
            ref,
            ctx,
            f"{NO_ORG_DIRS}: pass org_profiles=[...] to hw.load, "
            f"--org-profiles to harnessweaver hooks, or set {ORG_PROFILES_ENV}",
        )
    for folder in ctx.org_dirs:
        candidate = folder / f"{path}.yaml"
        if candidate.is_file():
            return _read(ref, "org_profile", candidate, ctx)
    looked = ", ".join(folder.as_posix() for folder in ctx.org_dirs)
    return _unknown(ref, ctx, f"no {path}.yaml in the org-profile directories ({looked})")


def _plugin_profile(ref: Ref, name: str, ctx: Context, plugins: Plugins) -> Profile | None:
    parts = _PLUGIN_PROFILE.fullmatch(name)
    if parts is None:
        return _unknown(ref, ctx, "a plugin profile is profile://<namespace>.<profile>")
    namespace, profile = parts.groups()
    loaded = plugins.loaded.get(namespace)
    if loaded is None:
        return _unknown(ref, ctx, f"no plugin {namespace!r} is loaded (list it under plugins:)")
    source = loaded[0].profiles.get(profile)
    if source is None:
        names = ", ".join(loaded[0].profiles) or "none"
        return _unknown(ref, ctx, f"plugin {namespace} has no profile {profile!r} (it has {names})")
    if isinstance(source, Mapping):
        return Profile("plugin_profile", ref.value, ctx.root, dict(source))
    return _read(ref, "plugin_profile", source, ctx)


def _builtin(ref: Ref, name: str, ctx: Context) -> Profile | None:
    found = builtin_profiles()
    if name not in found:
        close = difflib.get_close_matches(name, list(found), n=1)
        hint = f"; did you mean profile://{close[0]}?" if close else ""
        names = ", ".join(f"profile://{known}" for known in found)
        return _unknown(ref, ctx, f"no built-in profile {name!r} (there are {names}){hint}")
    file = f"harnessweaver/profiles/{name}.yaml"
    ok, content = ctx.read(found[name], file, PROFILE_KEYS)
    return Profile("builtin_profile", file, ctx.root, content) if ok else None
