"""One decision everywhere (issue 29, "Proof"): the same tool calls, judged by one spec
(``support/same.yaml``) through

(a) the proxy: the SDK's ``Client`` -> ``harnessweaver mcp`` -> the SDK upstream of
    ``mcp_servers``, over stdio and over Streamable HTTP;
(b) the bus in process: ``harnessweaver.spec.load`` and ``bus.emit`` with the events the
    proxy emits (``harnessweaver.mcp.convert``'s shapes: the tool as listed, the call's
    arguments, the result's ``{"content": [...]}``);
(c) the hook command: ``harnessweaver hook --agent claude-code`` with Claude Code's
    ``PreToolUse`` / ``PostToolUse`` documents, one process per event, state in SQLite,

give the one expected decision for each call (:data:`EXPECTED`) and the same trace records.

What differs by nature, and is normalised (nothing else is):

- ``run``: the run id (the MCP session's, ours, the agent's session id); each path must keep
  one run id for the whole sequence, which is checked;
- ``t_ns`` and ``duration_ns``: times;
- the hook command's ``emit`` ordinals: each of its processes emits once, so every event's
  records say ``emit: 1`` (``hookcmd/trace.py``); they are numbered by event, in order.

The proxy numbers steps by tool call (``step`` = the session's call count, refused calls
included); Claude Code's step is its turn, so the hook command gets a ``UserPromptSubmit``
before each call to make the steps of its events the proxy's. Those ``step.start`` emits are
not tool events: their records are left out of (c)'s trace (the spec has no middleware there,
so they are hook records alone).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_servers
import pytest
from decisions import Call, Decision, Decisions, normalised, output, through_bus, through_proxy
from mcp import Client
from proxy_procs import (
    SUPPORT,
    asyncio_only,
    child_env,
    http_proxy,
    http_upstream,
    proxy_stdio,
    records,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return asyncio_only()


SAME = SUPPORT / "same.yaml"
SECRET = "sk-live0123456789abcdef"


CALLS = (
    Call("search", {"query": "weather", "limit": 50}),  # rewritten: limit capped at 10
    Call("search", {"query": f"token {SECRET}"}),  # rewritten: the secret redacted
    Call("shell", {"command": "rm -rf /tmp/data"}),  # refused by its arguments
    Call("write_note", {"text": "hello"}),  # refused by the allowlist
    Call("whois", {"name": "ada"}),  # its result redacted at tool.after
    Call("echo", {"text": "again"}),
    Call("echo", {"text": "again"}),
    Call("echo", {"text": "again"}),  # the third repeat: refused by the loop guard
    Call("shell", {"command": "ls"}),  # allowed, unchanged
)

REDACTED_WHOIS = "Ada Lovelace <[redacted:email]>, [redacted:phone]"
LOOP = "echo was called with the same arguments 3 times within the last 20 tool calls; try something else"  # noqa: E501

EXPECTED: Decisions = [
    (("modify", {"query": "weather", "limit": 10}), ("continue",)),
    (("modify", {"query": "token [redacted]"}), ("continue",)),
    (("block", "recursive removal is not allowed", "dangerous_command"), None),
    (("block", "tool 'write_note' is not allowed", "tool_not_allowed"), None),
    (("continue",), ("modify", {"content": [{"type": "text", "text": REDACTED_WHOIS}]})),
    (("continue",), ("continue",)),
    (("continue",), ("continue",)),
    (("block", LOOP, "loop_detected"), None),
    (("continue",), ("continue",)),
]
"""Per call: the ``tool.before`` decision, then the ``tool.after`` one (``None``: the call
was refused, so the upstream was never called and there is no result)."""


async def _drive(client: Client, record: Path) -> Decisions:
    listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "write_note" not in listed and {"echo", "search", "shell", "whois"} <= listed
    return await through_proxy(client, record, CALLS)


async def test_the_bus_decides_what_is_expected() -> None:
    decisions, _ = await through_bus(SAME, CALLS)
    assert decisions == EXPECTED


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_proxy_decides_as_the_bus_does(transport: str, tmp_path: Path) -> None:
    record, trace = tmp_path / "upstream.jsonl", tmp_path / "trace.jsonl"
    if transport == "stdio":
        async with Client(proxy_stdio(SAME, record=record, trace=trace)) as client:
            decisions = await _drive(client, record)
    else:
        with (
            http_upstream(tmp_path, record=record) as (upstream, _),
            http_proxy(SAME, upstream, tmp_path, trace=trace) as (url, _),
        ):
            # legacy: the 2025-11-25 handshake gives a session, so the loop guard counts
            # across its calls (stateless 2026-07-28 requests are a run each).
            async with Client(url, mode="legacy") as client:
                decisions = await _drive(client, record)
            # The client's session end (a DELETE) ends the run, while the proxy serves on:
            # its task.end is written then, not only when the proxy stops.
            with anyio.fail_after(60):  # a bound against a hang, never a measure
                while not any(r["hook"] == "task.end" for r in records(trace)):
                    await anyio.sleep(0.05)
    # The stdio proxy ends its run when its client goes (stdin closes).
    assert decisions == EXPECTED
    expected, bus_trace = await through_bus(SAME, CALLS)
    assert decisions == expected
    assert normalised(records(trace)) == normalised(bus_trace)


# -- (c) the hook command -------------------------------------------------------------------

SESSION = "same-decisions-session"


def _doc(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": name,
        **fields,
    }


def _hook(doc: dict[str, Any], state: Path, trace: Path) -> Any:
    argv = [sys.executable, "-m", "harnessweaver.cli", "hook", "--agent", "claude-code"]
    argv += ["--spec", str(SAME), "--state", str(state), "--trace", str(trace)]
    done = subprocess.run(
        argv,
        input=json.dumps(doc).encode(),
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b""), done.stderr.decode()
    return json.loads(done.stdout) if done.stdout.strip() else None


def _pre_decision(answer: Any) -> Decision:
    """The decision of the command's answer to a ``PreToolUse``."""
    if answer is None:
        return ("continue",)
    out = answer["hookSpecificOutput"]
    if out.get("permissionDecision") == "deny":
        reason, _, code = out["permissionDecisionReason"].rpartition(" (")
        return ("block", reason, code.removesuffix(")"))
    return ("modify", out["updatedInput"])


CANNOT = "harnessweaver: the harness rewrote this tool result, which Claude Code cannot apply here"


def through_hook(tmp: Path) -> tuple[Decisions, list[dict[str, Any]]]:
    state, trace = tmp / "state.db", tmp / "hook-trace.jsonl"
    decisions: Decisions = []
    for step, call in enumerate(CALLS, start=1):
        _hook(_doc("UserPromptSubmit", prompt=f"turn {step}"), state, trace)
        use = f"toolu_{step:02d}"
        pre = _doc("PreToolUse", tool_name=call.tool, tool_input=call.arguments, tool_use_id=use)
        first = _pre_decision(_hook(pre, state, trace))
        if first[0] == "block":
            decisions.append((first, None))
            continue
        sent = first[1] if first[0] == "modify" else call.arguments
        response = output(mcp_servers.answer(call.tool, sent))
        post = _doc(
            "PostToolUse", tool_name=call.tool, tool_input=sent, tool_use_id=use,
            tool_response=response,
        )  # fmt: skip
        answer = _hook(post, state, trace)
        # Claude Code cannot take a rewritten result: the command says so and withholds it;
        # what the rewrite was is in the trace (the redactor's record says modified).
        if answer is None:
            decisions.append((first, ("continue",)))
        else:
            assert answer["decision"] == "block" and answer["reason"].startswith(CANNOT)
            decisions.append((first, ("modify", "withheld")))
    _hook(_doc("SessionEnd", reason="prompt_input_exit"), state, trace)
    lines = records(trace)
    assert {r["run"] for r in lines} == {SESSION}
    return decisions, _renumbered([line for line in lines if line["hook"] != "step.start"])


def _renumbered(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each emit's records (ending at its hook record) numbered 1, 2, ... in order."""
    out, emit = [], 1
    for line in lines:
        assert line["emit"] == 1, "each hook process emits once"
        out.append({**line, "emit": emit})
        emit += line["kind"] == "hook"
    return out


def _without_outputs(decisions: Decisions) -> list[Any]:
    """The decisions with what ``tool.after`` rewrote left out (the hook cannot show it)."""
    return [
        (first, None if second is None else second[:1] if second[0] == "modify" else second)
        for first, second in decisions
    ]


async def test_the_hook_command_decides_as_the_bus_does(tmp_path: Path) -> None:
    decisions, trace = through_hook(tmp_path)
    expected, bus_trace = await through_bus(SAME, CALLS)
    assert _without_outputs(decisions) == _without_outputs(EXPECTED)
    assert _without_outputs(decisions) == _without_outputs(expected)
    assert normalised(trace) == normalised(bus_trace)
