"""``hw.HookBus``: register middleware, see the chains, emit events."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from . import debug
from ._plain import LIVE, uncopyable
from ._select import core
from .events import EVENT_TYPES
from .middleware import build, spec_of

if TYPE_CHECKING:
    from ._pycore.declaration import Declaration
    from .context import RunContext
    from .outcomes import HookResult
    from .plugin import Plugin
else:
    HookResult = core.HookResult

__all__ = ["HookBus"]


class _Emit(Protocol):
    def __call__(
        self, hook: str, event: Any, ctx: RunContext, *, deadline: float | str | None = None
    ) -> Coroutine[Any, Any, HookResult]: ...


@uncopyable("HookBus", LIVE)
class HookBus:
    """The hook bus: every middleware of a hook point, in a predictable order.

    Run order is band (baseline, platform, app, task), then registration order; outbound
    hook points run it in reverse (rules 1-2). The most severe answer wins (rule 3); each
    middleware's timeout and fail mode are enforced (rule 4); every answer is traced.

    ``contracts`` is the bus's hook-contract mode (I14, ``docs/contracts.md``): ``None`` (the
    default) checks nothing; ``"warn"`` traces a modification that breaks a contract rule and
    lets it flow on; ``"strict"`` makes it a failure of the middleware (``contract_violation``),
    handled by its fail mode. Any other value is a ``RegistrationError`` naming it.

    ``deadlines`` maps hook points to a chain deadline (I26, ``docs/harness-spec.md``): a
    time budget for the whole chain of each emit there, on top of each middleware's timeout
    (a duration like a timeout: ``"2s"``, ``0.5``). When it passes, the middleware running is
    cut off (a ``deadline`` failure) and the ones not started are skipped (``skipped``); a
    closed one blocks with code ``chain_deadline``. A bad value is a ``RegistrationError``
    (``invalid_deadline``).

    ``identity`` is the bus's content-identity scheme (I27, ``docs/trace.md``): ``None`` (the
    default) computes nothing; ``"jcs-sha256"`` gives every hook record ``input_identity`` and
    ``enforced_identity``, the SHA-256 of the RFC 8785 form of the event given and of the event
    the chain left (``None`` for an event outside I-JSON). Any other value is a
    ``RegistrationError`` (``invalid_identity``).
    """

    __slots__ = ("_calls", "_registry", "emit")

    emit: _Emit
    """``await bus.emit(hook, event, ctx)``: run ``hook``'s chain on ``event`` in ``ctx``; the
    result has the combined ``outcome`` and the ``event`` as the last middleware left it.
    ``deadline=`` gives this emit a chain deadline of its own (I26: seconds or a duration
    string; ``0`` is a budget already spent); the earlier of it and the hook point's applies.

    A coroutine (the Rust core makes it natively, so an emit whose middleware all finish
    without suspending costs no Python frame); nothing runs until it is awaited.
    """

    def __init__(
        self,
        *,
        contracts: Literal["warn", "strict"] | None = None,
        deadlines: Mapping[str, float | str] | None = None,
        identity: Literal["jcs-sha256"] | None = None,
    ) -> None:
        self._registry = core.Registry(
            EVENT_TYPES, contracts=contracts, deadlines=deadlines, identity=identity
        )
        # Bound once: emits are the hot path. The builtin also takes ``deadline=`` (I26).
        self.emit = cast("_Emit", self._registry.emitter())
        # What each registered name runs, for :meth:`handler` (the core keeps its own copy).
        self._calls: dict[str, Callable[..., Any]] = {}

    def deadline(self, hook: str) -> float | None:
        """The chain deadline of ``hook`` in seconds (I26), or ``None``."""
        return self._registry.deadline(hook)

    @property
    def contracts(self) -> Literal["warn", "strict"] | None:
        """The hook-contract mode: ``"warn"``, ``"strict"`` or ``None`` (nothing checked)."""
        mode = self._registry.contracts
        return "warn" if mode == "warn" else "strict" if mode == "strict" else None

    @property
    def identity(self) -> Literal["jcs-sha256"] | None:
        """The content-identity scheme (I27): ``"jcs-sha256"`` or ``None`` (no identities)."""
        return "jcs-sha256" if self._registry.identity == "jcs-sha256" else None

    def register(
        self,
        middleware: Any,
        *,
        band: str | None = None,
        hooks: list[str] | tuple[str, ...] | None = None,
        fail_mode: str | None = None,
        timeout: float | str | None = None,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
        layer: str | None = None,
        match: Mapping[str, str | Sequence[str]] | None = None,
        mode: str | None = None,
    ) -> Declaration:
        """Register a declared middleware (function, class or instance of a class).

        ``band``, ``fail_mode``, ``timeout`` and ``name`` override the declaration, ``hooks``
        may narrow it (ruling 18), and so may ``match`` the declared matcher (I22); ``mode``
        (``"enforce"`` or ``"audit"``, I25) overrides the declared mode;
        ``settings`` build a class that has a ``config``. With ``layer`` (``"org_profile"``,
        ``"app"``, ``"task"``…, I13) it is registered as a harness spec's item of that layer:
        the layer sets the band, which ``band`` may only restate or move inward (ruling 16,
        S8). Returns the declaration as registered.
        """
        spec, call = build(middleware, settings)
        if debug.enabled():  # harnessweaver.debug at DEBUG: see why it raises (docs/logging.md)
            call = debug.watched(call, name if isinstance(name, str) else spec.declaration.name)
        declaration = self._registry.register(
            spec.declaration,
            call,
            layer=layer,
            name=name,
            band=band,
            hooks=hooks,
            fail_mode=fail_mode,
            timeout=timeout,
            match=match,
            mode=mode,
        )
        self._calls[declaration.name] = call
        return declaration

    def register_plugin(
        self,
        plugin: Plugin,
        *,
        band: str | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> tuple[Declaration, ...]:
        """Register all of a plugin's middleware as ``namespace.name``.

        ``settings`` maps a middleware's name to its settings; a class with a ``config`` and no
        settings here is built from its ``sample``.
        """
        done = []
        for full in plugin.names():
            item = plugin.get(full)
            short = full.removeprefix(f"{plugin.namespace}.")
            given = (settings or {}).get(short)
            spec = spec_of(item)
            if given is None and isinstance(item, type) and spec is not None:
                given = spec.sample
            done.append(self.register(item, band=band, name=full, settings=given))
        return tuple(done)

    def unregister(self, name: str) -> Declaration:
        """Remove a middleware; an emit in flight keeps the chain it started with (I11)."""
        declaration = self._registry.unregister(name)
        self._calls.pop(declaration.name, None)
        return declaration

    def handler(self, name: str) -> Callable[..., Any]:
        """What the chain calls for the middleware registered as ``name``: ``handler(event,
        env)``, returning an answer or an awaitable of one. It is the middleware alone, with
        none of the bus around it (no timeout, fail mode or trace): ``harnessweaver bench``
        and :mod:`harnessweaver.testing` time a chain's handlers in a plain loop as the floor
        an emit is compared with. An unknown name is a ``KeyError`` naming it."""
        try:
            return self._calls[name]
        except KeyError:
            known = ", ".join(sorted(self._calls)) or "none"
            raise KeyError(f"no middleware {name!r} on this bus (registered: {known})") from None

    def chain(self, hook: str) -> tuple[Declaration, ...]:
        """The resolved run order of ``hook``: band, registration order, direction applied."""
        return self._registry.chain(hook)

    def chain_for(self, hook: str, value: str | None) -> tuple[Declaration, ...]:
        """The run order of an event of ``hook`` whose key (I22: ``tool.name`` on tool hook
        points, ``request.model`` on ``model.before``) is ``value``: ``chain`` without the
        middleware whose matcher does not match it (``None``: a key absent, which matches)."""
        return self._registry.chain_for(hook, value)
