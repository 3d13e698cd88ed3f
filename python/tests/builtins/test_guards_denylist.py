"""``harnessweaver.tool_denylist``: the tools on the list never run, from code and from a spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from builtins_support import bus_with, call, run

import harnessweaver as hw
from harnessweaver import builtins

pytestmark = pytest.mark.anyio


async def test_a_denied_tool_is_blocked_and_another_runs() -> None:
    bus = bus_with(builtins.ToolDenylist, deny=["delete_repository", "it's"])
    assert (await bus.emit("tool.before", call("search"), run())).outcome == hw.Continue()
    denied = await bus.emit("tool.before", call("delete_repository"), run())
    assert denied.outcome == hw.Block(
        reason="tool 'delete_repository' is denied", code="tool_denied"
    )
    quoted = await bus.emit("tool.before", call("it's"), run())
    assert quoted.outcome == hw.Block(reason='tool "it\'s" is denied', code="tool_denied")


async def test_names_are_compared_exactly() -> None:
    bus = bus_with(builtins.ToolDenylist, deny=["Bash"])
    for name in ("bash", "Bash2", " Bash", "BASH"):
        assert (await bus.emit("tool.before", call(name), run())).outcome == hw.Continue(), name


async def test_a_spec_uses_it_by_name(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware:\n  - {use: harnessweaver.tool_denylist, deny: [rm_tree]}\n")
    harness = hw.load(spec)
    assert [e.name for e in harness.chains()["tool.before"]] == ["harnessweaver.tool_denylist"]
    result = await harness.bus.emit("tool.before", call("rm_tree"), run())
    assert result.outcome == hw.Block(reason="tool 'rm_tree' is denied", code="tool_denied")


@pytest.mark.parametrize(
    "settings", ["", ", deny: []", ", deny: [1]", ", deny: x", ", denied: [x]"]
)
def test_bad_settings_are_refused_when_the_spec_loads(tmp_path: Path, settings: str) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"middleware:\n  - {{use: harnessweaver.tool_denylist{settings}}}\n")
    with pytest.raises(hw.SpecError) as raised:
        hw.load(spec)
    assert "harnessweaver.tool_denylist" in str(raised.value)
    assert "invalid settings" in str(raised.value)
