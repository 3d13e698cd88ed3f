"""``StateView``: a store as one middleware sees it, with its timeout and its failure rule.

A middleware never holds a bare :class:`~harnessweaver.state.Store`: it holds a view that knows
who it is (the spec layer and item that declared it, its task, its fail mode), so it can build
its keys (:meth:`StateView.key`) and so that every store call is bounded in time and every
failure of the store — a timeout, a refused connection, a read-only file, a server error —
arrives as one exception, :class:`~harnessweaver.state.StateUnavailable`. The rule every
stateful middleware follows::

    try:
        ...  # view.reserve / commit / read / swap
    except StateUnavailable as exc:
        if view.fail_mode == "closed":
            return view.unavailable(exc)   # Block(code="state_unavailable")
        raise                              # open: the bus records the failure, the chain goes on

Never a silent allow. A middleware declared ``@middleware(..., state=True)`` gets its view
from the spec loader (or :func:`attach`); one never attached makes itself a private
:class:`~harnessweaver.state.MemoryStore` view: the counts of one process, as before stores.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..middleware import spec_of
from ..outcomes import Block
from .memory import MemoryStore
from .scope import SCOPES, scope_subject, state_key
from .store import (
    Record,
    Reservation,
    StateUnavailable,
    Store,
    check_counter_args,
    check_key,
    check_life,
    check_version,
    dump_json,
)

if TYPE_CHECKING:
    from pydantic import JsonValue

    from ..envelope import Envelope

__all__ = ["DEFAULT_LAYER", "DEFAULT_TIMEOUT", "UNAVAILABLE", "StateView", "Stateful", "attach"]

T = TypeVar("T")
DEFAULT_TIMEOUT = 0.25
"""Seconds a store call may take before it counts as unavailable (``state.timeout``)."""
DEFAULT_LAYER = "app"
"""The layer of a middleware attached in code without one."""
UNAVAILABLE = "state_unavailable"
"""The code of the Block a closed middleware returns when its store cannot answer."""
_FAIL_MODES = ("closed", "open")


class StateView:
    """A store as the middleware ``item`` of ``layer`` uses it (see the module docstring).

    Its methods are the :class:`~harnessweaver.state.Store` methods, each bounded by
    ``timeout`` seconds and raising only :class:`StateUnavailable` for a failing store
    (ValueError for a caller's bad argument). ``repr`` shows the backend, never a URL."""

    __slots__ = ("fail_mode", "item", "layer", "store", "task", "timeout")

    store: Store
    layer: str
    item: str
    fail_mode: str
    timeout: float
    task: str | None

    def __init__(
        self,
        store: Store,
        *,
        layer: str,
        item: str,
        fail_mode: str,
        timeout: float = DEFAULT_TIMEOUT,
        task: str | None = None,
    ) -> None:
        if fail_mode not in _FAIL_MODES:
            raise ValueError(f"fail_mode is 'closed' or 'open', got {fail_mode!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise ValueError("timeout is a number of seconds")
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive finite number of seconds")
        check_key(layer, "layer")
        check_key(item, "item")
        self.store = store
        self.layer = layer
        self.item = item
        self.fail_mode = fail_mode
        self.timeout = float(timeout)
        self.task = task

    @classmethod
    def private(cls, item: str, fail_mode: str, *, task: str | None = None) -> StateView:
        """A view on a new :class:`MemoryStore` of its own: a middleware never attached."""
        return cls(MemoryStore(), layer=DEFAULT_LAYER, item=item, fail_mode=fail_mode, task=task)

    @property
    def backend(self) -> str:
        """The store's backend name (``memory``, ``sqlite``, ``redis``, ``postgres``)."""
        return str(getattr(self.store, "backend", type(self.store).__name__))

    def __repr__(self) -> str:
        return (
            f"StateView(backend={self.backend!r}, layer={self.layer!r}, item={self.item!r}, "
            f"fail_mode={self.fail_mode!r}, timeout={self.timeout!r})"
        )

    def key(self, scope: str, env: Envelope, name: str) -> str:
        """The full key of counter or record ``name`` in ``scope`` for the run of ``env``.
        LookupError when the scope needs an envelope attribute that is missing."""
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}: the scopes are {', '.join(SCOPES)}")
        subject = scope_subject(scope, run_id=env.run_id, attributes=env.attributes, task=self.task)
        return state_key(self.layer, self.item, scope, subject, name)

    def unavailable(self, exc: StateUnavailable) -> Block:
        """The Block of a closed middleware whose store cannot answer."""
        return Block(
            reason=f"middleware {self.item}: state store unavailable ({exc.backend})",
            code=UNAVAILABLE,
        )

    async def _call(self, operation: str, call: Callable[[], Awaitable[T]]) -> T:
        try:
            if type(self.store) is MemoryStore:
                # It never waits (no I/O, no lock held across an await): a deadline would only
                # cost (about 15 us a call, five calls a guarded model call) and never fire.
                return await call()
            with anyio.fail_after(self.timeout):
                return await call()
        except Exception as exc:  # any failure of the store: down, slow, refused, broken
            raise StateUnavailable.of(self.backend, operation, exc) from None

    async def reserve(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        limit: float | None,
        ttl: float,
        life: float | None = None,
    ) -> Reservation:
        check_counter_args(key, hold, amount, limit=limit, ttl=ttl, ttl_required=True, life=life)
        return await self._call(
            "reserve",
            lambda: self.store.reserve(key, hold, amount, limit=limit, ttl=ttl, life=life),
        )

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        check_counter_args(key, hold, amount, ttl=ttl, life=life)
        return await self._call(
            "commit", lambda: self.store.commit(key, hold, amount, ttl=ttl, life=life)
        )

    async def release(self, key: str, hold: str) -> float:
        check_key(key)
        check_key(hold, "hold id")
        return await self._call("release", lambda: self.store.release(key, hold))

    async def total(self, key: str) -> float:
        check_key(key)
        return await self._call("total", lambda: self.store.total(key))

    async def read(self, key: str) -> Record:
        check_key(key)
        return await self._call("read", lambda: self.store.read(key))

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        check_key(key)
        check_version(version)
        check_life(life)
        dump_json(value)
        return await self._call("swap", lambda: self.store.swap(key, version, value, life=life))

    async def delete(self, *keys: str) -> None:
        for key in keys:
            check_key(key)
        await self._call("delete", lambda: self.store.delete(*keys))


class Stateful:
    """A mixin for a middleware class declared ``state=True``: :meth:`attach_state` keeps the
    view, :attr:`state` gives it (a private MemoryStore view when none was attached)."""

    _state_view: StateView | None = None

    def attach_state(self, view: StateView) -> None:
        """Use ``view`` from now on (the spec loader and :func:`attach` call this once)."""
        if not isinstance(view, StateView):
            raise TypeError(f"attach_state takes a StateView, got {type(view).__name__}")
        self._state_view = view

    @property
    def state(self) -> StateView:
        """The attached view, or a private in-memory one made on first use."""
        view = self._state_view
        if view is None:
            spec = spec_of(self)
            if spec is None:
                raise TypeError(f"{type(self).__name__} is not declared middleware")
            decl = spec.declaration
            view = self._state_view = StateView.private(decl.name, decl.fail_mode)
        return view


def attach(
    middleware: object,
    store: Store,
    *,
    layer: str = DEFAULT_LAYER,
    name: str | None = None,
    fail_mode: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    task: str | None = None,
) -> StateView:
    """Give a built stateful middleware (an instance of a class declared ``state=True``) its
    view of ``store``, as the spec loader does: ``name`` and ``fail_mode`` default to its
    declaration's, ``layer`` to ``"app"``. Returns the view."""
    spec = spec_of(middleware)
    if spec is None or not spec.state:
        raise TypeError(
            f"{type(middleware).__name__} is not stateful middleware: declare its class with "
            "@middleware(..., state=True)"
        )
    if isinstance(middleware, type):
        raise TypeError(f"attach takes a built middleware, not the class {middleware.__name__}")
    decl = spec.declaration
    view = StateView(
        store,
        layer=layer,
        item=decl.name if name is None else name,
        fail_mode=decl.fail_mode if fail_mode is None else fail_mode,
        timeout=timeout,
        task=task,
    )
    attach_state: Any = getattr(middleware, "attach_state")  # noqa: B009 - checked at declaring
    attach_state(view)
    return view
