"""Hostile warnings and hostile modified events through ``emit`` (issue 28, I24, I29).

Hypothesis builds answers whose warnings are ``str``, ``list`` and ``tuple`` subclasses with
raising or lying methods, many references to long texts, lone surrogates and items of other
types; and modified events (and callers' events) whose properties or ``model_dump`` raise,
under every contract mode, with and without an identity scheme, failing open and closed. Each
example's one expected answer is computed here from what was generated, never from the bus:
the outcome, the failure kind and error name, the records, the result's warnings. ``emit``
never raises, and the hostile message appears nowhere.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import pytest
from conftest import tool_call, untimed
from hostile_support import hostile_settings
from hostile_values import SECRET, ClaimsList, RaisingList, RaisingStr, RaisingTuple, boom
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw


class LyingStr(str):
    def __str__(self) -> str:
        return SECRET

    def __len__(self) -> int:
        return 0

    def isascii(self) -> bool:
        return True


STR_KINDS = {"str": str, "raising": RaisingStr, "lying": LyingStr}
CONTAINERS = {
    "list": list,
    "tuple": tuple,
    "raising_list": RaisingList,
    "raising_tuple": RaisingTuple,
}

# Texts: ASCII, Latin-1, the BMP and beyond, long ones, and lone surrogates.
PIECES = st.sampled_from(["", "a", "\u00e9", "\u0100", "\U0001f600", "\ud800", "\udfff", " "])
TEXTS = st.one_of(
    st.text(max_size=20),
    st.lists(PIECES, max_size=6).map("".join),
    st.tuples(PIECES, st.integers(250, 3000)).map(lambda p: p[0] * p[1]),
)


@dataclass(frozen=True)
class Item:
    """A warnings item: a text of some ``str`` kind, or a value that is no text."""

    text: str | None  # None: not a str at all
    kind: str
    other: Any = None

    def build(self) -> Any:
        return self.other if self.text is None else STR_KINDS[self.kind](self.text)


ITEMS = st.one_of(
    st.builds(Item, TEXTS, st.sampled_from(sorted(STR_KINDS))),
    st.builds(Item, st.none(), st.just(""), st.sampled_from([5, None, b"x", 1.5, ["a"]])),
)


def _whole(text: str) -> bool:
    return not any("\ud800" <= c <= "\udfff" for c in text)


def expected_warnings(container: str, items: list[Item]) -> tuple[str, ...] | str | None:
    """The oracle: ``"invalid"``, or the kept texts (``None`` when none), per I24."""
    if container == "claims":
        return "invalid"
    if any(i.text is None or not _whole(i.text) for i in items):
        return "invalid"
    kept = []
    for item in items:
        text = item.text
        assert text is not None
        if text:
            kept.append(text if len(text) <= 256 else text[:255] + "\u2026")
    return tuple(kept[:8]) or None


async def _emit(answer: Any, event: Any, fail_mode: str, **options: Any) -> tuple[Any, Any]:
    @hw.middleware(name="m", hooks=["tool.before"], fail_mode=fail_mode)
    async def m(event: Any, env: hw.Envelope) -> Any:
        return answer

    bus = hw.HookBus(**options)
    bus.register(m)
    ctx = hw.RunContext()
    result = await bus.emit("tool.before", event, ctx)
    return result, untimed(ctx.trace)


def _failed(records: list[dict[str, Any]], failure: str, fail_mode: str) -> None:
    first = records[0]
    assert (first["kind"], first["failure"], first["fail_mode"]) == ("failure", failure, fail_mode)
    error = {"invalid_return": "InvalidReturn", "contract_violation": "ContractViolation"}
    assert first["error"] == error[failure]
    closed = fail_mode == "closed"
    assert first["outcome"] == ("block" if closed else "continue")


class _Captured(logging.Handler):
    """Every log line while an example runs (caplog is not reset between examples)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.text = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.text += logging.Formatter().format(record) + "\n"


@contextmanager
def _logged() -> Iterator[_Captured]:
    root = logging.getLogger()
    handler, level = _Captured(), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _no_secret(*things: object, log: _Captured) -> None:
    assert SECRET not in "".join(repr(t) for t in things) + log.text


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@hostile_settings
@given(
    container=st.sampled_from([*sorted(CONTAINERS), "claims"]),
    items=st.lists(ITEMS, max_size=12),
    repeat=st.sampled_from([1, 2, 500]),
    fail_mode=st.sampled_from(["open", "closed"]),
)
def test_hostile_warnings_get_the_one_answer(
    backend: str,
    container: str,
    items: list[Item],
    repeat: int,
    fail_mode: str,
) -> None:
    items = items * repeat
    built = [i.build() for i in items]
    value = ClaimsList() if container == "claims" else CONTAINERS[container](built)
    want = expected_warnings(container, items)
    with _logged() as log:
        result, records = anyio.run(
            _emit, hw.Continue(warnings=value), tool_call(), fail_mode, backend=backend
        )
    if want == "invalid":
        _failed(records, "invalid_return", fail_mode)
        assert result.warnings == ()
    else:
        assert records[0]["kind"] == "outcome" and records[0]["outcome"] == "continue"
        assert records[0].get("warnings") == (None if want is None else list(want))
        assert [w.text for w in result.warnings] == list(want or ())
        assert all(type(w.text) is str for w in result.warnings)
    assert records[-1]["kind"] == "hook" and len(records) == 2
    _no_secret(records, result.outcome, log=log)


# -- hostile events ---------------------------------------------------------------------------

RAISING_FIELDS = ("none", "tool", "call", "step")


def hostile_event(raising: str, dump_raises: bool, name: str = "refund_payment") -> Any:
    """A ``tool.before`` event whose ``raising`` property and/or ``model_dump`` raise."""
    namespace: dict[str, Any] = {}
    if dump_raises:
        namespace["model_dump"] = boom
    kind = type("HostileEvent", (hw.ToolCallEvent,), namespace)
    if raising != "none":
        setattr(kind, raising, property(boom))  # pydantic keeps properties out of the body
    plain = tool_call(name, note="x")
    return kind(tool=plain.tool, call=plain.call)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@hostile_settings
@given(
    modified_raises=st.sampled_from(RAISING_FIELDS),
    modified_dump_raises=st.booleans(),
    caller_raises=st.sampled_from(RAISING_FIELDS),
    caller_dump_raises=st.booleans(),
    renames=st.booleans(),
    contracts=st.sampled_from([None, "warn", "strict"]),
    identity=st.sampled_from([None, "jcs-sha256"]),
    fail_mode=st.sampled_from(["open", "closed"]),
)
def test_hostile_events_get_the_one_answer(
    backend: str,
    modified_raises: str,
    modified_dump_raises: bool,
    caller_raises: str,
    caller_dump_raises: bool,
    renames: bool,
    contracts: str | None,
    identity: str | None,
    fail_mode: str,
) -> None:
    given_event = hostile_event(caller_raises, caller_dump_raises)
    modified = hostile_event(
        modified_raises, modified_dump_raises, "other" if renames else "refund_payment"
    )
    options: dict[str, Any] = {"contracts": contracts, "identity": identity}
    with _logged() as log:
        emit = partial(_emit, hw.Continue(modified=modified), given_event, fail_mode, **options)
        result, records = anyio.run(emit, backend=backend)
    # The oracle. A contract reads tool and call of both events (tool.before's rules).
    unreadable = {"tool", "call"} & {modified_raises, caller_raises}
    taken = True
    if contracts is not None and unreadable:
        _failed(records, "invalid_return", fail_mode)
        taken = False
    elif contracts is not None and renames:
        if contracts == "strict":
            _failed(records, "contract_violation", fail_mode)
            taken = False
        else:
            assert records[0]["contract"] == "tool.before/tool_unchanged"
    if taken:
        assert records[0]["kind"] == "outcome" and records[0]["modified"] is True
        assert result.event is modified
    else:
        assert result.event is given_event
    hook = records[-1]
    assert hook["kind"] == "hook" and hook["modified"] is taken and len(records) == 2
    # Correlation reads the caller's event only (I21): what cannot be read is left out.
    for record in records:
        assert ("step" in record) == (caller_raises != "step")
        assert ("tool" in record) == (caller_raises != "tool")
    if identity is None:
        assert "input_identity" not in hook
    else:
        plain = hw.content_identity(tool_call("refund_payment", note="x"))
        renamed = hw.content_identity(tool_call("other", note="x"))
        given_id = None if caller_dump_raises else plain
        if taken:
            left = None if modified_dump_raises else (renamed if renames else plain)
        else:
            left = given_id
        assert (hook["input_identity"], hook["enforced_identity"]) == (given_id, left)
    _no_secret(records, result.outcome, log=log)
