"""What the bus logs, on the ``harnessweaver.buslog`` logger (``docs/logging.md``).

Both cores call these two functions, and only on their slow paths: a middleware that failed
open (the run goes on without it) and a modification that broke a hook contract in warn mode
(it stands). A closed failure is not logged: it is the Block the caller receives. Records
carry type names only, never an exception's message (R9); the same facts are in the trace.
"""

from __future__ import annotations

import logging

__all__ = ["contract_warning", "failed_open"]

_log = logging.getLogger(__name__)


def failed_open(middleware: str, hook: str, failure: str, error: str) -> None:
    """``middleware`` failed on ``hook`` with ``failure`` (its I5 kind; ``error`` the type
    name) and its fail mode is open: the failure is recorded and the chain goes on."""
    _log.warning(
        "middleware %s failed open on %s: %s (%s); the chain goes on without it",
        middleware,
        hook,
        failure,
        error,
        extra={"middleware": middleware, "hook": hook, "failure": failure, "error": error},
    )


def contract_warning(middleware: str, hook: str, rule: str) -> None:
    """``middleware``'s modification on ``hook`` broke contract ``rule`` on a bus in warn
    mode: the modification stands (I14)."""
    _log.warning(
        "middleware %s broke hook contract %s on %s; warn mode: the modification stands",
        middleware,
        rule,
        hook,
        extra={"middleware": middleware, "hook": hook, "contract": rule},
    )
