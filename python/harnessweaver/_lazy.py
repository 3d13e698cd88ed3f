"""Package namespaces that import on first use (PEP 562).

A coding agent starts ``harnessweaver hook`` once per tool call, and a program that only needs
the bus should not pay for the run loop or the pure-Python core: a package lists where each of
its names lives, and a name's module is imported when the name is first read, then kept in the
package's namespace so later reads are plain attribute reads. ``dir()`` lists every public
name, loaded or not.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module

__all__ = ["homes", "lister", "loader"]


def homes(table: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{module: names}`` turned into ``{name: module}``."""
    return {name: module for module, names in table.items() for name in names}


def loader(
    package: str, home: Mapping[str, str], renamed: Mapping[str, str] | None = None
) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: ``home`` maps a name to its (relative) module,
    ``renamed`` a name to what that module calls it."""
    names = dict(renamed or {})

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), names.get(name, name))
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def lister(package: str, public: Iterable[str]) -> Callable[[], list[str]]:
    """The ``__dir__`` of ``package``: what it holds so far and every ``public`` name."""
    names = frozenset(public)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __dir__
