"""Plugins: a namespace and a version around a set of middleware (``namespace.name``), and
the profiles the plugin ships (``profile://namespace.name`` in a harness spec)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

from .errors import DeclarationError
from .middleware import spec_of

__all__ = ["Plugin", "ProfileSource"]

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROFILE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

ProfileSource: TypeAlias = Path | Mapping[str, Any]
"""A plugin profile: the path of its YAML file, or the profile itself as a mapping."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """``hw.Plugin(namespace="acme", version="1.0.0", middleware=[...], profiles={...})``.

    A plugin's middleware are addressed as ``namespace.name`` (I1); names are unique within a
    plugin. ``profiles`` maps a profile name to a YAML file (a relative path is relative to the
    file of the module that creates the plugin) or to the profile itself as a mapping; a
    harness spec loads it as ``profile://namespace.name``, in the ``plugin_profile`` layer.
    """

    namespace: str
    version: str
    middleware: tuple[Any, ...] = field(default=())
    profiles: Mapping[str, ProfileSource] = field(default_factory=dict, compare=False)
    _by_name: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        namespace: str,
        version: str,
        middleware: Iterable[Any] = (),
        *,
        profiles: Mapping[str, str | os.PathLike[str] | Mapping[str, Any]] | None = None,
    ) -> None:
        if not isinstance(namespace, str) or _NAMESPACE.fullmatch(namespace) is None:
            raise DeclarationError(
                "invalid_name",
                "I1",
                f"invalid plugin namespace {namespace!r}: a namespace is one identifier, "
                "such as acme (I1)",
            )
        if not isinstance(version, str) or not version.strip():
            raise DeclarationError(
                "invalid_version",
                "I1",
                f"plugin {namespace} needs a version string, got {version!r}",
            )
        items = tuple(middleware)
        by_name: dict[str, Any] = {}
        for item in items:
            spec = spec_of(item)
            if spec is None:
                raise TypeError(
                    f"plugin {namespace}: {item!r} is not middleware (use @hw.middleware)"
                )
            if spec.name in by_name:
                raise DeclarationError(
                    "duplicate_name",
                    "I2",
                    f"plugin {namespace} has two middleware named '{spec.name}' (I2)",
                )
            by_name[spec.name] = item
        setter = object.__setattr__
        setter(self, "namespace", namespace)
        setter(self, "version", version)
        setter(self, "middleware", items)
        setter(self, "profiles", _profiles(namespace, profiles or {}, _caller_file()))
        setter(self, "_by_name", by_name)

    def names(self) -> tuple[str, ...]:
        """The full names, ``namespace.name``, in declaration order."""
        return tuple(f"{self.namespace}.{name}" for name in self._by_name)

    def get(self, name: str) -> Any:
        """The middleware called ``name`` or ``namespace.name``."""
        short = name.removeprefix(f"{self.namespace}.")
        try:
            return self._by_name[short]
        except KeyError:
            known = ", ".join(self.names())
            raise KeyError(
                f"plugin {self.namespace} has no middleware {name!r}; it has {known}"
            ) from None

    def full_name(self, middleware: Any) -> str:
        """``namespace.name`` of one of this plugin's middleware."""
        spec = spec_of(middleware)
        if spec is None or self._by_name.get(spec.name) is not middleware:
            raise KeyError(f"{middleware!r} is not middleware of plugin {self.namespace}")
        return f"{self.namespace}.{spec.name}"

    def profile(self, name: str) -> ProfileSource:
        """The profile called ``name``: its file's path, or the profile as a mapping."""
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(self.profiles) or "none"
            raise KeyError(
                f"plugin {self.namespace} has no profile {name!r}; it has {known}"
            ) from None


def _caller_file() -> str | None:
    """The file of the module that called ``Plugin(...)`` (two frames up from here)."""
    found = sys._getframe(2).f_globals.get("__file__")
    return found if isinstance(found, str) else None


def _profiles(
    namespace: str, given: Mapping[str, object], module_file: str | None
) -> Mapping[str, ProfileSource]:
    if not isinstance(given, Mapping):
        raise DeclarationError(
            "invalid_profile",
            "plugins",
            f"plugin {namespace}: profiles must map a profile name to a file or a mapping, "
            f"got {given!r}",
        )
    resolved: dict[str, ProfileSource] = {}
    for name, source in given.items():
        if not isinstance(name, str) or _PROFILE_NAME.fullmatch(name) is None:
            raise DeclarationError(
                "invalid_name",
                "I1",
                f"plugin {namespace}: invalid profile name {name!r}: a profile name is an "
                "identifier, hyphens allowed, such as baseline or safe-tools (I1)",
            )
        resolved[name] = _profile_source(namespace, name, source, module_file)
    return MappingProxyType(resolved)


def _profile_source(
    namespace: str, name: str, source: object, module_file: str | None
) -> ProfileSource:
    if isinstance(source, Mapping):
        return MappingProxyType(dict(source))
    if not isinstance(source, str | os.PathLike):
        raise DeclarationError(
            "invalid_profile",
            "plugins",
            f"plugin {namespace}: profile {name!r} must be a path or a mapping, got {source!r}",
        )
    path = Path(source)
    if path.is_absolute():
        return path
    if module_file is None:
        raise DeclarationError(
            "invalid_profile",
            "plugins",
            f"plugin {namespace}: profile {name!r} has the relative path {str(path)!r} but the "
            "plugin is not created in a module file; give an absolute path",
        )
    return Path(module_file).resolve().parent / path
