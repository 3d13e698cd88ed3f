"""examples/agent_hooks runs offline with one command: the same AGENT-HOOKS policy suspends a
harnessweaver run as middleware and is lifted by its own resolver in an AGENT-HOOKS host; a
harness.yaml answers as one interceptor of the SDK's own host."""

from __future__ import annotations

import pytest
from checkout import run_example

pytest.importorskip("agent_hooks")


def test_the_example_suspends_caps_warns_and_is_approved_both_ways() -> None:
    out = run_example("agent_hooks", "run.py")
    assert "  suspended: over 1000 needs finance\n" in out
    assert "warning from refund_policy at tool.before: refunds:audited: refunds are audited" in out
    ran = "['refund 1 80.0', 'refund 2 500.0', 'refund 3 1500.0']"  # order 2 capped at 500
    assert f"  resumed: completed; tools that ran: {ran}" in out
    assert "finance asked about pre_tool_call: approved" in out
    assert f"  completed: Refunds handled.; tools that ran: {ran}" in out
    assert (
        "  record: pre_tool_call allow (resolved by None)\n"
        "  record: pre_tool_call transform (resolved by None)\n"
        "  record: pre_tool_call allow (resolved by approval)\n"
    ) in out
    assert out.endswith("  refund: allow\n  run_shell: deny tool_not_allowed\n")
