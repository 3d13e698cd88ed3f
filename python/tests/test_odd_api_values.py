"""Odd values at the Python API: one answer on both cores (issue 28; docs/events.md, "Odd values
at the Python API"). Each test pins one decision, on whichever core the process runs."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from conftest import tool_call

import harnessweaver as hw
from harnessweaver._select import core


class RaisingStr(str):
    """A str whose own dunders raise: the bus must read its characters only."""

    def __hash__(self) -> int:
        raise RuntimeError("secret-from-hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("secret-from-eq")

    def __str__(self) -> str:
        raise RuntimeError("secret-from-str")

    def __repr__(self) -> str:
        raise RuntimeError("secret-from-repr")


class LyingStr(str):
    def __str__(self) -> str:
        return "task"


def guard() -> Any:
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    return hw.middleware(hooks=["tool.before"], fail_mode="closed")(guard)


# -- text: lone surrogates (I31) and str subclasses -------------------------------------


@pytest.mark.parametrize("hook", ["\udcff", "tool.\ud800"])
def test_a_lone_surrogate_hook_point_is_unknown_hook_shown_escaped(hook: str) -> None:
    bus = hw.HookBus()
    with pytest.raises(hw.EmitError) as raised:
        bus.chain(hook)
    assert raised.value.kind == "unknown_hook"
    assert hook.encode("utf-8", "backslashreplace").decode() in str(raised.value)


@pytest.mark.anyio
async def test_emitting_on_a_lone_surrogate_hook_point_is_unknown_hook() -> None:
    bus = hw.HookBus()
    bus.register(guard())
    ctx = hw.RunContext()
    with pytest.raises(hw.EmitError) as raised:
        await bus.emit("tool.\udcff", tool_call(), ctx)
    assert raised.value.kind == "unknown_hook" and len(ctx.trace) == 0


def test_unregistering_a_lone_surrogate_name_is_unknown_middleware() -> None:
    bus = hw.HookBus()
    bus.register(guard())
    with pytest.raises(hw.RegistrationError) as raised:
        bus.unregister("guard\udcff")
    assert raised.value.kind == "unknown_middleware"
    assert "'guard\\udcff'" in str(raised.value)
    assert [d.name for d in bus.chain("tool.before")] == ["guard"]


@pytest.mark.parametrize("field", ["band", "name", "fail_mode"])
def test_a_str_subclass_whose_dunders_raise_is_read_as_its_characters(field: str) -> None:
    value = {"band": "platform", "name": "renamed", "fail_mode": "open"}[field]
    decl = hw.HookBus().register(guard(), **{field: RaisingStr(value)})
    assert getattr(decl, field) == value and type(getattr(decl, field)) is str


@pytest.mark.anyio
async def test_a_str_subclass_hook_point_emits_and_chains_by_its_characters() -> None:
    bus = hw.HookBus()
    decl = bus.register(guard(), hooks=[RaisingStr("tool.before")])
    assert decl.hooks == ("tool.before",)
    assert bus.chain(RaisingStr("tool.before")) == (decl,)
    result = await bus.emit(RaisingStr("tool.before"), tool_call(), hw.RunContext())
    assert result.outcome == hw.Continue()
    assert bus.unregister(RaisingStr("guard")) == decl


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda bus: bus.register(guard(), band=RaisingStr("nowhere")), "invalid_band"),
        (lambda bus: bus.register(guard(), hooks=[RaisingStr("tool.during")]), "unknown_hook"),
        (lambda bus: bus.chain(RaisingStr("tool.during")), "unknown_hook"),
        (lambda bus: bus.unregister(RaisingStr("ghost")), "unknown_middleware"),
    ],
)
def test_a_bad_str_subclass_is_named_by_its_characters_never_its_dunders(
    call: Callable[[hw.HookBus], object], kind: str
) -> None:
    bus = hw.HookBus()
    bus.register(guard(), name="other")
    with pytest.raises(hw.HarnessweaverError) as raised:
        call(bus)
    assert raised.value.kind == kind and "secret" not in str(raised.value)


def test_a_str_subclass_that_lies_in_str_is_not_believed() -> None:
    with pytest.raises(hw.RegistrationError) as raised:
        hw.HookBus().register(guard(), band=LyingStr("nowhere"))
    assert "'nowhere'" in str(raised.value)


# -- numbers: trace indexes and counts --------------------------------------------------


class Indexable:
    def __index__(self) -> int:
        raise RuntimeError("secret-from-index")


async def one_record_trace() -> hw.Trace:
    bus = hw.HookBus()
    bus.register(guard())
    ctx = hw.RunContext()
    await bus.emit("tool.before", tool_call(), ctx)
    return ctx.trace


@pytest.mark.anyio
@pytest.mark.parametrize("index", [2**70, -(2**70), 2**63, -(2**63) - 1, 2, -3])
async def test_a_trace_index_out_of_range_however_large_is_an_index_error(index: int) -> None:
    trace = await one_record_trace()
    with pytest.raises(IndexError, match=f"trace index {index} out of range"):
        trace[index]


@pytest.mark.anyio
@pytest.mark.parametrize("index", [Indexable(), "0", 0.0, None])
async def test_a_trace_index_that_is_not_an_int_is_a_type_error(index: object) -> None:
    trace = await one_record_trace()
    with pytest.raises(TypeError, match="trace indices must be integers") as raised:
        trace[index]  # type: ignore[index]
    assert "secret" not in str(raised.value)


@pytest.mark.parametrize(
    ("argument", "value"),
    [("limit", True), ("limit", 2**63), ("batch", False), ("batch", 2**70), ("limit", 1.5)],
)
def test_a_trace_count_is_a_plain_int_from_1_to_2_63_minus_1(argument: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"got {value!r} \\(I20\\)"):
        hw.Trace(**{argument: value})


def test_a_trace_count_of_an_int_subclass_is_its_plain_value() -> None:
    class Count(int):
        pass

    trace = hw.Trace(limit=Count(2**63 - 1), batch=Count(3))
    assert trace.limit == 2**63 - 1 and type(trace.limit) is int
    assert trace.batch == 3 and type(trace.batch) is int


def test_a_run_context_given_no_envelope_makes_one() -> None:
    ctx = hw.RunContext(envelope=None)
    assert isinstance(ctx.envelope, hw.Envelope)


# -- a pending step given something that is not an Exception ------------------------------


async def pending_step() -> tuple[Any, hw.RunContext]:
    bus = hw.HookBus()

    async def slow(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0)

    bus.register(hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="5s")(slow))
    ctx = hw.RunContext()
    step = bus._registry.emit("tool.before", tool_call(), ctx.envelope, ctx.trace)
    assert not isinstance(step, hw.HookResult)
    return step, ctx


@pytest.mark.anyio
@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3), GeneratorExit()])
async def test_pending_fail_with_a_base_exception_propagates_it(exc: BaseException) -> None:
    step, ctx = await pending_step()
    with pytest.raises(type(exc)) as raised:
        step.fail(exc)
    assert raised.value is exc
    assert [r["kind"] for r in ctx.trace] == []  # no hook record, as for I12


@pytest.mark.anyio
async def test_pending_fail_with_an_exception_is_the_middleware_failure() -> None:
    step, ctx = await pending_step()
    result = step.fail(ValueError("secret"))
    assert result.outcome.code == "middleware_error"
    assert [(r["kind"], r.get("error")) for r in ctx.trace] == [
        ("failure", "ValueError"),
        ("hook", None),
    ]


# -- the bus's classes: final, and neither copied nor pickled --------------------------


@pytest.mark.parametrize(
    "name", ["Declaration", "Trace", "RunContext", "HookResult", "HookWarning"]
)
def test_the_bus_classes_cannot_be_subclassed(name: str) -> None:
    with pytest.raises(TypeError, match="is not an acceptable base type"):
        type("Sub", (getattr(hw, name),), {})


def test_the_registry_and_pending_step_cannot_be_subclassed() -> None:
    for base in (core.Registry, core.Pending):
        with pytest.raises(TypeError, match="is not an acceptable base type"):
            type("Sub", (base,), {})


COPIES: dict[str, Callable[[object], object]] = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda value: pickle.loads(pickle.dumps(value)),
}


@pytest.mark.anyio
@pytest.mark.parametrize("how", sorted(COPIES))
async def test_bus_objects_refuse_copy_and_pickle_naming_the_type(how: str) -> None:
    bus = hw.HookBus()
    decl = bus.register(guard())
    ctx = hw.RunContext()
    result = await bus.emit("tool.before", tool_call(), ctx)
    objects = {
        "HookBus": bus,
        "Trace": ctx.trace,
        "RunContext": ctx,
        "HookResult": result,
        "Declaration": decl,
    }
    for name, value in objects.items():
        with pytest.raises(TypeError) as raised:
            COPIES[how](value)
        assert str(raised.value).startswith(
            f"harnessweaver.{name} objects cannot be copied or pickled: "
        ), name
