"""HookBus: registration, chains, and emits through the public API (both backends).

The conformance corpus pins the rules case by case; these tests cover what the corpus cannot
express: Python objects (classes, settings, plugins), and the API's own errors.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import run_unless_stuck, tool_call, untimed
from pydantic import BaseModel, ConfigDict

import harnessweaver as hw

pytestmark = pytest.mark.anyio


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float


@hw.middleware(
    hooks=["tool.before"], fail_mode="closed", config=CapSettings, sample={"max_usd": 100}
)
class RefundCap:
    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments.get("amount_usd", 0) > self.max_usd:  # type: ignore[operator]
            return hw.Block(reason="over the refund cap", code="refund_cap")
        return None


@hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="open")
async def redact(event: Any, env: hw.Envelope) -> hw.Outcome:
    arguments = {**event.call.arguments, "card": "****"}
    return hw.Continue(
        modified=event.model_copy(
            update={"call": event.call.model_copy(update={"arguments": arguments})}
        )
    )


async def test_a_class_is_built_from_validated_settings(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    bus.register(RefundCap, settings={"max_usd": 500})
    blocked = await bus.emit("tool.before", tool_call(amount_usd=900), ctx)
    allowed = await bus.emit("tool.before", tool_call(amount_usd=20), ctx)
    assert blocked.outcome == hw.Block("over the refund cap", code="refund_cap")
    assert allowed.outcome == hw.Continue()


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({}, "max_usd: Field required"),
        ({"max_usd": "lots"}, "max_usd"),
        ({"max_usd": 1, "x": 2}, "x: Extra inputs"),
    ],
)
def test_bad_settings_name_the_key_and_the_middleware(
    settings: dict[str, Any], problem: str
) -> None:
    with pytest.raises(hw.RegistrationError) as caught:
        hw.HookBus().register(RefundCap, settings=settings)
    assert caught.value.kind == "invalid_settings"
    assert problem in str(caught.value) and "refund_cap" in str(caught.value)


async def test_an_instance_registers_as_itself(bus: hw.HookBus, ctx: hw.RunContext) -> None:
    bus.register(RefundCap(CapSettings(max_usd=1)), name="tight_cap")
    assert [d.name for d in bus.chain("tool.before")] == ["tight_cap"]
    assert (await bus.emit("tool.before", tool_call(amount_usd=2), ctx)).outcome.kind == "block"


def test_something_undeclared_is_not_middleware(bus: hw.HookBus) -> None:
    async def plain(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(TypeError, match=r"declare it with @hw\.middleware"):
        bus.register(plain)


def test_functions_take_no_settings(bus: hw.HookBus) -> None:
    with pytest.raises(hw.RegistrationError, match="takes no settings"):
        bus.register(redact, settings={"x": 1})


def test_register_returns_the_declaration_as_registered(bus: hw.HookBus) -> None:
    decl = bus.register(redact, band="task", hooks=["tool.after"], timeout="250ms", name="mask")
    assert (decl.name, decl.hooks, decl.band, decl.fail_mode, decl.timeout) == (
        "mask",
        ("tool.after",),
        "task",
        "open",
        0.25,
    )
    assert bus.chain("tool.after") == (decl,)
    assert bus.chain("tool.before") == ()


def test_chain_of_an_unknown_hook_point_is_an_emit_error(bus: hw.HookBus) -> None:
    with pytest.raises(hw.EmitError) as caught:
        bus.chain("tool.befor")
    assert caught.value.kind == "unknown_hook" and "'tool.befor'" in str(caught.value)


class HookName(str):
    pass


async def test_a_hook_point_is_found_by_its_name_whatever_string_spells_it(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def stop(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Block("stopped")

    bus.register(stop)
    built = ".".join(["tool", "before"])  # equal to the literal, but another object
    for name in ("tool.before", built, HookName("tool.before")):
        result = await bus.emit(name, tool_call(), ctx)
        assert result.outcome == hw.Block("stopped"), name
    with pytest.raises(hw.EmitError, match=r"'tool\.after' takes a ToolResultEvent"):
        await bus.emit(".".join(["tool", "after"]), tool_call(), ctx)  # another hook point


@pytest.mark.parametrize("name", ["tool.befor", "", "TOOL.BEFORE", 4])
async def test_emitting_to_an_unknown_hook_point_names_it(
    bus: hw.HookBus, ctx: hw.RunContext, name: object
) -> None:
    with pytest.raises(hw.EmitError) as caught:
        await bus.emit(name, tool_call(), ctx)  # type: ignore[arg-type]
    assert caught.value.kind == "unknown_hook" and repr(name) in str(caught.value)


async def test_modified_events_reach_later_middleware_and_the_result(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    seen: list[object] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def look(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
        seen.append(event.call.arguments.get("card"))

    bus.register(redact)
    bus.register(look)
    result = await bus.emit("tool.before", tool_call(card="4111"), ctx)
    assert seen == ["****"]
    assert result.event.call.arguments["card"] == "****"
    assert result.outcome.kind == "continue" and result.outcome.modified is result.event


async def test_plugin_middleware_register_under_namespace(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    plugin = hw.Plugin(namespace="acme", version="1.0.0", middleware=[RefundCap, redact])
    declared = bus.register_plugin(plugin, settings={"refund_cap": {"max_usd": 10}})
    assert [d.name for d in declared] == ["acme.refund_cap", "acme.redact"]
    result = await bus.emit("tool.before", tool_call(amount_usd=50), ctx)
    assert result.outcome == hw.Block("over the refund cap", code="refund_cap")
    records = untimed(ctx.trace)
    assert [r.get("middleware") for r in records] == ["acme.refund_cap", None]


async def test_plugin_classes_fall_back_to_their_sample(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    bus.register_plugin(hw.Plugin(namespace="acme", version="1", middleware=[RefundCap]))
    assert (await bus.emit("tool.before", tool_call(amount_usd=150), ctx)).outcome.kind == "block"


def test_unregister_returns_the_declaration(bus: hw.HookBus) -> None:
    decl = bus.register(redact)
    assert bus.unregister("redact") == decl
    assert bus.chain("tool.before") == ()
    with pytest.raises(hw.RegistrationError) as caught:
        bus.unregister("redact")
    assert caught.value.kind == "unknown_middleware"


# A middleware whose finalizer registers on the bus that let go of it, in a child process: it
# deadlocks should the registry still hold its lock while the last reference is dropped.
FINALIZER_REGISTERS = """
import harnessweaver as hw

bus = hw.HookBus()

@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def successor(event, env):
    return None

@hw.middleware(hooks=["tool.before"], fail_mode="open")
class Finalized:
    async def __call__(self, event, env):
        return None

    def __del__(self):
        bus.register(successor)

bus.register(Finalized(), name="finalized")
bus.unregister("finalized")  # the last reference: its finalizer runs now
print(",".join(d.name for d in bus.chain("tool.before")))
"""


def test_a_finalizer_may_register_on_the_bus_that_dropped_it() -> None:
    stuck = "unregister deadlocked: a finalizer it ran could not register"
    done = run_unless_stuck(FINALIZER_REGISTERS, stuck)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["successor"]


async def test_a_raise_in_a_closed_middleware_blocks_without_its_message(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def leaky(event: Any, env: hw.Envelope) -> None:
        raise RuntimeError("token sk-live-SECRET-123 rejected")

    bus.register(leaky)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Block("middleware leaky failed: exception", code="middleware_error")
    assert "SECRET" not in ctx.trace.to_jsonl() and "SECRET" not in repr(result)
    assert untimed(ctx.trace)[0]["error"] == "RuntimeError"


async def test_emit_needs_the_hook_points_event_type(bus: hw.HookBus, ctx: hw.RunContext) -> None:
    bus.register(redact)
    with pytest.raises(hw.EmitError) as caught:
        await bus.emit("tool.before", hw.TaskStartEvent(), ctx)
    assert caught.value.kind == "event_type_mismatch"
    assert "ToolCallEvent" in str(caught.value) and "TaskStartEvent" in str(caught.value)
    assert len(ctx.trace) == 0


async def test_a_non_awaitable_answer_is_an_invalid_return(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="open")
    async def fine(event: Any, env: hw.Envelope) -> None:
        return None

    bus.register(fine)
    # The decorator refuses sync functions; a callable that answers without awaiting (a
    # hand-registered one here) is still judged: it returned no awaitable.
    bus._registry.register(fine.spec.declaration, lambda e, v: hw.Block("sync"), name="sync")
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Continue()
    assert untimed(ctx.trace)[1]["failure"] == "invalid_return"


def _raises_type_error(event: Any, env: hw.Envelope) -> Any:
    raise TypeError("not from the await")


async def _awaits_then_raises_type_error(event: Any, env: hw.Envelope) -> None:
    raise TypeError("from inside the coroutine")


@pytest.mark.parametrize("timeout", [None, "2s"])
@pytest.mark.parametrize(
    ("call", "failure", "error"),
    [
        (lambda e, v: None, "invalid_return", "InvalidReturn"),
        (lambda e, v: 42, "invalid_return", "InvalidReturn"),
        (_raises_type_error, "exception", "TypeError"),
        (_awaits_then_raises_type_error, "exception", "TypeError"),
    ],
    ids=["returns-None", "returns-42", "call-raises-TypeError", "coroutine-raises-TypeError"],
)
async def test_a_type_error_is_an_exception_and_a_non_awaitable_an_invalid_return(
    bus: hw.HookBus,
    ctx: hw.RunContext,
    call: Any,
    failure: str,
    error: str,
    timeout: str | None,
) -> None:
    # Awaiting what cannot be awaited raises TypeError too: only that one is an invalid return.
    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout=timeout)
    async def template(event: Any, env: hw.Envelope) -> None:
        return None

    bus._registry.register(template.spec.declaration, call, name="odd")
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Continue()
    record = untimed(ctx.trace)[0]
    assert (record["kind"], record["failure"], record["error"]) == ("failure", failure, error)


def test_the_envelope_clock_is_injectable() -> None:
    saturday = hw.Envelope(clock=hw.FixedClock("2026-11-28T10:00:00+00:00"))
    monday = hw.Envelope(clock=hw.FixedClock("2026-11-30T10:00:00+00:00"))
    assert saturday.clock.is_weekend() and not monday.clock.is_weekend()
    assert isinstance(hw.Envelope().clock, hw.SystemClock)
    with pytest.raises(ValueError, match="timezone-aware"):
        hw.FixedClock("2026-11-28T10:00:00")
    with pytest.raises(TypeError, match="now\\(\\) and is_weekend\\(\\)"):
        hw.Envelope(clock="monday")  # type: ignore[arg-type]


def test_run_contexts_start_their_own_trace() -> None:
    first, second = hw.RunContext(), hw.RunContext()
    assert isinstance(first.trace, hw.Trace) and first.trace is not second.trace
    shared = hw.Trace()
    assert hw.RunContext(trace=shared).trace is shared
    with pytest.raises(TypeError, match=r"hw\.Trace"):
        hw.RunContext(trace=[])  # type: ignore[arg-type]


# -- a modified event is judged by its real type (I18) --------------------------------------


class ClaimsToBeAToolCall:
    """Not an event, but ``isinstance`` would believe it is one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return hw.ToolCallEvent


class ClassRaises:
    """Not an event, and asking it what it is raises."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("no class for you")


@pytest.mark.parametrize("impostor", [ClaimsToBeAToolCall, ClassRaises])
@pytest.mark.parametrize("fail_mode", ["open", "closed"])
@pytest.mark.parametrize("suspend", [False, True])
async def test_a_modified_event_is_judged_by_its_real_type(
    ctx: hw.RunContext, impostor: type, fail_mode: str, suspend: bool
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, timeout="2s")
    async def pretender(event: Any, env: hw.Envelope) -> hw.Continue:
        if suspend:
            await anyio.sleep(0)
        return hw.Continue(modified=impostor())

    bus = hw.HookBus()
    bus.register(pretender)
    event = tool_call(amount_usd=120)
    result = await bus.emit("tool.before", event, ctx)
    assert result.event is event
    record = ctx.trace[0]
    assert record["failure"] == "wrong_event_type" and record["error"] == "WrongEventType"
    if fail_mode == "open":
        assert result.outcome == hw.Continue()
    else:
        assert result.outcome == hw.Block(
            "middleware pretender failed: wrong_event_type", code="middleware_error"
        )


@pytest.mark.parametrize("impostor", [ClaimsToBeAToolCall, ClassRaises])
@pytest.mark.parametrize("timed", [False, True])
async def test_the_callers_event_is_judged_by_its_real_type(
    ctx: hw.RunContext, impostor: type, timed: bool
) -> None:
    """I7 with I18's real-type rule: an object that claims the event type, or whose
    ``__class__`` raises, is an ``event_type_mismatch`` before any middleware runs."""
    ran: list[str] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="2s" if timed else None)
    async def guard(event: Any, env: hw.Envelope) -> None:
        ran.append("guard")

    bus = hw.HookBus()
    bus.register(guard)
    with pytest.raises(hw.EmitError) as caught:
        await bus.emit("tool.before", impostor(), ctx)
    assert caught.value.kind == "event_type_mismatch" and caught.value.rule == "I7"
    assert impostor.__name__ in str(caught.value)
    assert ran == [] and len(ctx.trace) == 0


async def test_a_subclass_of_the_event_type_is_still_a_modification(ctx: hw.RunContext) -> None:
    class Audited(hw.ToolCallEvent):
        pass

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def audit(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Continue:
        return hw.Continue(modified=Audited.model_validate(event.model_dump()))

    bus = hw.HookBus()
    bus.register(audit)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert type(result.event) is Audited and ctx.trace[0]["modified"] is True


# -- logging: fail-open failures and contract warnings (docs/logging.md) ---------------------


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def flaky(event: Any, env: hw.Envelope) -> None:
    raise ValueError("card 4111 1111 1111 1111 declined")


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def strict_guard(event: Any, env: hw.Envelope) -> None:
    raise ValueError("card 4111 1111 1111 1111 declined")


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def renamer(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Continue:
    return hw.Continue(modified=event.updated({"call.name": "other"}))


async def test_a_fail_open_failure_is_logged_with_type_names_only(
    ctx: hw.RunContext, caplog: pytest.LogCaptureFixture
) -> None:
    bus = hw.HookBus()
    bus.register(flaky)
    with caplog.at_level("WARNING", logger="harnessweaver"):
        await bus.emit("tool.before", tool_call(), ctx)
    [record] = caplog.records
    assert record.name == "harnessweaver.buslog" and record.levelname == "WARNING"
    assert (record.middleware, record.hook) == ("flaky", "tool.before")  # type: ignore[attr-defined]
    assert (record.failure, record.error) == ("exception", "ValueError")  # type: ignore[attr-defined]
    assert "4111" not in record.getMessage() and record.exc_info is None  # never the message (R9)
    assert "flaky" in record.getMessage() and "ValueError" in record.getMessage()


@pytest.mark.parametrize("suspend", [False, True])
async def test_a_timeout_failing_open_is_logged(
    ctx: hw.RunContext, caplog: pytest.LogCaptureFixture, suspend: bool
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="10ms")
    async def slow(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(5)

    bus = hw.HookBus()
    bus.register(slow)
    with caplog.at_level("WARNING", logger="harnessweaver"):
        await bus.emit("tool.before", tool_call(), ctx)
    [record] = caplog.records
    assert (record.failure, record.error) == ("timeout", "MiddlewareTimeout")  # type: ignore[attr-defined]


async def test_closed_failures_and_plain_answers_log_nothing(
    ctx: hw.RunContext, caplog: pytest.LogCaptureFixture
) -> None:
    bus = hw.HookBus()
    bus.register(strict_guard)
    with caplog.at_level("DEBUG", logger="harnessweaver"):
        result = await bus.emit("tool.before", tool_call(), ctx)
        await hw.HookBus().emit("tool.before", tool_call(), ctx)
    assert result.outcome.kind == "block" and caplog.records == []


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("warn", {"contract": "tool.before/tool_unchanged"}),
        ("strict", {"failure": "contract_violation", "error": "ContractViolation"}),
    ],
)
async def test_contract_breaches_are_logged(
    ctx: hw.RunContext, caplog: pytest.LogCaptureFixture, mode: str, expected: dict[str, str]
) -> None:
    bus = hw.HookBus(contracts=mode)
    bus.register(renamer)
    with caplog.at_level("WARNING", logger="harnessweaver"):
        await bus.emit("tool.before", tool_call(), ctx)
    [record] = caplog.records
    assert record.middleware == "renamer"  # type: ignore[attr-defined]
    assert {key: getattr(record, key) for key in expected} == expected


def test_the_library_is_silent_unless_logging_is_configured() -> None:
    import logging

    logger = logging.getLogger("harnessweaver")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
