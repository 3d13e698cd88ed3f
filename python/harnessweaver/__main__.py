"""``python -m harnessweaver``: the same as the ``harnessweaver`` command (it needs no script on
``PATH``, and runs the interpreter you name)."""

from __future__ import annotations

from harnessweaver.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
