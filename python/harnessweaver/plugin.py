"""Plugins: a namespace and a version around a set of middleware (``namespace.name``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import DeclarationError
from .middleware import spec_of

__all__ = ["Plugin"]

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Plugin:
    """``hw.Plugin(namespace="acme", version="1.0.0", middleware=[...])``.

    A plugin's middleware are addressed as ``namespace.name`` (I1); names are unique within a
    plugin.
    """

    namespace: str
    version: str
    middleware: tuple[Any, ...] = field(default=())
    _by_name: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __init__(self, namespace: str, version: str, middleware: Iterable[Any] = ()) -> None:
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
