"""What the proxy does with each outcome, in both protocol revisions (docs/integrations/mcp.md).

Each test runs the SDK's client against the proxy's server fronting an SDK upstream, in
process (``inproc.py``), and checks what the client received and what the upstream was asked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from inproc import approve, decline, proxied, records, spec_file, upstream_server
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

from harnessweaver.mcp.approval import APPROVAL
from harnessweaver.mcp.convert import META_KEY

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28, 2025-11-25


def text(result: Any) -> str:
    return str(result.content[0].text)


@MODES
async def test_a_block_is_an_error_result_and_the_tool_never_runs(
    tmp_path: Path, mode: str
) -> None:
    calls: list[dict[str, Any]] = []
    async with proxied(spec_file(tmp_path), upstream_server(calls), mode=mode) as client:
        result = await client.call_tool("echo", {"text": "rm -rf /"})
    assert result.is_error is True
    assert text(result) == "harnessweaver refused the call: destructive command (code: destructive)"
    assert result.meta is not None
    assert result.meta[META_KEY] == {"outcome": "block", "code": "destructive"}
    assert calls == []


@MODES
async def test_rewritten_arguments_reach_the_upstream(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    async with proxied(spec_file(tmp_path), upstream_server(calls), mode=mode) as client:
        result = await client.call_tool("echo", {"text": "quiet"})
    assert (result.is_error, text(result)) == (False, "echo: QUIET")
    assert calls == [{"tool": "echo", "text": "QUIET"}]


@MODES
async def test_a_redaction_rewrites_text_and_structured_content(tmp_path: Path, mode: str) -> None:
    trace = tmp_path / "trace.jsonl"
    async with proxied(spec_file(tmp_path), upstream_server([]), mode=mode, trace=trace) as client:
        result = await client.call_tool("secret", {})
    assert text(result) == "the key is [redacted]"
    assert result.structured_content == {"result": "the key is [redacted]"}
    hooks = [r for r in records(trace) if r["kind"] == "hook"]
    assert [(r["hook"], r["outcome"], r["modified"]) for r in hooks] == [
        ("tool.before", "continue", False),
        ("tool.after", "continue", True),
    ]
    assert "sk-live1234" not in trace.read_text(encoding="utf-8")


@MODES
async def test_the_trace_says_what_was_refused(tmp_path: Path, mode: str) -> None:
    trace = tmp_path / "trace.jsonl"
    async with proxied(spec_file(tmp_path), upstream_server([]), mode=mode, trace=trace) as client:
        await client.call_tool("echo", {"text": "rm -rf /"})
    hook = [r for r in records(trace) if r["kind"] == "hook"]
    assert [(r["hook"], r["tool"], r["outcome"], r["code"]) for r in hook] == [
        ("tool.before", "echo", "block", "destructive")
    ]


@MODES
async def test_an_approved_suspend_runs_the_call_once(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    server = upstream_server(calls)
    async with proxied(
        spec_file(tmp_path), server, mode=mode, elicitation_callback=approve
    ) as client:
        result = await client.call_tool("echo", {"text": "ask once"})
    assert (result.is_error, text(result)) == (False, "echo: ask once")
    assert calls == [{"tool": "echo", "text": "ask once"}]


@MODES
async def test_a_declined_suspend_is_refused(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    server = upstream_server(calls)
    async with proxied(
        spec_file(tmp_path), server, mode=mode, elicitation_callback=decline
    ) as client:
        result = await client.call_tool("echo", {"text": "ask"})
    assert result.is_error is True
    assert (
        text(result)
        == "harnessweaver refused the call: a person declined the call (code: approval_declined)"
    )
    assert calls == []


@MODES
async def test_a_client_that_cannot_elicit_gets_a_refusal(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    async with proxied(spec_file(tmp_path), upstream_server(calls), mode=mode) as client:
        result = await client.call_tool("echo", {"text": "ask"})
    assert result.is_error is True
    assert text(result).startswith("harnessweaver refused the call: a person must approve; ")
    assert "it declared no elicitation capability" in text(result)
    assert result.meta is not None
    assert result.meta[META_KEY] == {"outcome": "suspend", "code": "needs_approval"}
    assert calls == []


async def test_an_approval_never_applies_to_other_arguments(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    server = upstream_server(calls)
    async with proxied(spec_file(tmp_path), server, elicitation_callback=approve) as client:
        asked = await client.session.call_tool("echo", {"text": "ask 1"}, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult)
        assert asked.input_requests is not None
        assert list(asked.input_requests) == [APPROVAL]
        yes = {APPROVAL: types.ElicitResult(action="accept", content={"approve": True})}
        with pytest.raises(MCPError) as caught:  # the SDK binds the sealed state to the request
            await client.session.call_tool(
                "echo", {"text": "ask 2"}, input_responses=yes, request_state=asked.request_state
            )
        assert caught.value.code == types.INVALID_PARAMS
        assert calls == []
        same = await client.session.call_tool(
            "echo", {"text": "ask 1"}, input_responses=yes, request_state=asked.request_state
        )
    assert isinstance(same, types.CallToolResult)
    assert (same.is_error, text(same)) == (False, "echo: ask 1")
    assert calls == [{"tool": "echo", "text": "ask 1"}]


def test_the_proxy_checks_the_call_identity_itself(tmp_path: Path) -> None:
    """Past the SDK's binding (a state sealed under another harness, or a codec that binds
    nothing), an approval names the harness, tool and arguments it was given for."""
    from harnessweaver.mcp.approval import Approvals
    from harnessweaver.mcp.gate import UNIDENTIFIABLE, Admit, Gate, call_identity
    from harnessweaver.spec import load

    gate = Gate(load(spec_file(tmp_path)))
    approvals = Approvals(gate)
    yes = {APPROVAL: {"action": "accept", "content": {"approve": True}}}
    granted = call_identity(gate.key, "echo", {"text": "ask 1"})

    def retry(arguments: dict[str, Any], identity: str) -> Any:
        state = json.dumps({"identity": identity, "arguments": arguments})
        params = types.CallToolRequestParams.model_validate(
            {"name": "echo", "arguments": arguments, "inputResponses": yes, "requestState": state}
        )
        return approvals.resumed(params, None, 1)

    assert isinstance(retry({"text": "ask 1"}, granted), Admit)
    for refused in (retry({"text": "ask 2"}, granted), retry({"text": "ask 1"}, "sha256:00")):
        assert isinstance(refused, types.CallToolResult)
        assert "(code: approval_mismatch)" in text(refused)
    other_harness = call_identity("sha256:another", "echo", {"text": "ask 1"})
    assert other_harness != granted
    # Outside I-JSON every call has the same identity: an approval naming it never applies.
    huge = {"text": "ask", "n": 2**60}
    assert call_identity(gate.key, "echo", huge) == UNIDENTIFIABLE
    refused = retry(huge, UNIDENTIFIABLE)
    assert isinstance(refused, types.CallToolResult)
    assert "(code: approval_mismatch)" in text(refused)


async def test_a_forged_request_state_is_refused_by_the_sdk(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    async with proxied(spec_file(tmp_path), upstream_server(calls)) as client:
        forged = '{"identity":"x","arguments":{"text":"rm -rf /"},"upstream":null}'
        yes = {APPROVAL: types.ElicitResult(action="accept", content={"approve": True})}
        with pytest.raises(MCPError) as caught:
            await client.session.call_tool(
                "echo", {"text": "ask"}, input_responses=yes, request_state=forged
            )
    assert caught.value.code == types.INVALID_PARAMS
    assert calls == []


@MODES
async def test_retry_asks_again_within_the_bound_then_refuses(tmp_path: Path, mode: str) -> None:
    trace = tmp_path / "trace.jsonl"
    calls: list[dict[str, Any]] = []
    async with proxied(
        spec_file(tmp_path), upstream_server(calls), mode=mode, trace=trace
    ) as client:
        result = await client.call_tool("echo", {"text": "retry"})
    assert result.is_error is True
    assert text(result) == "harnessweaver refused the call: try again (code: retry_exhausted)"
    asked = [r for r in records(trace) if r["kind"] == "hook" and r["hook"] == "tool.before"]
    assert len(asked) == 3  # the first ask and the harness's default bound of 2 retries
    assert calls == []


ALLOW = "  - {use: harnessweaver.tool_allowlist, id: allow, allow: [echo, secret]}\n"


@MODES
async def test_tools_refused_by_name_are_not_listed(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    spec = spec_file(tmp_path, ALLOW)
    async with proxied(spec, upstream_server(calls), mode=mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("shell", {"command": "ls"})
    assert listed == ["echo", "secret"]
    assert result.is_error is True
    assert "(code: tool_not_allowed)" in text(result)
    assert calls == []


DENY = "  - {use: harnessweaver.tool_denylist, id: deny, deny: [shell]}\n"


@MODES
async def test_tools_a_denylist_names_are_not_listed(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    async with proxied(spec_file(tmp_path, DENY), upstream_server(calls), mode=mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("shell", {"command": "ls"})
    assert listed == ["echo", "secret"]
    assert result.is_error is True
    assert "(code: tool_denied)" in text(result)
    assert calls == []


async def test_an_audited_denylist_hides_nothing(tmp_path: Path) -> None:
    spec = spec_file(tmp_path, DENY.replace("}", ", mode: audit}"))
    async with proxied(spec, upstream_server([])) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
    assert listed == ["echo", "secret", "shell"]


async def test_an_audited_allowlist_hides_nothing(tmp_path: Path) -> None:
    spec = spec_file(tmp_path, ALLOW.replace("}", ", mode: audit}"))
    calls: list[dict[str, Any]] = []
    async with proxied(spec, upstream_server(calls)) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("shell", {"command": "ls"})
    assert listed == ["echo", "secret", "shell"]
    assert result.is_error is False
    assert calls == [{"tool": "shell", "command": "ls"}]


async def test_an_allowlist_matched_to_other_tools_hides_nothing(tmp_path: Path) -> None:
    spec = spec_file(tmp_path, ALLOW.replace("}", ", match: {tool: [sec*]}}"))
    async with proxied(spec, upstream_server([])) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
    assert listed == ["echo", "secret", "shell"]


REFUSE_START = """\
  - {use: t.no_session, id: no_session}
"""


async def test_a_refused_task_start_refuses_every_call(tmp_path: Path) -> None:
    more = (
        "@hw.middleware(hooks=['task.start'], fail_mode='closed')\n"
        "async def no_session(event, env):\n"
        "    return hw.Block(reason='sessions are closed today', code='closed_today')\n"
        "MIDDLEWARE = [policy, redact, no_session]\n"
    )
    spec = spec_file(tmp_path, REFUSE_START, more=more)
    calls: list[dict[str, Any]] = []
    async with proxied(spec, upstream_server(calls)) as client:
        first = await client.call_tool("echo", {"text": "hi"})
        second = await client.call_tool("echo", {"text": "hi"})
    for result in (first, second):
        assert result.is_error is True
        assert text(result) == (
            "harnessweaver refused the call: sessions are closed today (code: closed_today)"
        )
    assert calls == []


@MODES
async def test_a_cancelled_call_cancels_the_upstream_call(tmp_path: Path, mode: str) -> None:
    import anyio
    from mcp.server.mcpserver import MCPServer

    started, cancelled = anyio.Event(), anyio.Event()
    server = MCPServer("slow")

    @server.tool()
    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with proxied(spec_file(tmp_path), server, mode=mode) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "wait", {})
            with anyio.fail_after(30):  # a bound on a hang, not a measurement
                await started.wait()
            group.cancel_scope.cancel()
        with anyio.fail_after(30):
            await cancelled.wait()
    assert cancelled.is_set()


async def test_a_changed_tool_list_is_passed_on_and_listed_again(tmp_path: Path) -> None:
    server = MCPServer("growing")

    def grown() -> str:
        """A tool added while serving."""
        return "grown"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool, and say so."""
        server.add_tool(grown)
        await ctx.session.send_tool_list_changed()
        return "added"

    heard: list[Any] = []

    async def message_handler(message: Any) -> None:
        heard.append(message)

    spec = spec_file(
        tmp_path, "  - {use: harnessweaver.tool_allowlist, id: a, allow: [grow, grown]}\n"
    )
    async with proxied(spec, server, mode="legacy", message_handler=message_handler) as client:
        before = [tool.name for tool in (await client.list_tools()).tools]
        await client.call_tool("grow", {})
        after = [tool.name for tool in (await client.list_tools()).tools]
    assert before == ["grow"]
    assert after == ["grow", "grown"]
    assert any(isinstance(m, types.ToolListChangedNotification) for m in heard)


async def test_a_session_carries_its_session_and_the_environments_user_and_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards of scope session, user and app need those attributes (docs/state.md): the MCP
    session is the session, user and app come from the proxy's environment."""
    from harnessweaver.mcp.gate import Gate
    from harnessweaver.spec import load

    monkeypatch.setenv("HARNESSWEAVER_USER", "alice")
    monkeypatch.delenv("HARNESSWEAVER_APP", raising=False)
    gate = Gate(load(spec_file(tmp_path)))
    run = await gate.open("session-1")
    assert dict(run.ctx.envelope.attributes) == {"session": "session-1", "user": "alice"}
