"""When a run's state goes: the exit reasons after which a run cannot go on, and the bound on
how many runs one guard remembers in this process.

The stateful built-ins keep their counts on a state store (``harnessweaver.state``, I33).
``task.end`` also fires when a run only stops: suspended, or stopped by a provider error, an
error or one of the run loop's budgets, all of which ``harness.resume`` can go on with, under
the same run id. Such a run keeps its run-scope keys, so a resumed run goes on with the counts
it had (a budget guard that forgot what a run spent would let a resumed run spend it again).
Only the exit reasons after which a run cannot go on delete them; an exit reason this module
does not know keeps them, the safe side, until their lifetime ends.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FINAL_EXIT_REASONS", "MAX_RUNS"]

MAX_RUNS: Final = 4096
"""How many runs a guard remembers in its own process at most (``budget_guard``'s open
reservations): the least recently used goes first."""

FINAL_EXIT_REASONS: Final = frozenset(
    {"completed", "blocked", "escalated", "denied", "retry_exhausted"}
)
"""The exit reasons after which a run cannot be resumed: its run-scope keys are deleted at
``task.end``."""
