"""Hostile values in answers and events (issue 28, I29), on both cores.

A middleware's warnings and modified event are Python objects whose classes a middleware
writes: a ``str``, ``list`` or ``tuple`` subclass whose methods raise or lie, an event subclass
whose properties or ``model_dump`` raise. The bus reads them as the Rust core does (from the
objects' storage, through the base type's own methods) and never lets what they raise out of
``emit``: warnings are judged by what they hold (I24, I29), a modification whose contract
fields cannot be read is an invalid return (I14, I29), an event whose values cannot be had
has no identity (I27, I29), and a caller's event whose tool or step cannot be read is traced
without them (I21).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from conftest import tool_call, untimed
from hostile_values import (
    SECRET,
    ClaimsList,
    HostileError,
    RaisingList,
    RaisingStr,
    RaisingTuple,
    boom,
)

import harnessweaver as hw

pytestmark = pytest.mark.anyio


class LyingStr(str):
    """A ``str`` that says it is another text."""

    def __str__(self) -> str:
        return "a lie"

    def __iter__(self) -> Any:
        return iter("a lie")


class BadTool(hw.ToolCallEvent):
    """A ``tool.before`` event whose ``tool`` cannot be read (pydantic keeps a property out of
    the class body, so it is set on the class afterwards)."""


BadTool.tool = property(boom)  # type: ignore[assignment]


class BadCall(hw.ToolCallEvent):
    pass


BadCall.call = property(boom)  # type: ignore[assignment]


class BadStep(hw.ToolCallEvent):
    pass


BadStep.step = property(boom)  # type: ignore[assignment]


class BadDump(hw.ToolCallEvent):
    def model_dump(self, *args: Any, **kwargs: Any) -> Any:
        raise HostileError(SECRET)


def hostile(kind: type[hw.ToolCallEvent], name: str = "refund_payment") -> hw.ToolCallEvent:
    plain = tool_call(name)
    return kind(tool=plain.tool, call=plain.call)


async def emit(
    answer: Callable[[Any], Any],
    event: Any = None,
    *,
    fail_mode: str = "closed",
    **bus_options: Any,
) -> tuple[hw.HookResult, list[dict[str, Any]]]:
    @hw.middleware(name="m", hooks=["tool.before"], fail_mode=fail_mode)
    async def m(event: Any, env: hw.Envelope) -> Any:
        return answer(event)

    bus = hw.HookBus(**bus_options)
    bus.register(m)
    ctx = hw.RunContext(envelope=hw.Envelope(clock=hw.FixedClock("2026-11-30T12:00:00+00:00")))
    result = await bus.emit("tool.before", tool_call() if event is None else event, ctx)
    return result, untimed(ctx.trace)


def invalid_return(fail_mode: str) -> dict[str, Any]:
    closed = fail_mode == "closed"
    record = {
        "emit": 1,
        "hook": "tool.before",
        "run": "run",
        "step": 0,
        "tool": "refund_payment",
        "kind": "failure",
        "middleware": "m",
        "band": "app",
        "outcome": "block" if closed else "continue",
        "modified": False,
        "failure": "invalid_return",
        "error": "InvalidReturn",
        "fail_mode": fail_mode,
    }
    if closed:
        record = {**record, "code": "middleware_error"}
    return record


def strip_run(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "run": "run"} for r in records]


# -- warnings (I24, I29) --------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        [RaisingStr("careful")],
        (RaisingStr("careful"),),
        RaisingList(["careful"]),
        RaisingTuple(("careful",)),
        RaisingList([RaisingStr("careful")]),
    ],
    ids=["str-in-list", "str-in-tuple", "list-subclass", "tuple-subclass", "both"],
)
async def test_hostile_warnings_are_read_from_what_they_hold(
    given: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result, records = await emit(lambda e: hw.Continue(warnings=given))
    assert result.warnings == (hw.HookWarning("m", "careful"),)
    assert type(result.warnings[0].text) is str
    assert records[0]["kind"] == "outcome" and records[0]["warnings"] == ["careful"]
    assert SECRET not in repr(records) + caplog.text


async def test_a_str_subclass_is_kept_as_its_text_not_as_its_str() -> None:
    result, records = await emit(lambda e: hw.Continue(warnings=[LyingStr("careful")]))
    assert [w.text for w in result.warnings] == ["careful"]
    assert records[0]["warnings"] == ["careful"]


async def test_hostile_warnings_still_count_empty_cut_and_bound_by_their_storage() -> None:
    given = RaisingList(
        [RaisingStr(""), RaisingStr("x" * 300), *(RaisingStr("w") for _ in range(9))]
    )
    result, _ = await emit(lambda e: hw.Continue(warnings=given))
    texts = [w.text for w in result.warnings]
    assert texts == ["x" * 255 + "\u2026"] + ["w"] * 7


@pytest.mark.parametrize(
    "given",
    [ClaimsList(), [RaisingStr("\ud800")], RaisingList(["ok", 5])],
    ids=["claims-list", "surrogate-subclass", "non-text-item"],
)
@pytest.mark.parametrize("fail_mode", ["open", "closed"])
async def test_hostile_warnings_that_hold_no_texts_are_an_invalid_return(
    given: Any, fail_mode: str
) -> None:
    result, records = await emit(lambda e: hw.Continue(warnings=given), fail_mode=fail_mode)
    assert strip_run(records[:1]) == [invalid_return(fail_mode)]
    assert result.warnings == ()


def test_each_distinct_text_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded work (I29): 10,000 references to three non-ASCII texts read three texts, not
    10,000 (it took 11-17 s for 1 MB texts). The pure core's check is counted; the Rust core
    reads the UTF-8 form CPython caches on each string once."""
    if hw.CORE != "python":
        pytest.skip("counts the pure core's text check")
    from harnessweaver._pycore import warnings as judging
    from harnessweaver._pycore.text import whole_text as real

    reads: list[int] = []

    def counted(text: str) -> bool:
        reads.append(id(text))
        return real(text)

    monkeypatch.setattr(judging, "whole_text", counted)
    texts = ["\u00e9" * 1000, "\u0100" * 1000, "\U0001f600" * 1000]
    kept = judging.judge([texts[i % 3] for i in range(10_000)] + ["ascii"] * 10_000)
    assert isinstance(kept, tuple) and len(kept) == 8
    assert sorted(reads) == sorted(id(t) for t in texts)


# -- contracts on hostile events (I14, I29) ----------------------------------------------------


@pytest.mark.parametrize("contracts", ["warn", "strict"])
@pytest.mark.parametrize("fail_mode", ["open", "closed"])
@pytest.mark.parametrize("kind", [BadTool, BadCall], ids=["tool", "call"])
async def test_a_modification_whose_contract_fields_raise_is_an_invalid_return(
    contracts: str, fail_mode: str, kind: type[hw.ToolCallEvent], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    given = tool_call()
    result, records = await emit(
        lambda e: hw.Continue(modified=hostile(kind)),
        given,
        fail_mode=fail_mode,
        contracts=contracts,
    )
    assert strip_run(records[:1]) == [invalid_return(fail_mode)]
    assert records[-1]["kind"] == "hook" and records[-1]["modified"] is False
    assert result.event is given  # the modification was discarded
    assert (result.outcome == hw.Continue()) == (fail_mode == "open")
    assert SECRET not in repr(records) + repr(result.outcome) + caplog.text


@pytest.mark.parametrize("contracts", ["warn", "strict"])
async def test_a_caller_event_whose_contract_fields_raise_fails_the_modification(
    contracts: str,
) -> None:
    """The modification cannot be judged against an event that cannot be read either."""
    result, records = await emit(
        lambda e: hw.Continue(modified=tool_call()), hostile(BadTool), contracts=contracts
    )
    assert [r["failure"] for r in records[:1]] == ["invalid_return"]
    assert "tool" not in records[0]  # the caller's tool name could not be read (I21)
    assert result.outcome.code == "middleware_error"  # type: ignore[union-attr]


async def test_without_contracts_a_hostile_modification_is_not_read() -> None:
    modified = hostile(BadTool)
    result, records = await emit(lambda e: hw.Continue(modified=modified))
    assert result.event is modified
    assert records[0]["kind"] == "outcome" and records[0]["modified"] is True


async def test_a_property_raising_what_is_no_exception_propagates() -> None:
    class Stops(hw.ToolCallEvent):
        pass

    def stop(self: object) -> Any:
        raise KeyboardInterrupt

    Stops.tool = property(stop)  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        await emit(lambda e: hw.Continue(modified=hostile(Stops)), contracts="warn")


def test_a_role_is_read_as_text_from_its_storage() -> None:
    """A message whose role is a str subclass with raising methods has the role its text says;
    a role that is no text is no role, neither system nor user."""
    system = hw.Message(role="system", content="rules")
    sneaky = hw.Message.model_construct(role=RaisingStr("system"), content="rules")  # type: ignore[arg-type]
    no_role = hw.Message.model_construct(role=5, content="rules")  # type: ignore[arg-type]
    before = hw.ModelRequestEvent(request=hw.ModelRequest(model="m", messages=(system,)))
    verdicts = []
    for message in (sneaky, no_role):
        request = hw.ModelRequest.model_construct(model="m", messages=(message,), tools=())
        after = hw.ModelRequestEvent.model_construct(step=0, request=request)
        verdicts.append(hw.check_contract("model.before", before, after))
    assert verdicts[0] is None  # the same system message, read by its text
    assert verdicts[1] == "model.before/system_first"


# -- content identity (I27, I29) ----------------------------------------------------------------


@pytest.mark.parametrize("contracts", [None, "warn"])
async def test_an_event_whose_model_dump_raises_has_no_identity(contracts: Any) -> None:
    result, records = await emit(
        lambda e: hw.Continue(modified=hostile(BadDump)),
        identity="jcs-sha256",
        contracts=contracts,
    )
    hook = records[-1]
    assert hook["kind"] == "hook" and hook["modified"] is True
    assert hook["input_identity"] == hw.content_identity(tool_call())
    assert hook["enforced_identity"] is None
    assert type(result.event) is BadDump


async def test_a_caller_event_whose_model_dump_raises_has_no_identity() -> None:
    _, records = await emit(lambda e: None, hostile(BadDump), identity="jcs-sha256")
    assert records[-1]["input_identity"] is None and records[-1]["enforced_identity"] is None


# -- the caller's event: correlation and matchers (I21, I22, I29) ----------------------------


@pytest.mark.parametrize("kind", [BadTool, BadStep], ids=["tool", "step"])
async def test_a_caller_event_whose_tool_or_step_raises_is_traced_without_it(
    kind: type[hw.ToolCallEvent],
) -> None:
    result, records = await emit(lambda e: None, hostile(kind))
    assert result.outcome == hw.Continue()
    missing = "tool" if kind is BadTool else "step"
    assert all(missing not in r for r in records)


async def test_a_hostile_tool_name_is_read_as_its_text() -> None:
    """Correlation and matchers read a ``str`` subclass by its text; none of its methods run."""

    @hw.middleware(name="m", hooks=["tool.before"], fail_mode="closed", match={"tool": "refund_*"})
    async def m(event: Any, env: hw.Envelope) -> Any:
        return hw.Block("no", code="denied")

    bus = hw.HookBus()
    bus.register(m)
    ctx = hw.RunContext()
    plain = tool_call()
    spec = hw.ToolSpec.model_construct(name=RaisingStr("refund_payment"), description="")
    event = hw.ToolCallEvent.model_construct(step=0, tool=spec, call=plain.call)
    result = await bus.emit("tool.before", event, ctx)
    assert result.outcome == hw.Block("no", code="denied")
    records = untimed(ctx.trace)
    assert [r["tool"] for r in records] == ["refund_payment"] * 2
    assert all(type(r["tool"]) is str for r in records)


async def test_a_tool_name_with_a_lone_surrogate_is_shown_without_its_subclass_methods() -> None:
    spec = hw.ToolSpec.model_construct(name=RaisingStr("refund_\ud800"), description="")
    event = hw.ToolCallEvent.model_construct(step=0, tool=spec, call=tool_call().call)
    _, records = await emit(lambda e: None, event)
    assert [r["tool"] for r in records] == ["refund_\ufffd"] * 2
