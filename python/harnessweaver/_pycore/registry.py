"""The registry: middleware by name, and one planned chain per hook point.

Registering costs O(1): each hook point keeps its middleware in one dict per band, in
registration order (insertion order, as registration orders only grow), which is the run order
of an inbound hook point (rules 1-2). A registration only marks its hook points' plans stale
(``None``); the first emit after it plans the chain (a tuple, reversed for outbound hook
points) and the emits after that walk it, so registering n middleware plans nothing n times
(issue 13). A new tuple replaces the old one, so an emit in flight keeps the chain it started
with (ruling 3, I11).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from .._plain import LIVE, final, plain_str, uncopyable
from .._slowpath import continue_emit, finish
from ..errors import error_for
from .catalogue import HOOKS, OUTBOUND, hook_error
from .context import RunContext
from .contracts import contract_mode
from .deadline import deadline_ns, deadlines_of
from .declaration import BAND_INDEX, BANDS, Declaration, apply_overrides
from .error import shown, value_error
from .identity import identity_scheme
from .layer import declare_in
from .matcher import CARRIED, admits, key_value
from .outcomes import HookResult
from .suspension import may_suspend
from .trace import outcome_shape
from .walk import Walk, _is_event_of, drive

__all__ = ["Registry"]

_DIRECTIONS = dict(HOOKS)

_sniffio: Any
try:  # trio names itself here while it runs a task (see the Rust core's `structured`)
    from sniffio import thread_local as _sniffio
except ImportError:  # pragma: no cover - no sniffio, so no trio
    _sniffio = None


MAX_KEYED_PLANS = 256
"""How many key values a hook point keeps a planned chain for (I22, as the Rust core)."""


class _Entry:
    __slots__ = (
        "audit",
        "awaited",
        "band",
        "call",
        "closed",
        "decl",
        "fail_mode",
        "name",
        "order",
        "passed",
        "timeout",
        "timeout_ns",
    )

    def __init__(self, decl: Declaration, call: Callable[..., Any], order: int) -> None:
        self.decl = decl
        self.name = decl.name
        self.band = decl.band
        self.fail_mode = decl.fail_mode
        self.closed = decl.fail_mode == "closed"
        self.timeout = decl.timeout
        self.timeout_ns = decl.timeout_ns
        self.audit = decl.mode == "audit"  # I25: traced as it would be, counts as Continue
        self.call = call
        # Simply awaited by ``drive``, the cheapest way: untimed, and it cannot suspend, so it
        # can never be handed (and swallow) its caller's cancellation (I30). Any other is
        # stepped by hand, to see whether it suspends.
        self.awaited = self.timeout_ns is None and not may_suspend(call)
        self.order = order
        # The trace shape of its usual answer (nothing, or a plain Continue), made once.
        self.passed = outcome_shape(self.name, self.band, "continue", False, None, None, self.audit)


@final("Registry")
@uncopyable("Registry", LIVE)
class Registry:
    """What a bus has registered, compiled into chains."""

    __slots__ = (
        "_by_key",
        "_contracts",
        "_deadlines",
        "_entries",
        "_event_types",
        "_identity",
        "_keys",
        "_members",
        "_next_order",
        "_plan_builds",
        "_plans",
        "_timed",
    )

    def __init__(
        self,
        event_types: Mapping[str, type],
        *,
        contracts: object = None,
        deadlines: object = None,
        identity: object = None,
    ) -> None:
        self._contracts = contract_mode(contracts)  # checked first: a bad mode builds nothing
        self._deadlines = deadlines_of(deadlines)  # the chain deadlines of I26, by hook point
        self._identity = identity_scheme(identity)  # the content-identity scheme of I27
        missing = [name for name, _ in HOOKS if name not in event_types]
        if missing:
            raise ValueError(f"event_types lacks the hook points {missing}")
        self._event_types = dict(event_types)
        self._entries: dict[str, _Entry] = {}
        self._next_order = 0
        # Per hook point, per band (outermost first): name -> entry, in registration order.
        self._members: dict[str, tuple[dict[str, _Entry], ...]] = {
            name: tuple({} for _ in BANDS) for name, _ in HOOKS
        }
        # A hook point's chain in run order; None until planned again after a change.
        self._plans: dict[str, tuple[_Entry, ...] | None] = {name: () for name, _ in HOOKS}
        self._timed: dict[str, bool] = {name: name in self._deadlines for name, _ in HOOKS}
        # I22: the key a hook point's matchers read (None: no matcher there), and the chains
        # planned per key value, at most MAX_KEYED_PLANS, emptied when full.
        self._keys: dict[str, str | None] = {name: None for name, _ in HOOKS}
        self._by_key: dict[str, dict[str, tuple[_Entry, ...]]] = {name: {} for name, _ in HOOKS}
        self._plan_builds = 0  # chains planned so far, for tests of what registering costs

    def register(
        self,
        decl: Declaration,
        call: Callable[..., Any],
        *,
        layer: object = None,
        name: object = None,
        band: object = None,
        hooks: object = None,
        fail_mode: object = None,
        timeout: object = None,
        match: object = None,
        mode: object = None,
    ) -> Declaration:
        """Register ``call`` under ``decl`` with the overrides of I10, or as a spec item of
        ``layer`` (I13); return the declaration that took effect."""
        if not isinstance(decl, Declaration):
            raise TypeError(f"register() needs a Declaration, got {decl!r}")
        if not callable(call):
            raise TypeError(f"register() needs a callable middleware, got {call!r}")
        if layer is None:
            final = apply_overrides(
                decl,
                name=name,
                band=band,
                hooks=hooks,
                fail_mode=fail_mode,
                timeout=timeout,
                match=match,
                mode=mode,
            )
        else:
            final = declare_in(
                decl,
                layer,
                name=name,
                band=band,
                hooks=hooks,
                fail_mode=fail_mode,
                timeout=timeout,
                match=match,
                mode=mode,
            )
        if final.name in self._entries:
            raise value_error("register", "duplicate_name", "name", shown(final.name))
        entry = self._entries[final.name] = _Entry(final, call, self._next_order)
        self._next_order += 1
        band = BAND_INDEX[final.band]
        for hook in final.hooks:
            members = self._members.get(hook)
            if members is not None:
                members[band][final.name] = entry
                self._plans[hook] = None
        return final

    def unregister(self, name: str) -> Declaration:
        """Remove the middleware called ``name``; emits in flight keep their chains (I11)."""
        name = plain_str(name)  # type: ignore[assignment]  # a str subclass: its characters
        entry = self._entries.pop(name, None) if isinstance(name, str) else None
        if entry is None:
            raise value_error("register", "unknown_middleware", "name", shown(name))
        band = BAND_INDEX[entry.band]
        for hook in entry.decl.hooks:
            members = self._members.get(hook)
            if members is not None:
                del members[band][name]
                self._plans[hook] = None
        return entry.decl

    def _replan(self, hook: str) -> tuple[_Entry, ...]:
        """Plans ``hook``'s chain from its members: band by band, each in registration order
        (rule 1); outbound hook points run it reversed (rule 2)."""
        self._plan_builds += 1
        chain = [entry for band in self._members[hook] for entry in band.values()]
        if _DIRECTIONS[hook] == OUTBOUND:
            chain.reverse()
        plan = self._plans[hook] = tuple(chain)
        self._timed[hook] = hook in self._deadlines or any(e.timeout_ns is not None for e in plan)
        key = CARRIED.get(hook)
        matchers = (e.decl._match for e in plan)
        self._keys[hook] = key if any(m is not None and key in m for m in matchers) else None
        self._by_key[hook] = {}
        return plan

    def _keyed(self, hook: str, plan: tuple[_Entry, ...], event: Any) -> tuple[_Entry, ...]:
        """The chain an emit of ``event`` runs when ``hook``'s matchers read a key (I22)."""
        key = self._keys[hook]
        value = None if key is None else key_value(key, event)
        return plan if value is None else self._chain_for(hook, plan, value)

    def _chain_for(self, hook: str, plan: tuple[_Entry, ...], value: str) -> tuple[_Entry, ...]:
        by_key = self._by_key[hook]
        chain = by_key.get(value)
        if chain is None:
            chain = tuple(e for e in plan if admits(e.decl._match, hook, value))
            if len(by_key) >= MAX_KEYED_PLANS:
                by_key.clear()
            by_key[value] = chain
        return chain

    def chain_for(self, hook: str, value: str | None = None) -> tuple[Declaration, ...]:
        """The declarations of the chain an event of ``hook`` whose key (I22) is ``value``
        runs, in run order; ``None`` is a key absent or not text."""
        hook = plain_str(hook)  # type: ignore[assignment]
        plan = self._plan(hook, "emit")
        value = plain_str(value)  # type: ignore[assignment]
        if value is not None and self._keys[hook] is not None:
            plan = self._chain_for(hook, plan, value)
        return tuple(entry.decl for entry in plan)

    def _plan(self, hook: object, phase: str) -> tuple[_Entry, ...]:
        plan = self._plans.get(hook) if isinstance(hook, str) else None
        if plan is None:
            if not isinstance(hook, str) or hook not in self._plans:
                raise hook_error(phase, hook)
            plan = self._replan(hook)
        return plan

    def chain(self, hook: str) -> tuple[Declaration, ...]:
        """The declarations of ``hook``'s chain in run order (direction applied)."""
        hook = plain_str(hook)  # type: ignore[assignment]
        return tuple(entry.decl for entry in self._plan(hook, "emit"))

    @property
    def contracts(self) -> str | None:
        """The hook-contract mode: ``"warn"``, ``"strict"`` or ``None`` (I14)."""
        return self._contracts

    @property
    def identity(self) -> str | None:
        """The content-identity scheme: ``"jcs-sha256"`` or ``None`` (I27)."""
        return self._identity

    def deadline(self, hook: str) -> float | None:
        """The chain deadline of ``hook`` in seconds (I26), or ``None``."""
        hook = plain_str(hook)  # type: ignore[assignment]
        self._plan(hook, "emit")
        ns = self._deadlines.get(hook)
        return None if ns is None else ns / 1e9

    def has_timeouts(self, hook: str) -> bool:
        hook = plain_str(hook)  # type: ignore[assignment]
        self._plan(hook, "emit")
        return self._timed[hook]

    def emit_ctx(
        self, hook: str, event: Any, ctx: Any, deadline: object = None
    ) -> HookResult | Walk | None:
        """``emit`` with a run context's envelope and trace; ``None`` when trio runs a chain
        with timeouts (the bus then runs it under one cancel scope, ``_slowpath``)."""
        hook = plain_str(hook)  # type: ignore[assignment]
        plan = self._plan(hook, "emit")
        timed = self._timed[hook] or deadline is not None
        if timed and _sniffio is not None and _sniffio.name is not None:
            return None
        return self._walk(hook, plan, event, ctx.envelope, ctx.trace, deadline).run()

    def emit_call(
        self, hook: str, event: Any, ctx: Any, *, deadline: object = None
    ) -> Coroutine[Any, Any, HookResult]:
        """``bus.emit(hook, event, ctx)``: the whole emit as a coroutine (the Rust core's
        ``Emit``). The usual call hands back ``drive``'s coroutine itself, one frame fewer
        than an ``async def`` around it; anything unusual (an unknown hook point, a chain with
        timeouts under trio, a mismatched event) goes through ``_emit``, so that nothing runs
        and nothing is raised until the coroutine is awaited."""
        if type(hook) is not str:  # off the fast path: a str subclass as its characters
            hook = plain_str(hook)  # type: ignore[assignment]
            if type(hook) is not str:
                return self._emit(hook, event, ctx)  # unknown_hook, when awaited
        if deadline is not None or hook in self._deadlines:
            return self._emit_deadline(hook, event, ctx, deadline)  # a chain deadline (I26)
        plan = self._plans.get(hook) if type(hook) is str else None
        if plan is None or (self._timed[hook] and _sniffio is not None and _sniffio.name):
            return self._emit(hook, event, ctx)
        etype = self._event_types[hook]
        if type(event) is not etype or type(ctx) is not RunContext:
            return self._emit(hook, event, ctx)
        if self._keys[hook] is not None:
            plan = self._keyed(hook, plan, event)
        return drive(
            hook, plan, event, ctx.envelope, ctx.trace, etype, self._contracts, self._identity
        )

    async def _emit(self, hook: str, event: Any, ctx: Any) -> HookResult:
        hook = plain_str(hook)  # type: ignore[assignment]
        plan = self._plan(hook, "emit")
        if self._timed[hook] and _sniffio is not None and _sniffio.name is not None:
            return await continue_emit(None, self, hook, event, ctx, HookResult)
        etype = self._event_types[hook]
        if not _is_event_of(event, etype):  # the real type, never __class__ (I18)
            raise self._mismatch(hook, etype, event)
        if self._keys[hook] is not None:
            plan = self._keyed(hook, plan, event)
        return await drive(
            hook, plan, event, ctx.envelope, ctx.trace, etype, self._contracts, self._identity
        )

    async def _emit_deadline(self, hook: str, event: Any, ctx: Any, deadline: object) -> HookResult:
        """An emit with a chain deadline (I26): walked by ``Walk``, which knows the deadline."""
        hook = plain_str(hook)  # type: ignore[assignment]
        self._plan(hook, "emit")
        if _sniffio is not None and _sniffio.name is not None:
            return await continue_emit(None, self, hook, event, ctx, HookResult, deadline)
        started = self.emit(hook, event, ctx.envelope, ctx.trace, deadline)
        return await finish(started, HookResult)

    def emitter(self) -> Callable[..., Coroutine[Any, Any, HookResult]]:
        """What ``HookBus.emit`` is: ``emit_call``, bound."""
        return self.emit_call

    def emit(
        self, hook: str, event: Any, env: Any, trace: Any, deadline: object = None
    ) -> HookResult | Walk:
        """Run ``hook``'s chain as far as it goes without waiting (see ``walk.py``)."""
        hook = plain_str(hook)  # type: ignore[assignment]
        return self._walk(hook, self._plan(hook, "emit"), event, env, trace, deadline).run()

    def _walk(
        self,
        hook: str,
        plan: tuple[_Entry, ...],
        event: Any,
        env: Any,
        trace: Any,
        deadline: object = None,
    ) -> Walk:
        etype = self._event_types[hook]
        if not _is_event_of(event, etype):  # the real type, never __class__ (I18)
            raise self._mismatch(hook, etype, event)
        # I26: the earlier of the hook point's deadline and the emit's own, checked after the
        # event like the caller errors of I7 (nothing runs or is traced).
        budget = self._deadlines.get(hook)
        if deadline is not None:
            own = deadline_ns(deadline, hook, emit=True, phase="emit")
            budget = own if budget is None else min(budget, own)
        if self._keys[hook] is not None:
            plan = self._keyed(hook, plan, event)
        return Walk(
            hook,
            plan,
            event,
            env,
            trace,
            etype,
            contracts=self._contracts,
            budget=budget,
            identity=self._identity,
        )

    @staticmethod
    def _mismatch(hook: str, etype: type, event: Any) -> Exception:
        return error_for(
            "emit",
            "event_type_mismatch",
            "I7",
            f"hook point '{hook}' takes a {etype.__name__}, got {type(event).__name__} (I7)",
        )
