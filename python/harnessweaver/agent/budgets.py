"""Budgets: how far a run may go before it ends with a ``budget_*`` exit reason.

Budgets are checked before every step and before every model call (so a retried call is
checked too); the run stops at the first limit reached. Wall time is measured on the
harness's injectable monotonic clock and counts only while the run is running, never while it
waits for a decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Usage
from .errors import AgentError

__all__ = ["Budgets"]

_RULE = "budgets"


def _positive(name: str, value: object, *, whole: bool) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (whole and not isinstance(value, int))
        or value <= 0
    ):
        unit = "a whole number > 0" if whole else "a number > 0"
        raise AgentError(
            "invalid_budget",
            _RULE,
            f"invalid {name} {value!r}: a budget is {unit} or None ({_RULE})",
        )


@dataclass(frozen=True, slots=True)
class Budgets:
    """Limits of one run (``None``: no limit). The step limit is on by default, so a model
    that never stops calling tools cannot loop for ever."""

    max_steps: int | None = 25
    max_tokens: int | None = None
    """Input plus output tokens over the whole run."""
    max_cost_usd: float | None = None
    max_seconds: float | None = None
    """Wall time while running, on the harness's clock."""

    def __post_init__(self) -> None:
        _positive("max_steps", self.max_steps, whole=True)
        _positive("max_tokens", self.max_tokens, whole=True)
        _positive("max_cost_usd", self.max_cost_usd, whole=False)
        _positive("max_seconds", self.max_seconds, whole=False)

    def exceeded(self, *, steps: int, usage: Usage, elapsed_s: float) -> tuple[str, str] | None:
        """``(exit_reason, why)`` for the first limit reached, or ``None``. ``steps`` counts
        the steps completed, so with ``max_steps=3`` a fourth step never starts."""
        tokens = usage.input_tokens + usage.output_tokens
        checks = (
            ("budget_steps", self.max_steps, steps, "steps"),
            ("budget_tokens", self.max_tokens, tokens, "tokens"),
            ("budget_cost", self.max_cost_usd, usage.cost_usd, "US dollars"),
            ("budget_time", self.max_seconds, elapsed_s, "seconds"),
        )
        for reason, limit, used, unit in checks:
            if limit is not None and used >= limit:
                return reason, f"the run used {used:g} {unit}; its budget is {limit:g}"
        return None
