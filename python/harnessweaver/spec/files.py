"""Files an item's middleware reads when the spec loads (a built-in's policies, I38).

Settings are validated with a pydantic validation context holding :data:`FOLDER`, the folder
of the file that declares the item: a settings model resolves its relative paths against it,
reads and compiles them once, there. What it finds wrong it raises as a :class:`LoadProblem`
(not a ``ValueError``: pydantic lets it through unwrapped), which the loader reports as a
problem of the item's key, its message starting ``<file>:<line>: ``. A validated config that
read files says which with ``loaded_files()`` (:class:`LoadsFiles`), shown by ``harnessweaver
hooks`` under ``loads``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import ValidationInfo

__all__ = ["FOLDER", "LoadProblem", "LoadsFiles", "folder_of"]

FOLDER = "harnessweaver.folder"
"""The validation-context key of the declaring file's folder (a :class:`~pathlib.Path`)."""


class LoadProblem(Exception):
    """What is wrong with a file an item loads (or with a setting that says how to load it).

    ``key`` is the item's setting at fault (its line is the problem's line); ``file`` and
    ``line`` start the message (the file as the spec writes it, the 1-based line in it);
    ``None`` for ``file`` means the declaring file itself at ``key``'s line. ``kind`` is the
    problem's kind, whose rule closes the message."""

    def __init__(
        self, kind: str, key: str, message: str, file: str | None = None, line: int = 1
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.key = key
        self.message = message
        self.file = file
        self.line = line


@runtime_checkable
class LoadsFiles(Protocol):
    """A validated config that read files when the spec loaded."""

    def loaded_files(self) -> tuple[str, ...]:
        """The files read, as the spec writes their paths."""
        ...


def folder_of(info: ValidationInfo) -> Path | None:
    """The declaring file's folder, when the loader validates; ``None`` in code."""
    context = info.context
    if isinstance(context, dict):
        folder = context.get(FOLDER)
        if isinstance(folder, Path):
            return folder
    return None
