"""``harnessweaver.testing``: the ``emit_benchmark`` fixture, used by tests of its own here and
by a user-like suite run with pytester (``pytest_plugins = ["harnessweaver.testing"]`` in its
conftest, ``--benchmark-json``). Tiny rounds (``per=20, rounds=5``): no test asserts a time
or a ratio's size, only that the figures are there, finite and positive, and what ran.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from checkout import CHECKOUT

import harnessweaver as hw

if TYPE_CHECKING:  # imported by the plugin registration below first: so pytest can rewrite it
    from harnessweaver.testing import EmitBenchmark, EmitBenchmarkFixture

# The fixture as a user's suite gets it (there from its root conftest.py), and pytester.
pytest_plugins = ["pytester", "harnessweaver.testing"]

pytest.importorskip("pytest_benchmark", reason="the fixture times with pytest-benchmark")

MONDAY = "2026-11-30T10:00:00+00:00"
"""The refunds example's weekend guard suspends at the weekend: its rounds run on a Monday."""


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def cap(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.call.arguments.get("amount_usd", 0) > 500:
        return hw.Block(reason="over the cap", code="cap")
    return None


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def note(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    return None


def _bus() -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(cap)
    bus.register(note)
    return bus


def _refund(amount_usd: int) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        step=1,
        tool=hw.ToolSpec(name="refund_payment"),
        call=hw.ToolCall(name="refund_payment", arguments={"order": 42, "amount_usd": amount_usd}),
    )


def _figures_hold(result: EmitBenchmark) -> None:
    for figure in (result.ratio, result.emit_ns, result.floor_ns):
        assert math.isfinite(figure) and figure > 0, result


def test_a_small_bus_on_tool_before(emit_benchmark: EmitBenchmarkFixture, benchmark: Any) -> None:
    result = emit_benchmark(_bus(), "tool.before", _refund(20), per=20, rounds=5)
    assert (result.hook, result.middleware, result.per, result.rounds, result.timed) == (
        "tool.before",
        ("cap", "note"),
        20,
        5,
        True,
    )
    _figures_hold(result)
    assert isinstance(result.last.outcome, hw.Continue)
    info = benchmark.extra_info
    assert info["hook"] == "tool.before" and info["middleware"] == ["cap", "note"]
    assert info["core"] == hw.CORE and info["per"] == 20 and info["events"] == 1
    assert info["paired_ratio"] == result.ratio and info["paired_floor_ns"] == result.floor_ns
    assert len(benchmark.stats.stats.data) == 5  # the warm-up rounds are not counted


def test_events_cycle_and_the_last_result_is_the_last_emits(
    emit_benchmark: EmitBenchmarkFixture,
) -> None:
    # 21 emits over (20, 900): the 21st is the first event again, so the last one continued.
    result = emit_benchmark(_bus(), "tool.before", [_refund(20), _refund(900)], per=21, rounds=3)
    assert isinstance(result.last.outcome, hw.Continue)
    assert result.last.event.call.arguments["amount_usd"] == 20


def test_a_loaded_harness_is_a_target(emit_benchmark: EmitBenchmarkFixture) -> None:
    if CHECKOUT is None:
        pytest.skip("needs the checkout's examples/refunds")
    refunds = CHECKOUT / "examples" / "refunds"
    harness = hw.load(refunds / "harness.yaml", task="refund", org_profiles=[refunds / "org"])

    def monday() -> hw.RunContext:
        return hw.RunContext(envelope=hw.Envelope(clock=hw.FixedClock(MONDAY)))

    result = emit_benchmark(harness, "tool.before", _refund(120), per=20, rounds=5, context=monday)
    assert result.middleware == tuple(d.name for d in harness.bus.chain("tool.before"))
    assert "small_cap" in result.middleware
    assert isinstance(result.last.outcome, hw.Continue)
    _figures_hold(result)


def test_a_second_call_in_one_test_is_refused(emit_benchmark: EmitBenchmarkFixture) -> None:
    emit_benchmark(_bus(), "tool.before", _refund(20), per=20, rounds=1)
    with pytest.raises(RuntimeError, match="already called in this test"):
        emit_benchmark(_bus(), "tool.before", _refund(20), per=20, rounds=1)


def test_an_empty_chain_is_refused_naming_the_hook(emit_benchmark: EmitBenchmarkFixture) -> None:
    with pytest.raises(ValueError, match=r"no middleware runs at 'task\.start'"):
        emit_benchmark(_bus(), "task.start", hw.TaskStartEvent(task="t", input={}))


@pytest.mark.parametrize(
    ("hook", "event", "settings", "error", "match"),
    [
        ("tool.nope", None, {}, ValueError, r"unknown hook point 'tool\.nope'"),
        ("tool.before", "not an event", {}, TypeError, "takes a ToolCallEvent, got 'not an"),
        ("tool.before", [], {}, ValueError, "no event to emit"),
        ("tool.before", None, {"per": 0}, ValueError, "per must be a whole number >= 1, got 0"),
        ("tool.before", None, {"rounds": 1.5}, ValueError, "rounds must be a whole number"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_timed(
    emit_benchmark: EmitBenchmarkFixture,
    hook: str,
    event: Any,
    settings: dict[str, Any],
    error: type[Exception],
    match: str,
) -> None:
    with pytest.raises(error, match=match):
        emit_benchmark(_bus(), hook, _refund(20) if event is None else event, **settings)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_async_test_is_told_to_be_a_plain_one(
    emit_benchmark: EmitBenchmarkFixture, anyio_backend: str
) -> None:
    with pytest.raises(RuntimeError, match=r"not an async one"):
        emit_benchmark(_bus(), "tool.before", _refund(20))


def test_a_target_without_a_bus_is_refused(emit_benchmark: EmitBenchmarkFixture) -> None:
    with pytest.raises(TypeError, match=r"needs an hw\.HookBus or a loaded hw\.Harness, got 3"):
        emit_benchmark(3, "tool.before", _refund(20))  # type: ignore[arg-type]


# A user's suite: the plugin in its root conftest, two benchmarks, the JSON report.
USER_CONFTEST = 'pytest_plugins = ["harnessweaver.testing"]\n'
USER_TEST = """
import harnessweaver as hw
from harnessweaver.testing import EmitBenchmarkFixture


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def guard(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    return hw.Block(reason="no", code="no") if event.tool.name == "rm" else None


def _bus() -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(guard)
    return bus


def _call(name: str) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(step=1, tool=hw.ToolSpec(name=name), call=hw.ToolCall(name=name))


def test_guard_lets_ls_through(emit_benchmark: EmitBenchmarkFixture) -> None:
    result = emit_benchmark(_bus(), "tool.before", _call("ls"), per=20, rounds=3)
    assert isinstance(result.last.outcome, hw.Continue)
    print("ROUNDS", result.rounds, result.timed)


def test_guard_blocks_rm(emit_benchmark: EmitBenchmarkFixture) -> None:
    result = emit_benchmark(_bus(), "tool.before", _call("rm"), per=20, rounds=3)
    assert result.last.outcome.code == "no"
    print("ROUNDS", result.rounds, result.timed)
"""


def _user_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's suite in pytester's folder, run in a subprocess that imports this
    harnessweaver (a checkout's python/ or the installed one) and loads only the plugins it
    is given (autoloading every installed pytest plugin costs seconds a run)."""
    monkeypatch.setenv("PYTHONPATH", str(Path(hw.__file__).resolve().parents[1]))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(USER_CONFTEST)
    pytester.makepyfile(test_user=USER_TEST)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", *args)


BENCHMARK = ("-p", "pytest_benchmark.plugin")
"""pytest-benchmark, by module: autoloading is off in the inner runs."""


def test_a_user_suite_gets_the_ratio_in_its_benchmark_json(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _user_suite(pytester, monkeypatch)
    done = _run(pytester, *BENCHMARK, "--benchmark-json=out.json")
    done.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    benchmarks = {b["name"]: b for b in report["benchmarks"]}
    assert set(benchmarks) == {"test_guard_lets_ls_through", "test_guard_blocks_rm"}
    for entry in benchmarks.values():
        info = entry["extra_info"]
        assert info["hook"] == "tool.before" and info["middleware"] == ["guard"]
        assert info["per"] == 20 and info["core"] == hw.CORE
        assert math.isfinite(info["paired_ratio"]) and info["paired_ratio"] > 0
        assert info["paired_floor_ns"] > 0
        assert entry["group"] == "emit tool.before"
        assert entry["stats"]["rounds"] == 3


def test_a_disabled_benchmark_still_gives_one_honest_round(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _user_suite(pytester, monkeypatch)
    done = _run(pytester, *BENCHMARK, "-s", "--benchmark-disable")
    done.assert_outcomes(passed=2)
    assert done.stdout.str().count("ROUNDS 1 False") == 2


def test_without_pytest_benchmark_the_error_says_what_to_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _user_suite(pytester, monkeypatch)
    done = _run(pytester)  # pytest-benchmark not loaded: as if not installed
    done.assert_outcomes(failed=2)
    done.stdout.fnmatch_lines(["*RuntimeError: *pip install pytest-benchmark*"])


def test_importing_the_plugin_does_not_import_pytest_benchmark() -> None:
    program = "import sys, harnessweaver.testing\nprint('pytest_benchmark' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_the_example_suite_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/benchmark, as a user copies it, its ratio budget set aside (tests assert no
    time): what it checks besides still holds, with pytest-benchmark on."""
    if CHECKOUT is None:
        pytest.skip("needs the checkout's examples/benchmark")
    monkeypatch.setenv("PYTHONPATH", str(Path(hw.__file__).resolve().parents[1]))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    example = CHECKOUT / "examples" / "benchmark"
    for name in ("conftest.py", "test_guard_cost.py"):
        shutil.copy(example / name, pytester.path / name)
    test = pytester.path / "test_guard_cost.py"
    text = test.read_text(encoding="utf-8")
    unbounded, count = re.subn(
        r"^RATIO_BUDGET = .*$", 'RATIO_BUDGET = float("inf")', text, flags=re.M
    )
    assert count == 1, "the example holds its budget in RATIO_BUDGET"
    test.write_text(unbounded, encoding="utf-8")
    done = _run(pytester, *BENCHMARK, "--benchmark-json=out.json")
    done.assert_outcomes(passed=1)
    (entry,) = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))["benchmarks"]
    assert entry["extra_info"]["middleware"] == ["refund_cap", "audit"]


def test_the_guide_shows_the_example_as_it_is() -> None:
    """docs/testing.md quotes examples/benchmark/test_guard_cost.py whole: the page's first
    block after its test's heading is that file, so that the two never drift apart."""
    if CHECKOUT is None:
        pytest.skip("needs the checkout's docs and examples")
    page = (CHECKOUT / "docs" / "testing.md").read_text(encoding="utf-8")
    after = page.split("\n## A test\n", 1)[1]
    block = re.search(r"^```python\n(.*?)^```", after, flags=re.S | re.M)
    assert block is not None
    example = CHECKOUT / "examples" / "benchmark" / "test_guard_cost.py"
    assert block.group(1) == example.read_text(encoding="utf-8")
