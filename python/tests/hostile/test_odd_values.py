"""Hostile values of the Python API (issue 28): str subclasses whose dunders raise or lie, lone
surrogates, huge and odd integers, values of other types, at register, chain, emit, unregister,
trace indexing and trace counts. Each has one documented answer (docs/events.md, "Odd values at
the Python API"), the same on both cores."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import tool_call
from hostile_support import hostile_settings
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw

BANDS = ("baseline", "platform", "app", "task")
HOOKS = tuple(hw.EVENT_TYPES)


class RaisingStr(str):
    def __hash__(self) -> int:
        raise RuntimeError("secret-from-hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("secret-from-eq")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("secret-from-ne")

    def __str__(self) -> str:
        raise RuntimeError("secret-from-str")

    def __repr__(self) -> str:
        raise RuntimeError("secret-from-repr")

    def __len__(self) -> int:
        raise RuntimeError("secret-from-len")

    def __iter__(self) -> Any:
        raise RuntimeError("secret-from-iter")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("secret-from-encode")


class LyingStr(str):
    def __str__(self) -> str:
        return "app"

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class HugeInt(int):
    def __index__(self) -> int:
        raise RuntimeError("secret-from-index")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("secret-from-lt")

    def __repr__(self) -> str:
        return "secret-from-repr"


# Any text: lone surrogates included (Cs), and near misses of the real names.
any_text = st.text(st.characters(exclude_categories=()), max_size=12)
texts = st.one_of(
    any_text,
    st.sampled_from([*BANDS, *HOOKS, "tool.\ud800", "\udcff", "app\x00", " app", "App"]),
)
wrappers = st.sampled_from([str, RaisingStr, LyingStr])


def shown(text: str) -> str:
    """How messages show a text (I17): quoted, lone surrogates as escapes."""
    return "'" + text.encode("utf-8", "backslashreplace").decode("utf-8") + "'"


def guard() -> Any:
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    return hw.middleware(hooks=list(HOOKS), fail_mode="closed")(guard)


@hostile_settings
@given(text=texts, wrap=wrappers)
def test_a_band_is_judged_by_its_characters(text: str, wrap: type[str]) -> None:
    bus = hw.HookBus()
    if text in BANDS:
        decl = bus.register(guard(), band=wrap(text))
        assert decl.band == text and type(decl.band) is str
        return
    with pytest.raises(hw.RegistrationError) as raised:
        bus.register(guard(), band=wrap(text))
    assert raised.value.kind == "invalid_band"
    assert f"invalid band {shown(text)}:" in str(raised.value)
    assert "secret" not in str(raised.value)


@hostile_settings
@given(text=texts, wrap=wrappers)
def test_a_hook_point_is_judged_by_its_characters_at_chain_and_register(
    text: str, wrap: type[str]
) -> None:
    bus = hw.HookBus()
    if text in HOOKS:
        decl = bus.register(guard(), hooks=[wrap(text)])
        assert decl.hooks == (text,)
        assert bus.chain(wrap(text)) == (decl,)
        return
    with pytest.raises(hw.EmitError) as raised:
        bus.chain(wrap(text))
    assert raised.value.kind == "unknown_hook"
    assert f"unknown hook point {shown(text)}:" in str(raised.value)
    with pytest.raises(hw.RegistrationError) as registering:
        bus.register(guard(), hooks=[wrap(text)])
    assert registering.value.kind == "unknown_hook"
    assert "secret" not in str(raised.value) + str(registering.value)


@pytest.mark.anyio
@hostile_settings
@given(text=texts, wrap=wrappers)
async def test_emit_reads_a_hook_point_by_its_characters(text: str, wrap: type[str]) -> None:
    bus = hw.HookBus()
    bus.register(guard())
    ctx = hw.RunContext()
    if text == "tool.before":
        result = await bus.emit(wrap(text), tool_call(), ctx)
        assert result.outcome == hw.Continue() and len(ctx.trace) == 2
        return
    with pytest.raises(hw.EmitError) as raised:
        await bus.emit(wrap(text), tool_call(), ctx)
    expected = "unknown_hook" if text not in HOOKS else "event_type_mismatch"
    assert raised.value.kind == expected and len(ctx.trace) == 0
    assert "secret" not in str(raised.value)


@hostile_settings
@given(text=texts, wrap=wrappers)
def test_unregister_reads_a_name_by_its_characters(text: str, wrap: type[str]) -> None:
    bus = hw.HookBus()
    decl = bus.register(guard(), name="app")
    if text == "app":
        assert bus.unregister(wrap(text)) == decl
        return
    with pytest.raises(hw.RegistrationError) as raised:
        bus.unregister(wrap(text))
    assert raised.value.kind == "unknown_middleware"
    assert f"no middleware named {shown(text)} is registered" in str(raised.value)


@pytest.mark.anyio
@hostile_settings
@given(
    index=st.one_of(
        st.integers(min_value=-(2**200), max_value=2**200),
        st.integers(min_value=-4, max_value=4),
        st.booleans(),
        st.integers(min_value=-(2**80), max_value=2**80).map(HugeInt),
        st.floats(allow_nan=True),
        st.none(),
        st.binary(max_size=3),
        any_text,
        st.just(slice(0, 1)),
    )
)
async def test_a_trace_index_is_an_int_in_range_or_one_error(index: object) -> None:
    bus = hw.HookBus()
    bus.register(guard())
    ctx = hw.RunContext()
    await bus.emit("tool.before", tool_call(), ctx)  # two records: outcome, hook
    trace = ctx.trace
    if not isinstance(index, int):
        with pytest.raises(TypeError, match=r"^trace indices must be integers, not "):
            trace[index]  # type: ignore[index]
        return
    plain = int.__int__(index)
    if -2 <= plain < 2:
        assert trace[index] == list(trace)[plain]
        return
    with pytest.raises(IndexError) as raised:
        trace[index]
    assert str(raised.value) == f"trace index {plain} out of range"


@hostile_settings
@given(
    which=st.sampled_from(["limit", "batch"]),
    value=st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.integers(min_value=2**63 - 2, max_value=2**63 + 1),
        st.integers(min_value=1, max_value=2**70).map(HugeInt),
        st.booleans(),
        st.floats(allow_nan=True),
        any_text,
    ),
)
def test_a_trace_count_is_a_plain_int_from_1_to_2_63_minus_1(which: str, value: object) -> None:
    good = isinstance(value, int) and not isinstance(value, bool)
    plain = int.__int__(value) if good else None  # type: ignore[call-overload]
    if plain is not None and 1 <= plain <= 2**63 - 1:
        trace = hw.Trace(**{which: value})
        assert getattr(trace, which) == plain and type(getattr(trace, which)) is int
        return
    with pytest.raises(ValueError) as raised:
        hw.Trace(**{which: value})
    assert f"got {plain!r} (I20)" in str(raised.value) if plain is not None else True
    assert "secret" not in str(raised.value)
