"""examples/policies (issue 33): its Cedar policy set loads from its harness.yaml, decides
each call as its README shows, fails closed on a request Cedar cannot take, names a bad
policy by file and line, and ``harnessweaver hooks`` lists the files it loads; the Cedar
blocks of docs/policies.md parse, and its copy of the example's harness.yaml is the file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from checkout import require_checkout

import harnessweaver as hw

cedarpy = pytest.importorskip("cedarpy", reason="the example needs harnessweaver[cedar]")

ROOT = require_checkout()
EXAMPLE = ROOT / "examples" / "policies"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
PAGE = ROOT / "docs" / "policies.md"
FILES = ["policies/refunds.cedar", "policies/mcp.cedar", "tools.cedarschema", "entities.json"]
"""What the item loads, as the spec writes the paths: policies, schema, entities."""


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harnessweaver.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)


def _emit(
    harness: hw.Harness, user: str | None, tool: str, **arguments: Any
) -> tuple[hw.HookResult, list[dict[str, Any]]]:
    attributes = {"user": user} if user else {}
    ctx = hw.RunContext(hw.Envelope(attributes=attributes))
    event = hw.ToolCallEvent(
        step=3,
        tool=hw.ToolSpec(name=tool),
        call=hw.ToolCall(id="c", name=tool, arguments=arguments),
    )
    result = anyio.run(harness.bus.emit, "tool.before", event, ctx)
    return result, list(ctx.trace)


@pytest.fixture(scope="module")
def harness() -> hw.Harness:
    return hw.load(EXAMPLE / "harness.yaml")


def test_run_py_prints_what_the_readme_shows() -> None:
    found = re.search(r"It prints:\n\n```text\n(.*?)```", README, re.DOTALL)
    assert found is not None, "no ```text block after 'It prints:' in examples/policies/README.md"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py")], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == found.group(1)


def test_a_refund_within_the_group_limit_continues_and_one_above_it_is_blocked(
    harness: hw.Harness,
) -> None:
    allowed, _ = _emit(harness, "alice", "process_refund", amount_cents=50000)
    assert allowed.outcome == hw.Continue()
    above, _ = _emit(harness, "alice", "process_refund", amount_cents=50001)
    assert above.outcome == hw.Block(
        reason="no Cedar policy permits this request", code="cedar:no_permit"
    )
    finance, _ = _emit(harness, "bob", "process_refund", amount_cents=500000)
    assert finance.outcome == hw.Continue()


def test_an_integral_float_is_a_long_and_a_fraction_fails_closed_without_its_value(
    harness: hw.Harness,
) -> None:
    whole, _ = _emit(harness, "alice", "process_refund", amount_cents=12000.0)
    assert whole.outcome == hw.Continue()  # 12000.0 is the Long 12000
    result, records = _emit(harness, "alice", "process_refund", amount_cents=12345.5)
    assert isinstance(result.outcome, hw.Block)
    assert result.outcome.code == "middleware_error"
    (failure,) = [r for r in records if r["kind"] == "failure"]
    assert (failure["middleware"], failure["error"]) == ("tool_policy", "CedarRequestError")
    assert "12345.5" not in json.dumps(records) + result.outcome.reason


def test_forbid_wins_over_a_permit_and_over_an_approval(harness: hw.Harness) -> None:
    suspended, _ = _emit(harness, "mallory", "get_order", order_id="o-1")
    assert suspended.outcome == hw.Block(
        reason="forbidden by Cedar policy suspended-user", code="cedar:suspended-user"
    )
    forced, _ = _emit(harness, "dana", "push_branch", branch="main", force=True)
    assert forced.outcome == hw.Block(
        reason="forbidden by Cedar policy no-force-push", code="cedar:no-force-push"
    )


def test_require_approval_suspends_for_the_annotations_role(harness: hw.Harness) -> None:
    result, _ = _emit(harness, "dana", "push_branch", branch="fix")
    assert result.outcome == hw.Suspend(
        reason="approval required by Cedar policy github-write",
        code="cedar:github-write",
        approver_role="maintainer",
    )


def test_a_run_without_a_user_is_the_anonymous_agent(harness: hw.Harness) -> None:
    lookup, _ = _emit(harness, None, "get_order", order_id="o-1")
    assert lookup.outcome == hw.Continue()  # order-lookup permits any principal
    refund, _ = _emit(harness, None, "process_refund", amount_cents=1)
    assert isinstance(refund.outcome, hw.Block) and refund.outcome.code == "cedar:no_permit"


def test_hooks_lists_the_files_the_item_loads() -> None:
    done = _cli("hooks", "examples/policies/harness.yaml", "--format", "json")
    assert done.returncode == 0, done.stderr
    (chain,) = [h["chain"] for h in json.loads(done.stdout)["hooks"] if h["hook"] == "tool.before"]
    (item,) = chain
    assert (item["use"], item["loads"]) == ("harnessweaver.cedar", FILES)
    text = _cli("hooks", "examples/policies/harness.yaml")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if "harnessweaver.cedar" in line)
    assert lines[row + 1] == "     loads: " + ", ".join(FILES)


def test_a_bad_policy_is_refused_at_load_naming_its_file_and_line(tmp_path: Path) -> None:
    copy = tmp_path / "policies"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    mcp = copy / "policies" / "mcp.cedar"
    lines = mcp.read_text(encoding="utf-8").splitlines()
    line = len(lines) + 2
    mcp.write_text("\n".join([*lines, "", "permit (principal, action, resourc);", ""]))
    with pytest.raises(hw.SpecError) as refused:
        hw.load(copy / "harness.yaml")
    message = str(refused.value)
    assert f"policies/mcp.cedar:{line}: " in message and "(I38)" in message


def test_a_policy_the_schema_rejects_is_refused_at_load(tmp_path: Path) -> None:
    copy = tmp_path / "policies"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    refunds = copy / "policies" / "refunds.cedar"
    text = refunds.read_text(encoding="utf-8")
    lines = text.splitlines()
    line = len(lines) + 2  # the statement's first line: its annotation
    # amount_cents is a Long in tools.cedarschema: comparing it with a string is a type error
    bad = (
        '@id("typo")\npermit (principal, action, resource)\n'
        'when { context.arguments.amount_cents == "10" };\n'
    )
    refunds.write_text(text + "\n" + bad, encoding="utf-8")
    with pytest.raises(hw.SpecError) as refused:
        hw.load(copy / "harness.yaml")
    assert f"policies/refunds.cedar:{line}: " in str(refused.value)


def _blocks(lang: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def test_every_cedar_block_of_the_page_parses() -> None:
    blocks = _blocks("cedar")
    assert len(blocks) >= 3  # the two examples' policies, and a forbid
    for block in blocks:
        cedarpy.PolicySet.from_str(block)  # raises ValueError, naming the problem


def test_the_cedar_blocks_of_the_examples_validate_against_the_examples_schema() -> None:
    schema = (EXAMPLE / "tools.cedarschema").read_text(encoding="utf-8")
    for block in _blocks("cedar"):
        if 'Server::"github"' in block or "process_refund" in block:
            result = cedarpy.validate_policies(block, schema)
            assert result.validation_passed, [str(e) for e in result.errors]


def test_the_pages_copy_of_the_harness_yaml_is_the_examples() -> None:
    spec = (EXAMPLE / "harness.yaml").read_text(encoding="utf-8")
    assert any(block == spec for block in _blocks("yaml"))


def test_the_pages_request_is_the_one_the_mapping_builds() -> None:
    from harnessweaver.policies.request import cedar_request

    shown = re.search(
        r"is this request:\n\n```json\n(.*?)^```", PAGE.read_text("utf-8"), re.S | re.M
    )
    assert shown is not None, "no ```json block after 'is this request:' in docs/policies.md"
    arguments = {"order_id": "o-1042", "amount_cents": 12000}
    call = hw.ToolCall(id="c", name="process_refund", arguments=arguments)
    event = hw.ToolCallEvent(step=3, tool=hw.ToolSpec(name="process_refund"), call=call)
    built = cedar_request("tool.before", event, {"user": "alice"}, None)
    assert json.loads(json.dumps(built)) == json.loads(shown.group(1))


def test_the_pages_authzen_request_is_the_one_the_mapping_builds() -> None:
    authzen = pytest.importorskip("harnessweaver.policies.authzen")
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```json\n(.*?)^```", page, re.S | re.M)
    (shown,) = [json.loads(b) for b in blocks if '"subject"' in b]
    arguments = {"order_id": "o-1042", "amount_cents": 12000}
    call = hw.ToolCall(id="c", name="process_refund", arguments=arguments)
    event = hw.ToolCallEvent(step=3, tool=hw.ToolSpec(name="process_refund"), call=call)
    built = authzen.authzen_request("tool.before", event, {"user": "alice"})
    assert json.loads(json.dumps(built)) == shown
