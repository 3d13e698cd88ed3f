"""harnessweaver as an AGENT-HOOKS host: a set of interceptors composed as that contract
asks (its §6 to §10), as one middleware on a harnessweaver bus.

The bus places the host among the rest of the chain (band, order, its own fail mode and
timeout, the trace) and the run loop acts on its outcome. Inside, each interception point
is one *emission* (its §3): the host builds the context (``contexts.py``), computes its
identity (its §10.1), asks the interceptors bound there in registration order, at every
point alike (its §7.4: outbound points too, where harnessweaver's own order is reversed),
composes their verdicts by the configured profile (``compose.py``), consults an approval
resolver for a liftable deny (its §9), and keeps the emission's record (its §10.3).

Why one middleware rather than one per interceptor: a hook point may carry two interception
points (``task.start``: ``agent_startup`` then ``input``), each of which asks every
interceptor before the next; the contract's outbound order is registration order; and its
approval seam answers inside the emission. Failures of an interceptor are the contract's
(a deny with a reserved ``host_error:*`` reason, its §6.3); the middleware's fail mode
covers the host itself.
"""

from __future__ import annotations

import copy
import inspect
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from typing import Any

import anyio

from ...envelope import Envelope
from ...middleware import middleware
from ...outcomes import Outcome
from .compose import Composed, compose, host_error, project
from .contexts import HOOK_BY_EVENT, POINTS, build, write_back
from .verdicts import checked_verdict, outcome_of, permitted, warning_texts

__all__ = ["AgentHooksHost"]

SUSPEND = "suspend"
"""``approvals=SUSPEND``: a liftable deny suspends the run (harnessweaver's own approvals)."""

_NO_SEAM = frozenset({"agent_shutdown"})  # its §9: never consulted at shutdown


class AgentHooksHost:
    """``interceptors`` (``agent_hooks.Interceptor``: ``intercept(context)``, sync or async),
    composed as one AGENT-HOOKS host.

    ``mode``: ``"enforce"`` or ``"evaluate_only"`` (its §8: declare the middleware
    ``mode="audit"`` too, so that the bus acts on nothing). ``composition``: an
    ``agent_hooks.CompositionConfig`` (``sequential/first_deny`` with ``on_approval=stop`` by
    default). ``approvals``: an ``agent_hooks.ApprovalResolver`` consulted on a liftable deny
    (its §9); ``None``, a liftable deny stands as a deny; ``"suspend"`` (the default), it
    suspends the run for a harnessweaver decision. ``identity_provider``: ``"jcs-sha256"``,
    ``None`` or an ``agent_hooks.IdentityProvider``. ``redact``: what an approval request's
    context is redacted with. ``interceptor_timeout``: seconds each interceptor may take
    (its §7; ``None``: no bound of its own). Records (its §10.3) are kept in ``records``, the
    newest ``max_records``.
    """

    def __init__(
        self,
        interceptors: Sequence[Any],
        *,
        names: Sequence[str] | None = None,
        mode: str = "enforce",
        composition: Any = None,
        approvals: Any = SUSPEND,
        identity_provider: Any = "jcs-sha256",
        redact: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        interceptor_timeout: float | None = 5.0,
        agent_id: str = "harnessweaver",
        tools: Iterable[str] = (),
        max_records: int = 1024,
    ) -> None:
        from agent_hooks import CompositionConfig

        if mode not in ("enforce", "evaluate_only"):
            raise ValueError(f"mode {mode!r}: an AGENT-HOOKS host enforces or evaluates only")
        self.interceptors = list(interceptors)
        self.names = list(names) if names is not None else [None] * len(self.interceptors)
        self.mode = mode
        self.composition = composition or CompositionConfig.first_deny()
        self.approvals = approvals
        self.identity_provider = identity_provider
        self.redact = redact
        self.timeout = interceptor_timeout
        self.agent_id = agent_id
        self.tools = sorted(tools)
        self.records: deque[dict[str, Any]] = deque(maxlen=max_records)
        self._sequence = itertools.count()

    # ---- identity (its §10.1) -------------------------------------------------------------

    @property
    def provider_name(self) -> str | None:
        provider = self.identity_provider
        return provider if provider is None or isinstance(provider, str) else provider.name

    def identity(self, context: dict[str, Any]) -> str | None:
        """The context's identity by the configured provider (raises where it cannot)."""
        from agent_hooks import context_identity

        provider = self.identity_provider
        if provider is None:
            return None
        if isinstance(provider, str):
            return context_identity(context)
        return provider.fn(context)  # type: ignore[no-any-return]

    # ---- one interceptor ------------------------------------------------------------------

    async def _invoke(self, interceptor: Any, context: dict[str, Any]) -> Any:
        """The interceptor's verdict on its own copy of ``context``; any failure is the
        contract's fail-closed deny (its §6.3), naming the exception's type only (R9)."""
        from agent_hooks import HostError

        try:
            with anyio.fail_after(self.timeout) if self.timeout is not None else nullcontext():
                raw = interceptor.intercept(copy.deepcopy(context))
                if inspect.isawaitable(raw):
                    raw = await raw
        except TimeoutError:
            return host_error(HostError.INTERCEPTOR_TIMEOUT)
        except Exception as exc:  # its §6.3: every failure denies (the type only: R9)
            return host_error(HostError.INTERCEPTOR_FAILED, type(exc).__name__)
        try:
            return checked_verdict(raw)
        except Exception as exc:  # a return that is no verdict (its §5)
            return host_error(HostError.VERDICT_INVALID, type(exc).__name__)

    async def _consult(self, point: str, context: dict[str, Any], verdict: Any) -> Any:
        """Its §9: the resolver's answer to a liftable deny, as ``(verdict, permitted)``;
        ``None`` when no resolver is consulted here (the deny stands)."""
        from agent_hooks import ApprovalOutcome, ApprovalRequest, HostError, InterceptionPoint

        resolver = self.approvals
        if resolver is None or resolver == SUSPEND or point in _NO_SEAM:
            return None
        if self.mode == "evaluate_only":
            return None
        shown = self.redact(context) if self.redact is not None else context
        asked = self.identity(shown)
        request = ApprovalRequest(asked, InterceptionPoint(point), verdict, shown)
        try:
            answer = resolver.resolve(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # its §9: a resolver that fails denies
            return host_error(HostError.APPROVAL_RESOLVER_FAILED, type(exc).__name__), False
        if answer.context_identity != asked:
            return host_error(HostError.APPROVAL_IDENTITY_MISMATCH), False
        if answer.outcome is ApprovalOutcome.UNRESOLVED:
            return host_error(HostError.APPROVAL_UNRESOLVED), False
        given = answer.verdict
        if answer.outcome is ApprovalOutcome.REJECT:
            if given is not None and given.decision.permits:
                return host_error(HostError.VERDICT_INVALID, "a rejection that permits"), False
            return (given or verdict), False
        if given is not None and not given.decision.permits:
            return host_error(HostError.VERDICT_INVALID, "an approval that denies"), False
        from agent_hooks import ALLOW

        return (given or ALLOW), True

    # ---- one emission ---------------------------------------------------------------------

    async def emit(self, point: str, event: Any, env: Envelope) -> tuple[Composed, Any]:
        """Run the interceptors at ``point`` on ``event``: the composed result and the event
        as the combined verdict leaves it."""
        from agent_hooks import HostError

        context = build(
            point, event, now=env.clock.now(), sequence=next(self._sequence),
            session=env.run_id, agent=self.agent_id, tools=self.tools,
        )  # fmt: skip
        bound = list(zip(self.interceptors, self.names, strict=True))
        try:
            input_identity = self.identity(context)
        except Exception as exc:  # its §10.1, §4.4: a context with no identity denies
            failed = host_error(HostError.CONTEXT_INVALID, type(exc).__name__)
            done = Composed(failed, None, [], None, None, context)
            self._record(done, None, None, registered=len(bound))
            return done, event
        if not bound:  # its §7: no interceptor fails closed, whatever the profile
            done = Composed(host_error(HostError.NO_INTERCEPTOR), None, [], None, None, context)
        else:
            done = await compose(self, point, context, bound)
        moved, enforced = event, input_identity
        if done.context is not context:
            failed = None
            try:  # what the verdict leaves must still have an identity (its §4.4: I-JSON)
                enforced = self.identity(done.context)
            except Exception as exc:
                failed = host_error(HostError.CONTEXT_INVALID, type(exc).__name__)
            if failed is None and done.combined.decision.permits:
                try:  # and fit the event (its §5.2)
                    moved = write_back(point, event, done.context["target"])
                except ValueError as exc:
                    failed = host_error(HostError.TRANSFORM_INVALID, str(exc))
            if failed is not None:
                moved, enforced = event, None
                done = Composed(failed, None, done.summaries, done.truncated, None, context)
        self._record(done, input_identity, enforced, registered=len(bound))
        return done, moved

    def _record(
        self,
        done: Composed,
        input_identity: str | None,
        enforced_identity: str | None,
        *,
        registered: int,
    ) -> None:
        """The emission's record (its §10.3): payload-free, identities in place of content."""
        context = done.context
        self.records.append(
            {
                "interception_point": context["interception_point"],
                "mode": self.mode,
                "verdict": project(done.combined),
                "input_identity": input_identity,
                "enforced_identity": enforced_identity,
                "identity_provider": self.provider_name,
                "session_id": context["session"]["id"],
                "sequence": context["sequence"],
                "timestamp": context["timestamp"],
                "decided_by": done.decided_by,
                "composition": self.composition.to_wire(),
                "verdicts": done.summaries,
                "fold_truncated": done.truncated,
                "resolved_by": done.resolved_by,
                "interceptors_registered": registered,
            }
        )

    # ---- as harnessweaver middleware ------------------------------------------------------

    def middleware(
        self,
        *,
        name: str = "agent_hooks",
        fail_mode: str = "closed",
        band: str = "app",
        timeout: float | str | None = None,
    ) -> Any:
        """The host as one middleware, at every hook point with an interception point
        (``POINTS``). Declared ``mode="audit"`` in ``evaluate_only`` mode (its §8)."""

        async def host(event: Any, env: Envelope) -> Outcome | None:
            return await self.run_hook(event, env)

        host.__name__ = name
        audit = "audit" if self.mode == "evaluate_only" else None
        return middleware(
            hooks=list(POINTS), fail_mode=fail_mode, band=band, timeout=timeout, mode=audit,
            name=name,
        )(host)  # fmt: skip

    async def run_hook(self, event: Any, env: Envelope) -> Outcome | None:
        """Every emission the hook point of ``event`` carries, in order (its §3.1)."""
        current, warnings, denied = event, [], None
        for point in POINTS[HOOK_BY_EVENT[type(event)]]:
            if point == "output" and event.exit_reason != "completed":
                continue  # a run that did not complete has no output to release
            if point == "input" and denied is not None:
                break  # a session denied at agent_startup never starts (its §6.1a)
            done, moved = await self.emit(point, current, env)
            if point == "agent_shutdown":
                continue  # recorded; the session ends whatever it says (its §9)
            warnings += warning_texts(done.combined)
            if not done.combined.decision.permits:
                denied = (done.combined, point)  # shutdown is still emitted (its §6.1a)
            else:
                current = moved
        if denied is not None:
            # a Suspend for a liftable deny only when harnessweaver's approvals decide
            return outcome_of(*denied, warnings, suspend=self.approvals == SUSPEND)
        return permitted(event, current, warnings)
