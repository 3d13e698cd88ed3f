"""The ``harnessweaver.debug`` logger: a middleware's exception, message and traceback, when
asked for at DEBUG (docs/logging.md), never in the trace or its records (R9); nothing when off."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from conftest import tool_call

import harnessweaver as hw
from harnessweaver import debug

SECRET = "sk-live-4242424242424242"
DEBUG_LOGGER = "harnessweaver.debug"


@pytest.fixture
def debug_on() -> Iterator[None]:
    logger = logging.getLogger(DEBUG_LOGGER)
    before = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.setLevel(before)


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def buggy(event: Any, env: hw.Envelope) -> None:
    {}["customer"]  # the KeyError of issue 32
    raise AssertionError("unreachable")


@hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="5s")
async def leaky(event: Any, env: hw.Envelope) -> None:
    await anyio.sleep(0)  # it suspends first: the failure reaches the core from the event loop
    raise ValueError(f"card declined for token {SECRET}")


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def invalid(event: Any, env: hw.Envelope) -> Any:
    return "not an outcome"  # an invalid return (ruling 9), not an exception


def _emit(bus: hw.HookBus) -> tuple[hw.HookResult, hw.Trace]:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="debugging"))

    async def go() -> hw.HookResult:
        return await bus.emit("tool.before", tool_call(), ctx)

    return anyio.run(go), ctx.trace


def _bus(*middleware: Any) -> hw.HookBus:
    bus = hw.HookBus()
    for item in middleware:
        bus.register(item)
    return bus


def test_a_closed_keyerror_is_logged_with_its_message_and_traceback(
    debug_on: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger=DEBUG_LOGGER):
        result, _ = _emit(_bus(buggy))
    assert result.outcome == hw.Block("middleware buggy failed: exception", code="middleware_error")
    (record,) = [r for r in caplog.records if r.name == DEBUG_LOGGER]
    assert record.levelno == logging.DEBUG
    message = "middleware buggy raised KeyError (the trace records its type only)"
    assert record.getMessage() == message
    assert record.middleware == "buggy"  # type: ignore[attr-defined]
    text = caplog.text
    assert "KeyError: 'customer'" in text  # the message ...
    assert "Traceback (most recent call last)" in text  # ... and the traceback
    assert '{}["customer"]' in text  # the line that raised


def test_a_secret_in_the_message_is_logged_but_never_traced(
    debug_on: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        result, trace = _emit(_bus(leaky))
    assert result.outcome == hw.Continue()
    assert SECRET in caplog.text  # the debug record has it: that is what it is for
    debug = [r for r in caplog.records if r.name == DEBUG_LOGGER]
    assert [r.getMessage() for r in debug] == [
        "middleware leaky raised ValueError (the trace records its type only)"
    ]
    # R9: the trace, its JSON Lines and the buslog warning name the type only.
    assert SECRET not in trace.to_jsonl()
    assert SECRET not in json.dumps(trace.records())
    (failure,) = [r for r in trace.records() if r["kind"] == "failure"]
    assert failure["error"] == "ValueError"
    for record in caplog.records:
        if record.name != DEBUG_LOGGER:
            assert SECRET not in record.getMessage()
            assert record.exc_info is None


def test_nothing_is_logged_and_nothing_wrapped_when_off(caplog: pytest.LogCaptureFixture) -> None:
    assert not logging.getLogger(DEBUG_LOGGER).isEnabledFor(logging.DEBUG)
    with caplog.at_level(logging.INFO):  # everything else on: debug stays off
        result, _ = _emit(_bus(buggy, leaky))
    assert result.outcome == hw.Block("middleware buggy failed: exception", code="middleware_error")
    assert [r for r in caplog.records if r.name == DEBUG_LOGGER] == []
    assert "customer" not in caplog.text and SECRET not in caplog.text


def test_a_root_logger_at_debug_does_not_turn_it_on(caplog: pytest.LogCaptureFixture) -> None:
    # The records hold messages: only a level set on harnessweaver.debug or harnessweaver
    # enables them, never the root logger's (basicConfig(level=DEBUG) in an application).
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG):  # the root logger, as basicConfig would
            _emit(_bus(buggy))
        assert [r for r in caplog.records if r.name == DEBUG_LOGGER] == []
        parent = logging.getLogger("harnessweaver")
        parent.setLevel(logging.DEBUG)  # documented: the package's logger at DEBUG enables it
        try:
            with caplog.at_level(logging.DEBUG):
                _emit(_bus(buggy))
        finally:
            parent.setLevel(logging.NOTSET)
        assert len([r for r in caplog.records if r.name == DEBUG_LOGGER]) == 1
        logging.getLogger(DEBUG_LOGGER).setLevel(logging.INFO)  # its own level wins
        try:
            parent.setLevel(logging.DEBUG)
            assert not debug.enabled()
        finally:
            parent.setLevel(logging.NOTSET)
            logging.getLogger(DEBUG_LOGGER).setLevel(logging.NOTSET)
    finally:
        root.setLevel(before)


def test_the_outcome_and_trace_are_the_same_with_debug_on(debug_on: None) -> None:
    # The wrapper re-raises the same exception and hands any answer on untouched: every
    # failure is classified as without it (exception, invalid_return).
    result, trace = _emit(_bus(leaky, invalid, buggy))
    logging.getLogger(DEBUG_LOGGER).setLevel(logging.NOTSET)
    result_off, trace_off = _emit(_bus(leaky, invalid, buggy))
    assert (
        result.outcome
        == result_off.outcome
        == hw.Block("middleware invalid failed: invalid_return", code="middleware_error")
    )

    def shape(t: hw.Trace) -> list[tuple[Any, ...]]:
        return [(r["kind"], r.get("middleware"), r.get("failure"), r.get("error")) for r in t]

    assert shape(trace) == shape(trace_off)


def test_enabled_after_registration_takes_effect_at_the_next_registration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Documented: the logger is asked when a middleware is registered (docs/logging.md).
    bus = _bus(buggy)
    logger = logging.getLogger(DEBUG_LOGGER)
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger=DEBUG_LOGGER):
            _emit(bus)
            assert [r for r in caplog.records if r.name == DEBUG_LOGGER] == []
            _emit(_bus(buggy))
            assert len([r for r in caplog.records if r.name == DEBUG_LOGGER]) == 1
    finally:
        logger.setLevel(logging.NOTSET)
