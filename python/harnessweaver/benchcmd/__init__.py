"""``harnessweaver bench``: what a harness of one's own costs per emit, against its floor.

See docs/bench.md. :mod:`.floor` holds what the command and :mod:`harnessweaver.testing`
both time: an emit on the bus, and the same middleware awaited in a plain loop.
"""

from __future__ import annotations

__all__: list[str] = []
