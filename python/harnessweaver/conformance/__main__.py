"""``python -m harnessweaver.conformance``: the same as ``harnessweaver conformance``."""

from __future__ import annotations

import sys

from harnessweaver.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["conformance", *sys.argv[1:]]))
