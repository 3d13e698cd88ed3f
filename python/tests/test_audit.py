"""Audit mode (I25): an audited middleware runs and is traced as what it would have done
(``"audit": true``), and counts as a plain Continue. The corpus pins the walk and the checks;
these pin the Python surface: the declaration's ``mode``, the arguments, and traces read back."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from conftest import tool_call

import harnessweaver as hw
from harnessweaver.errors import DeclarationError, RegistrationError


def blocker(name: str, **opts: Any) -> Any:
    async def run(event: Any, env: hw.Envelope) -> hw.Block:
        return hw.Block(reason="would block", code="policy")

    run.__name__ = name
    return hw.middleware(hooks=["tool.before"], fail_mode="closed", **opts)(run)


def emit(bus: hw.HookBus) -> tuple[hw.HookResult, hw.RunContext]:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="r"))
    results: list[hw.HookResult] = []

    async def go() -> None:
        results.append(await bus.emit("tool.before", tool_call("refund_payment"), ctx))

    anyio.run(go)
    return results[0], ctx


def test_the_declared_mode_and_the_override_show_on_the_declaration() -> None:
    assert blocker("g").spec.declaration.mode == "enforce"
    audited = blocker("g", mode="audit")
    assert audited.spec.declaration.mode == "audit"
    assert audited.spec.declaration != blocker("g").spec.declaration
    bus = hw.HookBus()
    assert bus.register(blocker("g"), mode="audit").mode == "audit"
    assert bus.register(audited, name="h", mode="enforce").mode == "enforce"
    assert [d.mode for d in bus.chain("tool.before")] == ["audit", "enforce"]


def test_an_audited_block_is_traced_and_the_result_is_continue() -> None:
    bus = hw.HookBus()
    bus.register(blocker("shadow", mode="audit"))
    result, ctx = emit(bus)
    assert isinstance(result.outcome, hw.Continue)
    first, hook = ctx.trace.records()
    assert (first["outcome"], first["code"], first["audit"]) == ("block", "policy", True)
    assert "audit" not in hook and hook["outcome"] == "continue"
    # The key sits after contract and before the timings, as in every writer.
    assert list(first)[-3:] == ["audit", "t_ns", "duration_ns"]


def test_an_enforced_chain_has_no_audit_key() -> None:
    bus = hw.HookBus()
    bus.register(blocker("gate"))
    result, ctx = emit(bus)
    assert isinstance(result.outcome, hw.Block)
    assert all("audit" not in record for record in ctx.trace.records())


def test_audited_records_read_back_and_only_true_on_middleware_records_is_read() -> None:
    bus = hw.HookBus()
    bus.register(blocker("shadow", mode="audit"))
    _, ctx = emit(bus)
    text = ctx.trace.to_jsonl()
    assert '"audit":true' in text
    assert hw.Trace.from_jsonl(text).records() == ctx.trace.records()
    first, hook = (json.loads(line) for line in text.splitlines())
    for bad in ({**first, "audit": False}, {**hook, "audit": True}, {**first, "audit": 1}):
        with pytest.raises(hw.TraceFormatError):
            hw.Trace.from_jsonl(json.dumps(bad))


@pytest.mark.parametrize("mode", ["Audit", "dry_run", "", 1, True])
def test_a_bad_mode_is_invalid_mode_at_declaration_and_registration(mode: object) -> None:
    with pytest.raises(DeclarationError) as declared:
        blocker("g", mode=mode)
    assert (declared.value.kind, declared.value.rule) == ("invalid_mode", "I25")
    assert repr(mode) in declared.value.message
    with pytest.raises(RegistrationError) as registered:
        hw.HookBus().register(blocker("g"), mode=mode)
    assert registered.value.kind == "invalid_mode"


def test_only_the_org_profile_audits_baseline() -> None:
    decl = blocker("guard").spec.declaration
    assert hw.declare_in(decl, "org_profile", mode="audit").mode == "audit"
    for layer in ("plugin_profile", "profile_file"):
        with pytest.raises(RegistrationError) as refused:
            hw.declare_in(decl, layer, mode="audit")
        assert (refused.value.kind, refused.value.rule) == ("baseline_audit_not_org", "I25")
    with pytest.raises(RegistrationError):
        hw.declare_in(blocker("guard", mode="audit").spec.declaration, "org_profile")
    with pytest.raises(DeclarationError) as declared:
        blocker("guard", band="baseline", mode="audit")
    assert "'guard'" in declared.value.message


def test_an_audited_answer_s_warnings_are_on_its_line_before_audit_and_not_on_the_result() -> None:
    """I24 with I25: the JSON Lines key order every implementation writes (the TypeScript
    suite pins the same line), and the result holds no audited warnings."""

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", mode="audit")
    async def shadow(event: Any, env: hw.Envelope) -> hw.Block:
        return hw.Block(reason="would block", code="policy", warnings=["w1"])

    bus = hw.HookBus()
    bus.register(shadow)
    result, ctx = emit(bus)
    assert result.warnings == ()
    line = ctx.trace.to_jsonl().splitlines()[0]
    keys = list(json.loads(line))
    assert keys[-5:] == ["code", "warnings", "audit", "t_ns", "duration_ns"]
