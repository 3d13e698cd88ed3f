"""State a fleet shares: the store interface under every stateful middleware.

A budget, a rate limit or a loop count is only a guard if every worker counts in the same
place. ``harnessweaver.state`` is that place's interface: :class:`Store` (atomic reserve →
commit / release with hold ids for exactly-once charges, compare-and-set records, expiry),
its backends (:class:`MemoryStore` in one process, :class:`SqliteStore` across the processes
of one machine, ``RedisStore`` and ``PostgresStore`` across machines), the keys
(:func:`state_key`, scopes run/session/user/task/app/org, namespaced by spec layer) and the
:class:`StateView` a middleware holds: its store with a timeout, every failure turned into
:class:`StateUnavailable` for its fail mode. See docs/state.md.

Names import on first use: ``import harnessweaver.state`` loads none of the backends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from .config import StateConfig, StateConfigError, open_store, parse_config
    from .memory import MemoryStore
    from .scope import SCOPES, Scope, scope_subject, state_key
    from .sqlite import SqliteStore
    from .store import MARK_TTL, Record, Reservation, StateUnavailable, Store
    from .view import DEFAULT_TIMEOUT, UNAVAILABLE, Stateful, StateView, attach

__all__: list[str] = [
    "DEFAULT_TIMEOUT",
    "MARK_TTL",
    "SCOPES",
    "UNAVAILABLE",
    "MemoryStore",
    "Record",
    "Reservation",
    "Scope",
    "SqliteStore",
    "StateConfig",
    "StateConfigError",
    "StateUnavailable",
    "StateView",
    "Stateful",
    "Store",
    "attach",
    "open_store",
    "parse_config",
    "scope_subject",
    "state_key",
]

_HOMES = {
    ".config": ("StateConfig", "StateConfigError", "open_store", "parse_config"),
    ".memory": ("MemoryStore",),
    ".scope": ("SCOPES", "Scope", "scope_subject", "state_key"),
    ".sqlite": ("SqliteStore",),
    ".store": ("MARK_TTL", "Record", "Reservation", "StateUnavailable", "Store"),
    ".view": ("DEFAULT_TIMEOUT", "UNAVAILABLE", "StateView", "Stateful", "attach"),
}
"""Where each name of ``__all__`` lives."""
__getattr__ = _lazy.loader(__name__, _lazy.homes(_HOMES))
__dir__ = _lazy.lister(__name__, __all__)
