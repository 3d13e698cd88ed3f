"""Where the conformance report is printed: through ``rich`` when it is installed (the
``conformance`` extra: a coloured table on a terminal), as plain text when it is not.

``rich`` is the only thing that needs it, so it is an extra rather than a dependency of every
harness. Both consoles print the same lines: the case table (one row per case, one column per
implementation), and texts with an optional style that only ``rich`` renders. Off a terminal
``rich`` prints no colour and no escape sequences either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TextIO

__all__ = ["Console", "PlainConsole", "RichConsole", "make_console"]


class Console(Protocol):
    """What the report prints with."""

    def text(self, *parts: tuple[str, str | None], style: str | None = None) -> None:
        """One text (may span lines) made of ``(text, style)`` parts; ``style`` applies to
        the whole of it."""

    def table(
        self, title: str, columns: Sequence[str], rows: Sequence[Sequence[tuple[str, str | None]]]
    ) -> None:
        """A table: ``columns`` headed, each row's cells ``(text, style)``."""


class PlainConsole:
    """Plain text, aligned columns, no styles: ``rich`` is not installed."""

    __slots__ = ("_file",)

    def __init__(self, file: TextIO) -> None:
        self._file = file

    def text(self, *parts: tuple[str, str | None], style: str | None = None) -> None:
        print("".join(text for text, _ in parts), file=self._file)

    def table(
        self, title: str, columns: Sequence[str], rows: Sequence[Sequence[tuple[str, str | None]]]
    ) -> None:
        cells = [list(columns), *([text for text, _ in row] for row in rows)]
        widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]

        def show(line: list[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))

        print(title, file=self._file)
        print(show(cells[0]).rstrip(), file=self._file)
        print("  ".join("-" * width for width in widths), file=self._file)
        for line in cells[1:]:
            print(show(line).rstrip(), file=self._file)


class RichConsole:
    """``rich``: colour on a terminal, plain text anywhere else."""

    __slots__ = ("_console",)

    def __init__(self, file: TextIO, width: int | None) -> None:
        from rich.console import Console as Rich

        try:
            tty = file.isatty()
        except (AttributeError, ValueError):
            tty = False
        self._console = Rich(
            file=file,
            force_terminal=tty,
            color_system="auto" if tty else None,
            width=None if tty else (width or 200),
            highlight=False,
            markup=False,
            emoji=False,
        )

    def text(self, *parts: tuple[str, str | None], style: str | None = None) -> None:
        from rich.text import Text

        shown = Text()
        for text, part_style in parts:
            shown.append(text, style=part_style or "")
        self._console.print(shown, style=style or "", soft_wrap=True)

    def table(
        self, title: str, columns: Sequence[str], rows: Sequence[Sequence[tuple[str, str | None]]]
    ) -> None:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
        table.add_column(columns[0], overflow="fold")
        for column in columns[1:]:
            table.add_column(column, no_wrap=True)
        for row in rows:
            table.add_row(*(Text(text, style=style or "") for text, style in row))
        self._console.print(table)


def make_console(file: TextIO, width: int | None = None) -> Console:
    """The ``rich`` console when ``rich`` can be imported, else the plain one."""
    try:
        import rich  # noqa: F401 - only asked whether it is there
    except ImportError:
        return PlainConsole(file)
    return RichConsole(file, width)
