"""Matchers (I22): a middleware applies to the events whose tool or model name its patterns
match; the others do not call it and trace nothing of it."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from conftest import tool_call
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.errors import DeclarationError, RegistrationError

Calls = list[str]


def guard(
    name: str,
    calls: Calls,
    hooks: tuple[str, ...] = ("tool.before",),
    fail_mode_open: bool = False,
    **opts: Any,
) -> Any:
    async def run(event: Any, env: hw.Envelope) -> None:
        calls.append(name)

    run.__name__ = name
    mode = "open" if fail_mode_open else "closed"
    return hw.middleware(hooks=list(hooks), fail_mode=mode, **opts)(run)


def emit(bus: hw.HookBus, hook: str, event: Any) -> hw.RunContext:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="r"))

    async def go() -> None:
        await bus.emit(hook, event, ctx)

    anyio.run(go)
    return ctx


def model_request(model: str) -> hw.ModelRequestEvent:
    return hw.ModelRequestEvent(request=hw.ModelRequest(model=model))


def test_only_matching_middleware_run_and_the_others_leave_no_record() -> None:
    calls: Calls = []
    bus = hw.HookBus()
    bus.register(guard("every", calls))
    bus.register(guard("refunds", calls, match={"tool": "refund_*"}))
    bus.register(guard("search", calls, match={"tool": ["search", "lookup_?"]}))
    ctx = emit(bus, "tool.before", tool_call("refund_payment"))
    assert calls == ["every", "refunds"]
    middleware = [r["middleware"] for r in ctx.trace.records() if r["kind"] != "hook"]
    assert middleware == ["every", "refunds"]
    calls.clear()
    emit(bus, "tool.before", tool_call("lookup_x"))
    emit(bus, "tool.before", tool_call("lookup_xy"))
    assert calls == ["every", "search", "every"]


def test_a_blocking_guard_that_does_not_match_does_not_block() -> None:
    async def deny(event: Any, env: hw.Envelope) -> hw.Block:
        return hw.Block(reason="no refunds", code="denied")

    bus = hw.HookBus()
    declare = hw.middleware(hooks=["tool.before"], fail_mode="closed", match={"tool": "refund_*"})
    bus.register(declare(deny))
    ctx = emit(bus, "tool.before", tool_call("search"))
    hook = [r for r in ctx.trace.records() if r["kind"] == "hook"]
    assert [r["outcome"] for r in hook] == ["continue"]
    ctx = emit(bus, "tool.before", tool_call("refund_payment"))
    hook = [r for r in ctx.trace.records() if r["kind"] == "hook"]
    assert [r["outcome"] for r in hook] == ["block"]


def test_a_tool_name_that_is_not_text_matches_so_the_guard_runs() -> None:
    calls: Calls = []
    bus = hw.HookBus()
    bus.register(guard("refunds", calls, match={"tool": "refund_*"}))
    odd = hw.ToolCallEvent.model_construct(
        tool=hw.ToolSpec.model_construct(name=5), call=hw.ToolCall()
    )
    emit(bus, "tool.before", odd)
    surrogate = tool_call("\ud800")
    emit(bus, "tool.before", surrogate)
    assert calls == ["refunds", "refunds"]


def test_model_key_reads_request_model_and_other_hook_points_ignore_the_matcher() -> None:
    calls: Calls = []
    bus = hw.HookBus()
    hooks = ("model.before", "model.after")
    bus.register(guard("gpt", calls, hooks, match={"model": "gpt-*"}))
    emit(bus, "model.before", model_request("claude-x"))
    assert calls == []
    emit(bus, "model.before", model_request("gpt-5"))
    reply = hw.ModelResponseEvent(response=hw.ModelResponse(message=hw.Message(role="assistant")))
    emit(bus, "model.after", reply)
    assert calls == ["gpt", "gpt"]


def test_chain_for_shows_the_chain_of_one_tool() -> None:
    bus = hw.HookBus()
    bus.register(guard("every", []))
    bus.register(guard("refunds", [], match={"tool": "refund_*"}))
    assert [d.name for d in bus.chain_for("tool.before", "refund_payment")] == ["every", "refunds"]
    assert [d.name for d in bus.chain_for("tool.before", "search")] == ["every"]
    assert [d.name for d in bus.chain_for("tool.before", None)] == ["every", "refunds"]
    assert [d.name for d in bus.chain("tool.before")] == ["every", "refunds"]


def test_declared_matcher_is_shown_normalised() -> None:
    decl = hw.HookBus().register(guard("g", [], match={"tool": ["a*", "b", "a*"]}))
    assert decl.match == {"tool": ("a*", "b")}
    assert hw.HookBus().register(guard("h", [])).match is None


@pytest.mark.parametrize(
    ("match", "kind"),
    [
        ("refund_*", "invalid_match"),
        ({}, "invalid_match"),
        ({"tool": []}, "invalid_match"),
        ({"tool": [""]}, "invalid_match"),
        ({"tool": ["x" * 129]}, "invalid_match"),
        ({"tool": ["x"] * 33}, "invalid_match"),
        ({"tool": 5}, "invalid_match"),
        ({"tool": ["ok", 5]}, "invalid_match"),
        ({"tool": "\ud800"}, "invalid_match"),
        ({"tools": "x"}, "unknown_match_key"),
        ({5: "x"}, "unknown_match_key"),
        ({"model": "gpt-*"}, "match_key_not_carried"),
    ],
)
def test_bad_matchers_are_declaration_errors(match: Any, kind: str) -> None:
    with pytest.raises(DeclarationError) as caught:
        guard("g", [], match=match)
    assert caught.value.kind == kind
    assert caught.value.rule == "I22"
    assert "(I22)" in str(caught.value)


def test_matcher_is_checked_after_timeout_and_before_r2() -> None:
    with pytest.raises(DeclarationError) as caught:
        guard("g", [], timeout="soon", match={})
    assert caught.value.kind == "invalid_duration"
    with pytest.raises(DeclarationError) as caught:
        guard("g", [], band="baseline", fail_mode_open=True, match={})
    assert caught.value.kind == "invalid_match"


def test_registration_may_narrow_but_not_widen_a_matcher() -> None:
    bus = hw.HookBus()
    declared = guard("g", [], ("tool.before", "model.before"), match={"tool": "refund_*"})
    got = bus.register(declared, match={"tool": "refund_payment"})
    assert got.match == {"tool": ("refund_payment",)}
    for wide in ("*", "refund_p*", "search"):
        with pytest.raises(RegistrationError) as caught:
            hw.HookBus().register(declared, match={"tool": wide})
        assert caught.value.kind == "match_widened"
        assert repr(wide) in str(caught.value)
    added = hw.HookBus().register(declared, match={"model": "gpt-*"})
    assert added.match == {"tool": ("refund_*",), "model": ("gpt-*",)}
    with pytest.raises(RegistrationError) as caught:
        hw.HookBus().register(declared, hooks=["tool.before"], match={"model": "gpt-*"})
    assert caught.value.kind == "match_key_not_carried"
    plain = hw.HookBus().register(guard("p", []), match={"tool": "x"})
    assert plain.match == {"tool": ("x",)}


def test_endless_distinct_tool_names_keep_the_plan_cache_bounded() -> None:
    calls: Calls = []
    bus = hw.HookBus()
    bus.register(guard("refunds", calls, match={"tool": "refund_*"}))
    for i in range(600):
        assert bus.chain_for("tool.before", f"tool_{i}") == ()
    assert [d.name for d in bus.chain_for("tool.before", "refund_1")] == ["refunds"]


names = st.text(alphabet="ab*?", max_size=6)


@given(pattern=names.filter(bool), name=st.text(alphabet="ab", max_size=6))
def test_glob_agrees_with_a_regular_expression(pattern: str, name: str) -> None:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    expected = re.fullmatch(regex, name, re.DOTALL) is not None
    bus = hw.HookBus()
    bus.register(guard("g", [], match={"tool": pattern}))
    assert (len(bus.chain_for("tool.before", name)) == 1) == expected
