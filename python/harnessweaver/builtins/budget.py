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
stops the next one. The run loop's own budgets, and a provider's ``max_tokens``, bound a
single call. The state is in memory, per run (``env.run_id``; see ``_runs``): a run resumed
in another process starts counting again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, ModelResponseEvent, TaskEndEvent
from ..middleware import middleware
from ..outcomes import Block, Continue
from ._notes import with_note
from ._runs import RunStates

__all__ = ["BudgetGuard", "BudgetSettings"]


class BudgetSettings(BaseModel):
    """``max_tokens`` and/or ``max_cost_usd`` (at least one); ``warn_at``, a fraction of each
    limit (``null``: no warning)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_tokens: int | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    warn_at: float | None = Field(default=0.7, gt=0, lt=1)

    @model_validator(mode="after")
    def _has_a_limit(self) -> Self:
        if self.max_tokens is None and self.max_cost_usd is None:
            raise ValueError("give max_tokens, max_cost_usd or both: a budget needs a limit")
        return self


@dataclass(slots=True)
class _Spent:
    """One run's usage so far, and the limits it has been warned about."""

    tokens: int = 0
    cost_usd: float = 0.0
    warned: set[str] = field(default_factory=set)

    def dump(self) -> dict[str, Any]:
        """The usage so far and the warnings given, as JSON values (see ``_runs``)."""
        return {"tokens": self.tokens, "cost_usd": self.cost_usd, "warned": sorted(self.warned)}

    def restore(self, data: Any) -> None:
        """Take a :meth:`dump`."""
        try:
            tokens, cost, warned = int(data["tokens"]), float(data["cost_usd"]), data["warned"]
            warned = {str(name) for name in warned}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a budget_guard state: {type(exc).__name__}") from None
        self.tokens, self.cost_usd, self.warned = tokens, cost, warned


@dataclass(frozen=True, slots=True)
class _Limit:
    """One limit of the budget, against what a run has spent."""

    name: str
    spent: float
    limit: float
    unit: Callable[[float], str]

    @property
    def fraction(self) -> float:
        return self.spent / self.limit

    def shown(self) -> str:
        return f"{self.unit(self.spent)} of its {self.unit(self.limit)} budget"


def _tokens(count: float) -> str:
    return f"{int(count):,} tokens"


def _dollars(amount: float) -> str:
    return f"${amount:,.4f}"


@middleware(
    hooks=["model.before", "model.after", "task.end"],
    fail_mode="closed",
    config=BudgetSettings,
    sample={"max_tokens": 100_000, "max_cost_usd": 5.0, "warn_at": 0.7},
)
class BudgetGuard:
    """Refuses a model request (``Block``, ``budget_exceeded``) once the run has spent its
    token or cost budget, and warns the model at ``warn_at`` of it."""

    def __init__(self, config: BudgetSettings) -> None:
        self.max_tokens = config.max_tokens
        self.max_cost_usd = config.max_cost_usd
        self.warn_at = config.warn_at
        self.runs: RunStates[_Spent] = RunStates(_Spent)

    async def __call__(
        self, event: ModelRequestEvent | ModelResponseEvent | TaskEndEvent, env: Envelope
    ) -> Block | Continue | None:
        if isinstance(event, ModelResponseEvent):
            usage = event.response.usage
            spent = self.runs[env.run_id]
            spent.tokens += usage.input_tokens + usage.output_tokens
            spent.cost_usd += usage.cost_usd
            return None
        if isinstance(event, ModelRequestEvent):
            return self._before(event, env.run_id)
        self.runs.end(env.run_id, event)
        return None

    def _limits(self, spent: _Spent) -> list[_Limit]:
        limits = []
        if self.max_tokens is not None:
            limits.append(_Limit("tokens", spent.tokens, self.max_tokens, _tokens))
        if self.max_cost_usd is not None:
            limits.append(_Limit("cost", spent.cost_usd, self.max_cost_usd, _dollars))
        return limits

    def _before(self, event: ModelRequestEvent, run_id: str) -> Block | Continue | None:
        spent = self.runs.peek(run_id)
        if spent is None:
            return None
        limits = self._limits(spent)
        for limit in limits:
            if limit.fraction >= 1:
                return Block(reason=f"the run has spent {limit.shown()}", code="budget_exceeded")
        if self.warn_at is None:
            return None
        notes = []
        for limit in limits:
            if limit.fraction >= self.warn_at and limit.name not in spent.warned:
                spent.warned.add(limit.name)
                notes.append(
                    f"this run has spent {limit.shown()} ({int(limit.fraction * 100)}%); "
                    "model requests stop at 100%, so finish the task soon."
                )
        return Continue(modified=with_note(event, " ".join(notes))) if notes else None
