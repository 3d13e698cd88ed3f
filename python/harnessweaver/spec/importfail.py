"""What a plugin whose import fails is reported as: the kind of exception, never its message.

A plugin is code the spec names, and its import may fail in any way Python allows: an
``Exception``, ``SystemExit`` (a ``sys.exit()`` at import), ``GeneratorExit``, any other
``BaseException`` subclass. Each is a ``plugin_import_error`` problem naming the plugin and
the exception's type; its message may hold anything, a secret included, so it is never shown
(R9). The one exception kept is the module name a ``ModuleNotFoundError`` carries (the usual
mistake: a typo in ``plugins.local``), shown only when it is a module name.

``KeyboardInterrupt`` is not caught: Ctrl-C while a spec loads stops the program, as anywhere.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_TYPE_NAME", "described", "type_name"]

MAX_TYPE_NAME: Final = 128
"""The longest type name shown (I5's bound on a type name)."""

_DOTTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NAME_OF_TYPE: Final = type.__dict__["__name__"]
"""``type.__name__`` itself: a metaclass may give a class a ``__name__`` property of its own,
which could return anything or raise; this reads the name the class was made with (or set)."""
_IMPORT_NAME: Final = ImportError.__dict__["name"]
"""``ImportError.name`` itself (the module not found), not a property a subclass puts there."""


def type_name(exc: BaseException) -> str:
    """The type's own name when it is one (identifiers joined by dots, at most
    :data:`MAX_TYPE_NAME` characters), else ``UnnamedException``: the name I28 records for
    such a failure, and what TypeScript's loader says."""
    name = _NAME_OF_TYPE.__get__(type(exc), type)
    if isinstance(name, str) and len(name) <= MAX_TYPE_NAME and _DOTTED.fullmatch(name):
        return name
    return "UnnamedException"


def described(exc: BaseException) -> str:
    """The failure as a problem says it: ``SystemExit``; ``ModuleNotFoundError: No module
    named 'app.plugn'``; never the exception's message."""
    kind = type_name(exc)
    if issubclass(type(exc), ModuleNotFoundError):  # type(): never the object's __class__
        missing = _IMPORT_NAME.__get__(exc, ImportError)
        if (
            isinstance(missing, str)
            and len(missing) <= MAX_TYPE_NAME
            and _DOTTED.fullmatch(missing)
        ):
            return f"{kind}: No module named {missing!r}"
    return f"{kind} (its message is not shown)"
