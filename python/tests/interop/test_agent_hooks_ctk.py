"""The AGENT-HOOKS Conformance Test Kit (``agent_hooks.ctk``, from ``agent-hooks-sdk[ctk]``)
against harnessweaver's own run loop and host (``HarnessweaverHarness``), one test per vector
of the kit: every vector of the declared surface passes; the others are skipped by the kit
itself, naming the capability (docs/interop-agent-hooks.md says why each is undeclared).
``nox -s interop`` runs the same kit through its own pytest plugin."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

ctk = pytest.importorskip("agent_hooks.ctk")

from agent_hooks.ctk.runner import load_vectors, run_vector  # noqa: E402

from harnessweaver.interop.agent_hooks.ctk import HarnessweaverHarness  # noqa: E402

VECTORS = load_vectors(None)
UNDECLARED = {"host_declaration", "incremental_output"}


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_the_vector(vector: dict[str, Any]) -> None:
    result = asyncio.run(run_vector(HarnessweaverHarness(), vector))
    if result.status == "skip":
        assert set(vector.get("capabilities", ())) & UNDECLARED, result.detail
        pytest.skip(result.detail)
    assert result.status == "pass", "\n".join(result.failures)


def test_the_kit_is_the_one_the_count_was_made_with() -> None:
    """47 vectors apply to the declared surface (75 in all): a new kit release that changes
    that is read before the count in the docs is believed."""
    declared = {c.value for c in HarnessweaverHarness().capabilities}
    applying = [v for v in VECTORS if set(v.get("capabilities", ())) <= declared]
    assert (len(VECTORS), len(applying)) == (75, 47)
