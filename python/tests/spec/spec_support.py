"""Plugins and helpers for the harness-spec tests.

This module is itself a plugin module (``plugins: {local: [spec_support]}``): ``plugin`` is the
``acme`` plugin; ``beta_plugin`` and ``make_gamma`` are what the entry-point tests install.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

import harnessweaver as hw

HERE = Path(__file__).resolve().parent
ALL_HOOKS = [
    "task.start",
    "step.start",
    "model.before",
    "model.after",
    "tool.before",
    "tool.after",
    "step.end",
    "task.end",
]
PLUGINS = "plugins: {local: [spec_support]}\n"


@hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="2s")
async def guard(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Blocks a call whose arguments say ``blocked: true``."""
    if event.call.arguments.get("blocked"):
        return hw.Block(reason="guarded", code="guarded")
    return None


@hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="open")
async def watcher(event: hw.Event, env: hw.Envelope) -> None:
    return None


@hw.middleware(hooks=ALL_HOOKS, fail_mode="closed", timeout="250ms")
async def tracer(event: hw.Event, env: hw.Envelope) -> None:
    return None


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float


@hw.middleware(hooks=["tool.before"], fail_mode="closed", config=CapSettings)
class RefundCap:
    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments.get("amount_usd", 0) > self.max_usd:  # type: ignore[operator]
            return hw.Block(reason="over the refund cap", code="refund_cap")
        return None


class LaxSettings(BaseModel):
    limit: int = 3  # extra keys ignored by pydantic: the loader still refuses them


@hw.middleware(hooks=["model.before"], fail_mode="closed", config=LaxSettings)
class Lax:
    def __init__(self, config: LaxSettings) -> None:
        self.limit = config.limit

    async def __call__(self, event: hw.Event, env: hw.Envelope) -> None:
        return None


plugin = hw.Plugin(
    namespace="acme",
    version="1.0.0",
    middleware=[guard, watcher, tracer, RefundCap, Lax],
    profiles={
        "baseline": "acme_profiles/baseline.yaml",
        "watch": {"middleware": [{"use": "acme.watcher", "id": "watch"}]},
    },
)


@hw.middleware(hooks=["tool.before"], fail_mode="closed", name="guard")
async def beta_guard(event: hw.Event, env: hw.Envelope) -> None:
    return None


beta_plugin = hw.Plugin(namespace="beta", version="2.0.0", middleware=[beta_guard])


@hw.middleware(hooks=["tool.after"], fail_mode="open", name="check")
async def gamma_check(event: hw.Event, env: hw.Envelope) -> None:
    return None


def make_gamma() -> hw.Plugin:
    return hw.Plugin(namespace="gamma", version="0.3.0", middleware=[gamma_check])


def plugged(body: str) -> str:
    """A spec that loads this module's plugins, then ``body`` (dedented)."""
    return PLUGINS + textwrap.dedent(body).lstrip("\n")


def write(folder: Path, text: str, name: str = "harness.yaml") -> Path:
    """``text`` (dedented) written to ``folder/name``."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems(path: Path, **kwargs: object) -> list[hw.Problem]:
    """The problems loading ``path`` reports (it must fail)."""
    with pytest.raises(hw.SpecError) as caught:
        hw.load(path, **kwargs)  # type: ignore[arg-type]
    error = caught.value
    assert (error.kind, error.rule) == ("invalid_spec", "spec")
    assert str(error) == "\n".join(map(str, error.problems))
    return list(error.problems)


def only_problem(path: Path, **kwargs: object) -> hw.Problem:
    found = problems(path, **kwargs)
    assert len(found) == 1, "\n".join(map(str, found))
    return found[0]


def names(harness: hw.Harness, hook: str) -> list[str]:
    return [entry.name for entry in harness.chains()[hook]]


def tool_call(name: str = "refund_payment", **arguments: object) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name=name), call=hw.ToolCall(name=name, arguments=arguments)
    )


def untimed(trace: hw.Trace) -> list[dict[str, object]]:
    return [{k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in trace]
