"""examples/langchain runs offline with one command and shows, in the real LangChain, a
blocked call, a suspended call resumed and a rewritten call, with the bus's trace."""

from __future__ import annotations

import pytest
from checkout import run_example

pytest.importorskip("langchain")


def test_the_example_blocks_suspends_resumes_and_rewrites() -> None:
    out = run_example("langchain", "run.py")
    assert "suspended: refunds over 1000 USD need approval (for finance)" in out
    assert "run_shell: The harness refused this tool call: shell commands are not allowed" in out
    assert "refund_payment: refunded 100.0 USD for order 42" in out  # rewritten from 250
    assert "refund_payment: refunded 1500.0 USD for order 7" in out  # approved on resume
    assert "tools that ran: ['refund 42 100.0', 'refund 7 1500.0']" in out  # no shell
    assert "support-1042 tool.before  step 1  run_shell       block" in out
    assert "support-1042 tool.before  step 2  refund_payment  continue (modified)" in out
    assert "support-1042 tool.before  step 3  refund_payment  suspend" in out
    assert out.count("tool.before  step 3") == 1  # the chain was not asked again on resume
    assert out.count(" task.end ") == 2  # the paused segment's end, then the run's
    assert "answer: Refunds done; the shell command was refused." in out
