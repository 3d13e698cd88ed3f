"""A spec's ``identity:`` is checked once, by the bus (I27): the loader reports what the bus
refuses, with the bus's kind, rule and message, at the spec's line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import harnessweaver as hw


@pytest.mark.parametrize("written", ["sha1", "[1, 2]", "true", "JCS-SHA256"])
def test_a_scheme_the_bus_refuses_is_the_buses_error_at_the_specs_line(
    tmp_path: Path, written: str
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"middleware: []\nidentity: {written}\n", encoding="utf-8")
    with pytest.raises(hw.SpecError) as caught:
        hw.load(spec)
    (problem,) = caught.value.problems
    with pytest.raises(hw.RegistrationError) as bus:
        hw.HookBus(identity=yaml.safe_load(written))
    assert (problem.kind, problem.rule, problem.line) == ("invalid_identity", "I27", 2)
    assert (problem.item, problem.message) == ("identity", str(bus.value))


@pytest.mark.parametrize(("written", "scheme"), [("jcs-sha256", "jcs-sha256"), ("null", None)])
def test_the_scheme_the_bus_accepts_is_the_harness_buses(
    tmp_path: Path, written: str, scheme: str | None
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"identity: {written}\nmiddleware: []\n", encoding="utf-8")
    assert hw.load(spec).bus.identity == scheme
