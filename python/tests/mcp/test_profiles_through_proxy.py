"""Every built-in profile (``python/harnessweaver/profiles/``) through the proxy (issue 29,
"Proof"): a spec that uses it loads in ``harnessweaver mcp``, and the same tool calls get the
decisions and trace records the bus gives in process (run ids and times aside, as in
``test_same_decisions``), and the decision that profile exists for."""

from __future__ import annotations

from pathlib import Path

import pytest
from decisions import Call, Decision, normalised, output, through_bus, through_proxy
from mcp import Client
from proxy_procs import asyncio_only, proxy_stdio, records

import harnessweaver

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return asyncio_only()


SECRET = "sk-live0123456789abcdef"
PROFILES = sorted(
    path.stem for path in (Path(harnessweaver.__file__).parent / "profiles").glob("*.yaml")
)

CALLS = (
    Call("search", {"query": f"token {SECRET}"}),
    Call("whois", {"name": "ada"}),
    *[Call("echo", {"text": "again"})] * 5,
    *[Call("fail", {})] * 4,
)

_SECRET_GONE = ("modify", {"query": "token [redacted]"})
_WHOIS = ("modify", output("Ada Lovelace <[redacted:email]>, [redacted:phone]"))
SIGNATURE: dict[str, dict[int, tuple[Decision, Decision | None]]] = {
    # the loop guard refuses the fifth repeat; the failure guard the fourth failing call
    "agent-guards": {
        1: (("continue",), _WHOIS),
        6: (
            (
                "block",
                "echo was called with the same arguments 5 times within the last 20 tool "
                "calls; try something else",
                "loop_detected",
            ),
            None,
        ),
        10: (
            (
                "block",
                "tool 'fail' failed 3 times in a row; it is not called again in this run",
                "tool_failing",
            ),
            None,
        ),
    },
    "rag": {0: (_SECRET_GONE, ("continue",))},
    "safe-tools": {
        0: (_SECRET_GONE, ("continue",)),
        1: (("block", "tool 'whois' is not allowed", "tool_not_allowed"), None),
    },
}
"""Per profile, the decisions (by call index) that show it at work."""

LISTED = {"safe-tools": {"search"}}
"""The tools a profile leaves in ``tools/list`` (the others: all of them)."""


def test_every_built_in_profile_is_covered() -> None:
    assert sorted(SIGNATURE) == PROFILES


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_profile_decides_through_the_proxy_as_in_process(
    profile: str, tmp_path: Path
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text(f"profiles:\n  - profile://{profile}\n")
    record, trace = tmp_path / "upstream.jsonl", tmp_path / "trace.jsonl"
    async with Client(proxy_stdio(spec, record=record, trace=trace)) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        decisions = await through_proxy(client, record, CALLS)
    expected, bus_trace = await through_bus(spec, CALLS)
    for index, decision in SIGNATURE[profile].items():
        assert expected[index] == decision, (profile, index)
    assert decisions == expected
    assert normalised(records(trace)) == normalised(bus_trace)
    if profile in LISTED:
        assert listed == LISTED[profile]
    else:
        assert {"echo", "search", "whois", "fail"} <= listed
