"""StateView: timeouts and every store failure as StateUnavailable, keys per scope, the
fail-mode rule through the bus, and no URL anywhere; @middleware(state=True) and attach()."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import tool_call, untimed

import harnessweaver as hw
from harnessweaver.middleware import spec_of
from harnessweaver.state import (
    SCOPES,
    MemoryStore,
    Record,
    Stateful,
    StateUnavailable,
    StateView,
    Store,
    attach,
    scope_subject,
    state_key,
)

pytestmark = pytest.mark.anyio
URL = "redis://admin:hunter2@10.0.0.1:6379/0"


class Broken:
    """A store whose every call fails with ``error`` after ``delay`` seconds; the error's
    message quotes its URL, as a client library's does."""

    backend = "redis"

    def __init__(self, error: BaseException | None = None, delay: float = 0.0) -> None:
        self.url = URL
        self.error = error
        self.delay = delay
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        async def call(*args: object, **kwargs: object) -> object:
            self.calls.append(name)
            await anyio.sleep(self.delay)
            if self.error is not None:
                raise self.error
            return None

        return call

    def __repr__(self) -> str:
        return f"Broken({self.url})"


def view_of(store: Any, *, fail_mode: str = "closed", timeout: float = 0.25) -> StateView:
    return StateView(store, layer="org_profile", item="budget", fail_mode=fail_mode,
                     timeout=timeout, task="refunds")  # fmt: skip


ALL_CALLS = [
    ("reserve", lambda v: v.reserve("k", "h", 1, limit=None, ttl=1)),
    ("commit", lambda v: v.commit("k", "h", 1)),
    ("release", lambda v: v.release("k", "h")),
    ("total", lambda v: v.total("k")),
    ("read", lambda v: v.read("k")),
    ("swap", lambda v: v.swap("k", 0, 1)),
    ("delete", lambda v: v.delete("k")),
]


@pytest.mark.parametrize(("operation", "call"), ALL_CALLS)
async def test_a_slow_store_times_out_as_unavailable(operation: str, call: Any) -> None:
    view = view_of(Broken(delay=5), timeout=0.05)
    with anyio.fail_after(2):
        with pytest.raises(StateUnavailable) as caught:
            await call(view)
    exc = caught.value
    assert (exc.backend, exc.operation, exc.cause) == ("redis", operation, "timed out")
    assert str(exc) == f"state store redis: {operation} failed: timed out"


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(f"cannot reach {URL}"),
        OSError(f"{URL}: no route"),
        RuntimeError(f"server said no to {URL}"),
        KeyError(URL),
    ],
)
@pytest.mark.parametrize(("operation", "call"), ALL_CALLS)
async def test_any_store_failure_is_unavailable_without_its_message(
    operation: str, call: Any, error: Exception
) -> None:
    view = view_of(Broken(error))
    with pytest.raises(StateUnavailable) as caught:
        await call(view)
    exc = caught.value
    assert (exc.backend, exc.operation, exc.cause) == ("redis", operation, type(error).__name__)
    assert exc.__cause__ is None and exc.__suppress_context__
    for text in (str(exc), repr(exc), repr(view)):
        assert "hunter2" not in text and "10.0.0.1" not in text


async def test_a_store_s_own_unavailable_passes_as_it_is() -> None:
    own = StateUnavailable("redis", "reserve", "ConnectionError")
    with pytest.raises(StateUnavailable) as caught:
        await view_of(Broken(own)).reserve("k", "h", 1, limit=None, ttl=1)
    assert caught.value is own


@pytest.mark.parametrize(
    "call",
    [
        lambda v: v.reserve("", "h", 1, limit=None, ttl=1),
        lambda v: v.reserve("k", "h", float("nan"), limit=None, ttl=1),
        lambda v: v.reserve("k", "h", 1, limit=None, ttl=0),
        lambda v: v.commit("k", "", 1),
        lambda v: v.swap("k", 0, {"bad": {1, 2}}),
        lambda v: v.swap("k", -1, 1),
    ],
)
async def test_a_caller_s_bad_argument_is_a_value_error_before_any_call(call: Any) -> None:
    store = Broken()
    with pytest.raises(ValueError):
        await call(view_of(store))
    assert store.calls == []


async def test_a_view_passes_through_to_its_store() -> None:
    view = view_of(MemoryStore())
    assert (await view.reserve("k", "h", 2, limit=3, ttl=9)).granted
    assert await view.commit("k", "h", 2) == 2
    assert await view.release("k", "h") == 2
    assert await view.total("k") == 2
    assert await view.swap("r", 0, [1])
    assert await view.read("r") == Record([1], 1)
    await view.delete("k", "r")
    assert await view.total("k") == 0


def test_repr_names_the_backend_never_the_url() -> None:
    view = view_of(Broken())
    assert repr(view) == (
        "StateView(backend='redis', layer='org_profile', item='budget', fail_mode='closed', "
        "timeout=0.25)"
    )


def test_unavailable_is_a_block_with_its_own_code() -> None:
    block = view_of(Broken()).unavailable(StateUnavailable("redis", "reserve", "timed out"))
    assert block == hw.Block(
        "middleware budget: state store unavailable (redis)", code="state_unavailable"
    )


@pytest.mark.parametrize(
    ("fail_mode", "timeout"), [("sometimes", 0.25), ("closed", 0), ("open", float("inf"))]
)
def test_a_view_checks_its_fail_mode_and_timeout(fail_mode: str, timeout: float) -> None:
    with pytest.raises(ValueError):
        StateView(MemoryStore(), layer="app", item="x", fail_mode=fail_mode, timeout=timeout)


# -- keys and scopes ----------------------------------------------------------------------


def test_state_key_encodes_every_part() -> None:
    assert state_key("app", "budget", "org", "-", "tokens") == "hw1/app/budget/org/-/tokens"
    assert state_key("a/b", "c d", "user", "u%1/{x}", "n") == (
        "hw1/a%2Fb/c%20d/user/u%251%2F%7Bx%7D/n"
    )


def test_each_scope_has_its_subject() -> None:
    env = hw.Envelope(run_id="run-1", attributes={"session": "s", "user": "u/1", "app": "shop"})
    view = view_of(MemoryStore())
    assert {scope: view.key(scope, env, "n") for scope in SCOPES} == {
        "run": "hw1/org_profile/budget/run/run-1/n",
        "session": "hw1/org_profile/budget/session/s/n",
        "user": "hw1/org_profile/budget/user/u%2F1/n",
        "task": "hw1/org_profile/budget/task/refunds/n",
        "app": "hw1/org_profile/budget/app/shop/n",
        "org": "hw1/org_profile/budget/org/-/n",
    }
    without_task = StateView(MemoryStore(), layer="task", item="x", fail_mode="open")
    assert without_task.key("task", env, "n") == "hw1/task/x/task/-/n"


@pytest.mark.parametrize("scope", ["session", "user", "app"])
@pytest.mark.parametrize("attributes", [{}, {"session": 1, "user": None, "app": ["a"]}])
def test_a_missing_attribute_is_a_lookup_error_naming_it(
    scope: str, attributes: dict[str, object]
) -> None:
    env = hw.Envelope(attributes=attributes)
    with pytest.raises(LookupError) as caught:
        view_of(MemoryStore()).key(scope, env, "n")
    assert f"'{scope}'" in str(caught.value) and f"scope {scope}" in str(caught.value)


def test_an_unknown_scope_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        view_of(MemoryStore()).key("tenant", hw.Envelope(), "n")
    with pytest.raises(ValueError):
        scope_subject("tenant", run_id="r", attributes={}, task=None)


# -- state=True, attach, and the fail-mode rule through the bus ---------------------------


@hw.middleware(hooks=["tool.before"], fail_mode="closed", state=True)
class CallCap(Stateful):
    """Two calls per user; the rule of every stateful middleware on a store failure."""

    async def __call__(self, event: Any, env: hw.Envelope) -> hw.Outcome | None:
        view = self.state
        try:
            key = view.key("user", env, "calls")
            got = await view.reserve(key, f"{env.run_id}/{event.call.name}", 1, limit=2, ttl=60)
        except StateUnavailable as exc:
            if view.fail_mode == "closed":
                return view.unavailable(exc)
            raise
        return None if got.granted else hw.Block("too many calls", code="cap")


def test_state_true_is_on_the_spec() -> None:
    spec = spec_of(CallCap)
    assert spec is not None and spec.state


def test_state_true_needs_a_class_with_attach_state() -> None:
    with pytest.raises(hw.DeclarationError, match="attach_state"):

        @hw.middleware(hooks=["tool.before"], fail_mode="closed", state=True)
        class NoAttach:
            async def __call__(self, event: Any, env: Any) -> None:
                return None

    with pytest.raises(hw.DeclarationError, match="for middleware classes"):

        @hw.middleware(hooks=["tool.before"], fail_mode="closed", state=True)
        async def function(event: Any, env: Any) -> None:
            return None

    with pytest.raises(hw.DeclarationError, match="true or false"):
        hw.middleware(hooks=["tool.before"], fail_mode="closed", state="yes")  # type: ignore[call-overload]


async def test_never_attached_it_keeps_a_private_memory_view() -> None:
    cap = CallCap()
    view = cap.state
    assert (view.backend, view.layer, view.item, view.fail_mode) == (
        "memory", "app", "call_cap", "closed",
    )  # fmt: skip
    assert cap.state is view
    assert CallCap().state.store is not view.store


def test_attach_gives_a_built_middleware_its_view() -> None:
    cap, store = CallCap(), MemoryStore()
    view = attach(cap, store, layer="platform_profile", name="cap", task="t", timeout=1)
    assert cap.state is view and view.store is store
    assert (view.layer, view.item, view.fail_mode, view.task, view.timeout) == (
        "platform_profile", "cap", "closed", "t", 1.0,
    )  # fmt: skip
    assert attach(cap, store, fail_mode="open").fail_mode == "open"
    with pytest.raises(TypeError, match="built middleware"):
        attach(CallCap, store)
    with pytest.raises(TypeError, match="state=True"):
        attach(object(), store)


async def test_two_middleware_on_one_store_share_a_count(ctx: hw.RunContext) -> None:
    store = MemoryStore()
    buses = []
    for _ in range(2):
        cap = CallCap()
        attach(cap, store)
        bus = hw.HookBus()
        bus.register(cap)
        buses.append(bus)
    env = hw.Envelope(attributes={"user": "ann"})
    outcomes = []
    for i in range(3):
        run_ctx = hw.RunContext(envelope=env)
        result = await buses[i % 2].emit("tool.before", tool_call(f"t{i}"), run_ctx)
        outcomes.append(result.outcome)
    assert outcomes == [hw.Continue(), hw.Continue(), hw.Block("too many calls", code="cap")]


@pytest.mark.parametrize("fail_mode", ["closed", "open"])
async def test_a_store_outage_follows_the_fail_mode(fail_mode: str) -> None:
    cap = CallCap()
    attach(cap, Broken(ConnectionRefusedError(URL)), fail_mode=fail_mode)  # type: ignore[arg-type]
    bus = hw.HookBus()
    bus.register(cap, fail_mode=fail_mode)
    ctx = hw.RunContext(envelope=hw.Envelope(attributes={"user": "ann"}))
    result = await bus.emit("tool.before", tool_call(), ctx)
    records = untimed(ctx.trace)
    if fail_mode == "closed":
        assert result.outcome == hw.Block(
            "middleware call_cap: state store unavailable (redis)", code="state_unavailable"
        )
    else:  # recorded as a failure of the middleware, then the chain goes on: never silent
        assert result.outcome == hw.Continue()
        failure = next(r for r in records if r["kind"] == "failure")
        assert (failure["failure"], failure["error"]) == ("exception", "StateUnavailable")
    assert "hunter2" not in repr(records)


async def test_a_missing_attribute_fails_the_middleware_under_its_fail_mode() -> None:
    cap = CallCap()
    attach(cap, MemoryStore())
    bus = hw.HookBus()
    bus.register(cap)
    ctx = hw.RunContext(envelope=hw.Envelope())
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome.kind == "block"
    failure = next(r for r in untimed(ctx.trace) if r["kind"] == "failure")
    assert failure["error"] == "LookupError"


def test_the_protocol_is_runtime_checkable() -> None:
    assert isinstance(MemoryStore(), Store)


def test_importing_the_package_loads_no_backend() -> None:
    import subprocess
    import sys

    code = (
        "import sys, harnessweaver.state as s\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('harnessweaver.state.'))\n"
        "s.MemoryStore\n"
        "print(loaded, 'harnessweaver.state.sqlite' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] False"
