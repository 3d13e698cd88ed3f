"""``harnessweaver.budget_guard``: a run spends at most so many tokens, or so many dollars.

The guard adds up, per run, the usage of every model response at ``model.after``
(``response.usage``: input plus output tokens, and ``cost_usd``), and acts at the next
``model.before``:

- at or past 100% of a limit, the request is refused: ``Block``, code ``budget_exceeded``
  (the run loop ends the run with that reason);
- at or past ``warn_at`` of a limit (70% by default), the request goes out with a note telling
  the model how much of its budget is spent, so it can finish while it still may. The bus
  has no warning outcome; a note is how the built-in guards warn (see ``_notes``). Each limit
  warns once per run.

Why ``model.after`` and not ``step.end``: it is the first point where a response's usage is
known, it sees every response (a retried model call costs too), and counting at both would
count twice. A ``Block`` at ``model.after`` by a middleware that runs before this one hides
that response from the guard (a Block stops the chain); the run loop ends such a run anyway.

The guard cannot stop one request from overshooting (usage is known only afterwards); it
stops the next one, unless ``reserve_tokens`` / ``reserve_cost_usd`` hold that much at each
``model.before`` (released at ``model.after`` once the actual usage is charged, or expired
after 10 minutes), so concurrent workers sharing a budget cannot all go past it at once.

The counts are counters on the guard's state view (``_state``): ``tokens`` and ``cost_usd``
in the guard's ``scope`` (by default the run's, dropped at a final ``task.end``; or a
session's, user's, task's, app's or the org's, shared by every worker on the store), each
``model.after`` charged once under the hold id ``{run}/{step}/{content identity}`` in a
shared scope, so the same response emitted again (a redelivered job, a resumed step) is not
counted twice there; in the run scope every response the guard is shown counts, as before.
With ``per`` (``1d``) the counters are those of the window ``floor(now / per)``, by the
envelope's clock.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Self

from pydantic import Field, field_validator, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ModelResponseEvent, TaskEndEvent
from ..middleware import middleware
from ..outcomes import Block, Continue
from ..state import StateUnavailable, StateView
from ._notes import with_note
from ._runs import MAX_RUNS
from ._state import (
    RESERVE_TTL,
    Duration,
    Guard,
    StateSettings,
    charge_id,
    duration,
    final,
    unavailable,
    update,
    written,
)

__all__ = ["WARNED", "BudgetGuard", "BudgetSettings"]

WARNED: Final = "warned"
"""The run-scope record of the limits a run has been warned about: a sorted list of counter
names (``tokens``, ``cost_usd``, ``tokens.20422`` with ``per``)."""


class BudgetSettings(StateSettings):
    """``max_tokens`` and/or ``max_cost_usd`` (at least one); ``warn_at``, a fraction of each
    limit (``null``: no warning); ``per``, a window the budget starts again in (``1d``);
    ``reserve_tokens`` / ``reserve_cost_usd``, held at each ``model.before`` so concurrent
    workers cannot overspend; ``scope`` and ``lifetime`` of the counters."""

    max_tokens: int | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    warn_at: float | None = Field(default=0.7, gt=0, lt=1)
    per: Duration | None = None
    reserve_tokens: int | None = Field(default=None, gt=0)
    reserve_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @field_validator("per")
    @classmethod
    def _a_window(cls, per: Duration | None) -> Duration | None:
        if per is not None:
            duration(per)
        return per

    @model_validator(mode="after")
    def _has_a_limit(self) -> Self:
        if self.max_tokens is None and self.max_cost_usd is None:
            raise ValueError("give max_tokens, max_cost_usd or both: a budget needs a limit")
        if self.reserve_tokens is not None and self.max_tokens is None:
            raise ValueError("reserve_tokens needs max_tokens: a reservation is held against it")
        if self.reserve_cost_usd is not None and self.max_cost_usd is None:
            raise ValueError(
                "reserve_cost_usd needs max_cost_usd: a reservation is held against it"
            )
        return self


@dataclass(frozen=True, slots=True)
class _Limit:
    """One limit of the budget: its counter's name, the limit, how its amounts are written,
    and what a request holds of it (``reserve_*``)."""

    name: str
    """``tokens`` or ``cost_usd``"""
    limit: float
    unit: Callable[[float], str]
    reserve: float | None

    def shown(self, spent: float) -> str:
        return f"{self.unit(spent)} of its {self.unit(self.limit)} budget"


def _tokens(count: float) -> str:
    return f"{int(count):,} tokens"


def _dollars(amount: float) -> str:
    return f"${amount:,.4f}"


@middleware(
    hooks=["model.before", "model.after", "task.end"],
    fail_mode="closed",
    config=BudgetSettings,
    sample={"max_tokens": 100_000, "max_cost_usd": 5.0, "warn_at": 0.7},
    state=True,
)
class BudgetGuard(Guard):
    """Refuses a model request (``Block``, ``budget_exceeded``) once its scope has spent its
    token or cost budget, and warns the model at ``warn_at`` of it."""

    def __init__(self, config: BudgetSettings) -> None:
        self.max_tokens = config.max_tokens
        self.max_cost_usd = config.max_cost_usd
        self.warn_at = config.warn_at
        self.scope = config.scope
        self.per = None if config.per is None else duration(config.per)
        self.per_words = "" if config.per is None else f" per {written(config.per)}"
        self.reserve_tokens = config.reserve_tokens
        self.reserve_cost_usd = config.reserve_cost_usd
        life = duration(config.lifetime)
        self.life = life if self.per is None else max(life, self.per)
        self.limits: list[_Limit] = []
        # run id -> (hold, keys) of the reservation awaiting its response (bounded: MAX_RUNS)
        self._pending: OrderedDict[str, tuple[str, list[str]]] = OrderedDict()
        if config.max_tokens is not None:
            self.limits.append(_Limit("tokens", config.max_tokens, _tokens, self.reserve_tokens))
        if config.max_cost_usd is not None:
            limit = _Limit("cost_usd", config.max_cost_usd, _dollars, self.reserve_cost_usd)
            self.limits.append(limit)

    async def __call__(
        self, event: ModelRequestEvent | ModelResponseEvent | TaskEndEvent, env: Envelope
    ) -> Block | Continue | None:
        view = self.state
        try:
            if isinstance(event, ModelResponseEvent):
                await self._spend(view, event, env)
                return None
            if isinstance(event, ModelRequestEvent):
                return await self._before(view, event, env)
            await self._let_go(view, env.run_id)
            if final(event):
                keys = [view.key("run", env, WARNED)]
                if self.scope == "run":
                    keys.extend(
                        view.key("run", env, self._name(limit, env)) for limit in self.limits
                    )
                await view.delete(*keys)
            return None
        except StateUnavailable as exc:
            return unavailable(view, exc)

    def _name(self, limit: _Limit, env: Envelope) -> str:
        """A limit's counter: ``tokens`` or ``cost_usd``, with the window's number
        ``floor(now / per)`` under ``per`` (the envelope's clock, seconds since the epoch)."""
        if self.per is None:
            return limit.name
        return f"{limit.name}.{math.floor(env.clock.now().timestamp() / self.per)}"

    async def _spend(self, view: StateView, event: ModelResponseEvent, env: Envelope) -> None:
        usage = event.response.usage
        spent = {
            "tokens": float(usage.input_tokens + usage.output_tokens),
            "cost_usd": usage.cost_usd,
        }
        # In a shared scope each response is charged once (its hold id); a run's own budget
        # charges every response it is shown, as before stores (I33).
        hold = charge_id(env, event, once=self.scope != "run")
        held = _held(env, event.step)
        if (pending := self._pending.get(env.run_id)) is not None and pending[0] == held:
            del self._pending[env.run_id]
        for limit in self.limits:
            key = view.key(self.scope, env, self._name(limit, env))
            await view.commit(key, hold, float(spent[limit.name]), life=self.life)
            if limit.reserve is not None:
                await view.release(key, held)

    async def _before(
        self, view: StateView, event: ModelRequestEvent, env: Envelope
    ) -> Block | Continue | None:
        hold = _held(env, event.step)
        made: list[str] = []
        spent: dict[str, float] = {}
        for limit in self.limits:
            name = self._name(limit, env)
            key = view.key(self.scope, env, name)
            if limit.reserve is None:
                total = await view.total(key)
                if total / limit.limit < 1:
                    spent[name] = total
                    continue
                refusal = self._exceeded(limit, total)
            else:
                held = await view.reserve(
                    key, hold, limit.reserve, limit=limit.limit, ttl=RESERVE_TTL, life=self.life
                )
                if held.granted:
                    made.append(key)
                    spent[name] = held.total - limit.reserve
                    continue
                refusal = self._exceeded(limit, held.total)
                if held.total / limit.limit < 1:
                    refusal = Block(
                        reason=f"the {self.scope} has spent or holds {limit.shown(held.total)}"
                        f"{self.per_words}; a request holds {limit.unit(limit.reserve)}",
                        code="budget_exceeded",
                    )
            for key in made:  # the request does not go out: what it held is let go
                await view.release(key, hold)
            return refusal
        if made:
            self._pending[env.run_id] = (hold, made)
            self._pending.move_to_end(env.run_id)
            if len(self._pending) > MAX_RUNS:
                self._pending.popitem(last=False)
        return await self._warn(view, event, env, spent)

    async def _let_go(self, view: StateView, run_id: str) -> None:
        """At ``task.end``, whatever the exit reason, release the run's reservation whose
        response never came: a run ended between request and response (an adapter that cannot
        send a request with the guard's note, a cancelled run) would otherwise hold the budget
        for ``RESERVE_TTL``. Kept in this process only; elsewhere the hold expires."""
        pending = self._pending.pop(run_id, None)
        if pending is not None:
            hold, keys = pending
            for key in keys:
                await view.release(key, hold)

    def _exceeded(self, limit: _Limit, spent: float) -> Block:
        return Block(
            reason=f"the {self.scope} has spent {limit.shown(spent)}{self.per_words}",
            code="budget_exceeded",
        )

    async def _warn(
        self, view: StateView, event: ModelRequestEvent, env: Envelope, spent: dict[str, float]
    ) -> Continue | None:
        """A note for each limit at or past ``warn_at`` that this run was not warned about."""
        if self.warn_at is None:
            return None
        due = {
            name: (limit, spent[name])
            for limit in self.limits
            if spent[name := self._name(limit, env)] / limit.limit >= self.warn_at
        }
        if not due:
            return None

        def warn(value: Any) -> tuple[Any, list[str]]:
            warned = {n for n in value if isinstance(n, str)} if isinstance(value, list) else set()
            new = [name for name in due if name not in warned]
            return (sorted(warned | set(new)) if new else None), new

        new = await update(view, view.key("run", env, WARNED), warn, life=self.life)
        notes = []
        for name in new:
            limit, amount = due[name]
            notes.append(
                f"this {self.scope} has spent {limit.shown(amount)}{self.per_words} "
                f"({int(amount / limit.limit * 100)}%); model requests stop at 100%, "
                "so finish the task soon."
            )
        return Continue(modified=with_note(event, " ".join(notes))) if notes else None


def _held(env: Envelope, step: int) -> str:
    """The hold id of a request's reservation: ``{run}/{step}/model``."""
    return f"{env.run_id}/{step}/model"
