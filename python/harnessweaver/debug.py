"""Seeing why a middleware raised: the ``harnessweaver.debug`` logger (``docs/logging.md``).

The trace and the ``harnessweaver.buslog`` records name a failed middleware's exception by its
type only (R9): its message may hold a secret. While debugging, that is not enough, so this
logger, switched on at DEBUG, receives each exception a middleware raises with its message and
traceback (``exc_info``). It is off by default, and never feeds the trace or its records.

Why the check is made when a middleware is registered, not when it fails: the Rust core
catches a middleware's exception in Rust and keeps only its type name, so the exception object
reaches Python only if the call is wrapped before the core gets it. A wrapper costs a frame on
every call, so it is added only to middleware registered while the logger is enabled for DEBUG;
with the logger off, the bus runs exactly the callables it ran before (no work in any emit).
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["enabled", "watched"]

_log = logging.getLogger(__name__)


_PARENT = logging.getLogger("harnessweaver")


def enabled() -> bool:
    """Whether ``harnessweaver.debug`` is enabled for DEBUG, by a level set on it or on
    ``harnessweaver`` (asked once per registration). A root logger at DEBUG alone does not
    count: the records hold exception messages, so they are never turned on by accident."""
    for logger in (_log, _PARENT):
        if logger.level != logging.NOTSET:
            return logger.level <= logging.DEBUG and _log.isEnabledFor(logging.DEBUG)
    return False


def _report(name: str, exc: Exception) -> None:
    # The message names the middleware and the exception's type; the message and traceback
    # come with exc_info, formatted by the application's handler, never by the bus. Imported
    # here: a bus on the Rust core loads no pure-core module (test_public_api).
    from ._pycore.failure import exception_name

    _log.debug(
        "middleware %s raised %s (the trace records its type only)",
        name,
        exception_name(exc),  # as the trace names it (I28): never raises, runs no code
        exc_info=exc,
        extra={"middleware": name},
    )


async def _watch(name: str, coroutine: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coroutine  # send, throw and close pass straight through to it
    except Exception as exc:  # a cancellation (BaseException) is the caller's: not reported
        _report(name, exc)
        raise


def watched(call: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``call`` as the bus runs it, with each ``Exception`` it raises (when called, or from the
    coroutine it returns) reported on ``harnessweaver.debug`` and then raised unchanged, so
    the core classifies the failure exactly as without it. Anything else it returns (an
    invalid return, ruling 9) is handed on untouched."""

    def call_watched(event: Any, env: Any) -> Any:
        try:
            answer = call(event, env)
        except Exception as exc:
            _report(name, exc)
            raise
        if type(answer) is types.CoroutineType:
            return _watch(name, answer)
        return answer

    return call_watched
