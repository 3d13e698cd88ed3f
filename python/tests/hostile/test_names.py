"""Hostile exception type names, codes and reasons through emit (issue 28, I28).

Whatever a middleware raises or answers, the failure record's ``error`` is the type's own name
when that is ASCII identifiers joined by dots of at most 128 characters, else
``UnnamedException``; an answer whose ``reason`` is past 4,096 characters or whose ``code``,
``approver_role`` or ``to`` is past 128 (code points) is an invalid return. No secret reaches the
trace, the log line or the result, and emit never raises. The expected answers are computed here
from the rule, not asked of the bus.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from conftest import tool_call
from hostile_support import hostile_settings
from hypothesis import assume, given
from hypothesis import strategies as st

import harnessweaver as hw

SECRET = "sk-live-SECRET-7f3a9c"
UNNAMED = "UnnamedException"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def expected_name(real: str) -> str:
    """I28's recorded name of a type whose own name is ``real``."""
    plain = str.__str__(real)
    ok = str.__len__(plain) <= 128 and plain.isascii() and _IDENT.fullmatch(plain) is not None
    return plain if ok else UNNAMED


class _Secretive(type):
    """A metaclass whose ``__name__`` holds a secret."""

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        return SECRET


class _Raising(type):
    """A metaclass whose ``__name__`` getter raises a secret."""

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError(SECRET)


class Hostile(str):
    """A str whose methods raise: the bus must read its characters, never call them. (Its
    ``repr`` is str's, so that a failing example can still be shown.)"""

    def _boom(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError(SECRET)

    __len__ = __str__ = __iter__ = __format__ = _boom
    isascii = encode = isidentifier = _boom


def _emit(guard: Any, backend: str = "asyncio") -> tuple[hw.HookResult, list[dict[str, Any]], str]:
    """One emit on tool.before with ``guard`` registered; the result, the trace read back from
    its JSON Lines (plain str values) and everything logged."""
    bus = hw.HookBus()
    bus.register(guard)
    ctx = hw.RunContext()
    logged: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage() + repr(record.__dict__))

    handler = _Keep()
    log = logging.getLogger("harnessweaver")
    log.addHandler(handler)
    try:
        result = anyio.run(bus.emit, "tool.before", tool_call(), ctx, backend=backend)
    except Exception as escaped:  # emit must never raise; say so without reading the exception
        own_name = type.__dict__["__name__"].__get__(type(escaped))
        pytest.fail(f"emit raised a {str.__str__(own_name)!r}", pytrace=False)
    finally:
        log.removeHandler(handler)
    text = ctx.trace.to_jsonl()
    records = [json.loads(line) for line in text.split("\n") if line]  # JSON Lines: "\n" only
    return result, records, text + "\n".join(logged)


def _raiser(exc_type: type[BaseException], fail_mode: str, timed: bool, suspended: bool) -> Any:
    @hw.middleware(
        hooks=["tool.before"], fail_mode=fail_mode, timeout=5 if timed else None, name="leaky"
    )
    async def leaky(event: Any, env: hw.Envelope) -> None:
        if suspended:
            await anyio.sleep(0)
        raise exc_type(SECRET)

    return leaky


def _assert_failed(result: hw.HookResult, records: list[dict[str, Any]], seen: str, error: str,
                   fail_mode: str, failure: str = "exception") -> None:  # fmt: skip
    failure_record = records[0]
    assert failure_record["kind"] == "failure"
    assert (failure_record["failure"], failure_record["error"]) == (failure, error)
    if fail_mode == "closed":
        assert result.outcome == hw.Block(f"middleware leaky failed: {failure}", "middleware_error")
    else:
        assert result.outcome == hw.Continue()
        assert f"({error})" in seen  # the log line names the recorded name
    assert SECRET not in seen
    assert SECRET not in repr(result)


# --- Item 1: a metaclass's __name__ (24+ variants) ---------------------------------------------


@pytest.mark.parametrize("metaclass", [_Secretive, _Raising], ids=["returns", "raises"])
@pytest.mark.parametrize("fail_mode", ["open", "closed"])
@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
@pytest.mark.parametrize("suspended", [False, True], ids=["immediate", "suspended"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_metaclass_name_is_never_read(
    metaclass: type, fail_mode: str, timed: bool, suspended: bool, backend: str
) -> None:
    leaky_type = metaclass("Leaky", (Exception,), {})
    guard = _raiser(leaky_type, fail_mode, timed, suspended)
    result, records, seen = _emit(guard, backend)
    _assert_failed(result, records, seen, "Leaky", fail_mode)


def test_a_metaclass_over_a_hostile_own_name() -> None:
    """The type's own name is no type name, and a metaclass answers a valid-looking one: the
    own name decides (what CPython's PyType_GetName reads)."""

    class Polite(type):
        @property
        def __name__(cls) -> str:  # type: ignore[override]
            return "LooksFine"

    leaky_type: Any = Polite(f"{SECRET} in a name", (Exception,), {})
    result, records, seen = _emit(_raiser(leaky_type, "open", False, False))
    _assert_failed(result, records, seen, UNNAMED, "open")


# --- Item 2: hostile type names ------------------------------------------------------------------

_identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,40}", fullmatch=True)
_names = st.one_of(
    st.lists(_identifier, min_size=1, max_size=6).map(".".join),  # valid unless too long
    st.text(max_size=300),  # anything: empty, line breaks, JSON, non-ASCII…
    st.sampled_from(["", "a\nb", '{"token":"x"}', SECRET, "Ärger", "a..b", ".a", "a.", "9x"]),
    st.integers(120, 140).map(lambda n: "N" * n),
    st.just("Boom" * 1250),
)


def _type_named(name: str, metaclass: type = type) -> type[Exception]:
    try:
        made: type[Exception] = metaclass(name, (Exception,), {})
    except (ValueError, UnicodeEncodeError):
        assume(False)  # type() refuses NUL and lone surrogates: no such class exists
        raise
    return made


@hostile_settings
@given(
    name=_names,
    subclass=st.booleans(),
    metaclass=st.sampled_from([type, _Secretive, _Raising]),
    fail_mode=st.sampled_from(["open", "closed"]),
    suspended=st.booleans(),
    timed=st.booleans(),
)
def test_hostile_type_names_are_recorded_by_the_rule(
    name: str, subclass: bool, metaclass: type, fail_mode: str, suspended: bool, timed: bool
) -> None:
    given_name: str = Hostile(name) if subclass else name
    leaky_type = _type_named(given_name, metaclass)
    result, records, seen = _emit(_raiser(leaky_type, fail_mode, timed, suspended))
    _assert_failed(result, records, seen, expected_name(given_name), fail_mode)


# --- Item 2: codes, reasons, roles and targets -----------------------------------------------

_ASTRAL = "\U0001f600"


def _sized(bound: int) -> st.SearchStrategy[str]:
    """Texts around ``bound`` code points, some of them outside the BMP."""
    return st.builds(
        lambda n, ch: ch * n,
        st.sampled_from([0, 1, bound - 1, bound, bound + 1, 2 * bound, 10 * bound]),
        st.sampled_from(["c", _ASTRAL, "é", "\n"]),
    ) | st.text(max_size=2 * bound)


def _answer(kind: str, reason: str, token: str | None, code: str | None) -> Any:
    if kind == "block":
        return hw.Block(reason, code)
    if kind == "suspend":
        return hw.Suspend(reason, approver_role=token, code=code)
    if kind == "escalate":
        return hw.Escalate(reason, to=token, code=code)
    return hw.Retry(reason, code=code)


def _valid(text: str | None, bound: int) -> bool:
    if text is None:
        return True
    plain = str.__str__(text)
    try:
        plain.encode("utf-8")
    except UnicodeEncodeError:
        return False  # I16
    return len(plain) <= bound


@hostile_settings
@given(
    kind=st.sampled_from(["block", "suspend", "escalate", "retry"]),
    reason=_sized(4096),
    token=st.none() | _sized(128),
    code=st.none() | _sized(128),
    subclass=st.booleans(),
    fail_mode=st.sampled_from(["open", "closed"]),
)
def test_outcome_texts_are_bounded(
    kind: str, reason: str, token: str | None, code: str | None, subclass: bool, fail_mode: str
) -> None:
    wrap: Callable[[str | None], Any] = (
        (lambda t: None if t is None else Hostile(t)) if subclass else (lambda t: t)
    )
    answer = _answer(kind, wrap(reason), wrap(token), wrap(code))

    @hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, name="leaky")
    async def leaky(event: Any, env: hw.Envelope) -> Any:
        return answer

    result, records, seen = _emit(leaky)
    token_ok = kind in ("block", "retry") or _valid(token, 128)
    if _valid(reason, 4096) and _valid(code, 128) and token_ok:
        assert records[0]["kind"] == "outcome"
        assert records[0]["outcome"] == kind
        assert records[0].get("code") == (None if code is None else str.__str__(code))
        assert result.outcome is answer
        return
    _assert_failed(result, records, seen, "InvalidReturn", fail_mode, "invalid_return")
