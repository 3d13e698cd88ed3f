"""Hostile peers (issue 29): a malformed message from the client, an upstream that crashes
mid-call or hangs, a 50 MiB result, tool names with odd characters. Each gives a clear error
to the client concerned (or, for odd names and big results, the right answer), and the proxy
keeps serving: over stdio the next request works, over HTTP another session does.

The upstream is :mod:`mcp_servers`; the spec (``support/plain.yaml``) a loop guard, so that
every call leaves trace records. Bounds on waiting (``HANG_GUARD``) only keep a broken proxy
from hanging the suite: no test asserts a time.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_servers
import pytest
from decisions import Call, through_bus, through_proxy
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from proxy_procs import (
    SUPPORT,
    asyncio_only,
    child_env,
    http_proxy,
    http_upstream,
    proxy_command,
    proxy_stdio,
    records,
    restarting_http_upstream,
    rss_kib,
    stop,
    wait_listening,
)

import harnessweaver as hw

pytestmark = pytest.mark.anyio

PLAIN = SUPPORT / "plain.yaml"
HANG_GUARD = 120.0
MIB = 1 << 20


@pytest.fixture
def anyio_backend() -> str:
    return asyncio_only()


def echo_answer(text: str) -> str:
    return mcp_servers.answer("echo", {"text": text})


async def echoes(client: Client, text: str) -> None:
    """The client's session works: a call goes through and gets the upstream's answer."""
    with anyio.fail_after(HANG_GUARD):
        result = await client.call_tool("echo", {"text": text})
    assert not result.is_error
    assert [c.text for c in result.content if c.type == "text"] == [echo_answer(text)]


# -- a malformed message from the client ----------------------------------------------------


class RawStdio:
    """The proxy over stdio, spoken to line by line (the only way to send it a malformed
    line: the SDK's client never writes one)."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=child_env(),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def close(self) -> None:
        stop(self.process)
        self.reader.join(HANG_GUARD)  # the process is gone: its stdout is at its end
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def until(self, ident: int) -> list[dict[str, Any]]:
        """Every message the proxy writes up to the answer to request ``ident``."""
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1].get("id") != ident:
            try:
                seen.append(json.loads(self.lines.get(timeout=HANG_GUARD)))
            except queue.Empty:
                raise AssertionError(f"no answer to request {ident}; got {seen}") from None
        return seen

    def initialize(self) -> None:
        self.send({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        })  # fmt: skip
        assert "result" in self.until(1)[-1]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, ident: int, name: str, arguments: dict[str, Any]) -> None:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})


@contextmanager
def raw_proxy() -> Iterator[RawStdio]:
    raw = RawStdio(proxy_command(PLAIN, upstream=mcp_servers.command()))
    try:
        raw.initialize()
        yield raw
    finally:
        raw.close()


MALFORMED = {
    "not JSON": (b"{not json\n", None, -32700),
    "not UTF-8": (b"\xff\xfe{}\n", None, -32700),
    "not a message": (b"[1, 2, 3]\n", None, -32600),
    "a request whose method is no string": (b'{"jsonrpc":"2.0","id":7,"method":42}\n', 7, -32600),
}
"""The line, the id its error answer must carry (JSON-RPC 2.0: ``null`` when the id cannot be
read) and the JSON-RPC error code (parse error, invalid request)."""


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_line_on_stdio_gets_an_error_and_the_next_request_works(case: str) -> None:
    line, ident, code = MALFORMED[case]
    with raw_proxy() as raw:
        raw.send(line)
        raw.call(2, "echo", {"text": "after"})
        answers = raw.until(2)
        errors = [a for a in answers if "error" in a]
        assert [(a["id"], a["error"]["code"]) for a in errors] == [(ident, code)], answers
        [text] = [c["text"] for c in answers[-1]["result"]["content"]]
        assert text == echo_answer("after")


HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe{}", -32700),
        (b'{"jsonrpc":"2.0","id":7,"method":42}', None),
    ],
)
async def test_a_malformed_body_over_http_gets_an_error_and_others_are_served(
    body: bytes, code: int | None, tmp_path: Path
) -> None:
    with (
        http_upstream(tmp_path) as (upstream, _),
        http_proxy(PLAIN, upstream, tmp_path) as (url, _),
    ):
        async with httpx.AsyncClient() as http:
            answer = await http.post(url, content=body, headers=HEADERS)
        assert answer.status_code == 400
        error = answer.json()
        assert error["jsonrpc"] == "2.0" and error["id"] is None
        # An invalid request's code is the SDK's (-32602 today; JSON-RPC says -32600): any
        # JSON-RPC error code says it; a parse error's is -32700.
        assert error["error"]["code"] == code if code is not None else error["error"]["code"] < 0
        async with Client(url, mode="legacy") as client:
            await echoes(client, "after")


# -- an upstream that crashes mid-call -------------------------------------------------------


def _says_upstream(error: MCPError) -> None:
    """A clear error: it says the upstream failed (not the client's own connection)."""
    assert "upstream" in error.error.message.lower(), error.error.message


async def test_an_upstream_crash_mid_call_over_stdio_is_a_clear_error(tmp_path: Path) -> None:
    """The upstream is the proxy's child: the call it died in gets a clear error at once
    (never a hang), and the next call is served by a new one (the proxy starts it again)."""
    async with Client(proxy_stdio(PLAIN)) as client:
        await echoes(client, "before")
        with anyio.fail_after(HANG_GUARD), pytest.raises(MCPError) as caught:
            await client.call_tool("crash", {})
        _says_upstream(caught.value)
        with anyio.fail_after(HANG_GUARD):
            await echoes(client, "after")


async def _crash_over_http(tmp_path: Path, *, restarted: bool) -> None:
    """The upstream dies mid-call and is started again (as a service manager would): the
    session that called gets a clear error; a new session is served by the new upstream."""
    with (
        restarting_http_upstream(tmp_path) as (upstream, started),
        http_proxy(PLAIN, upstream, tmp_path) as (url, _),
    ):
        async with Client(url, mode="legacy") as client:
            await echoes(client, "before")
            with anyio.fail_after(HANG_GUARD), pytest.raises(MCPError) as caught:
                await client.call_tool("crash", {})
            if not restarted:
                _says_upstream(caught.value)
                return
        with anyio.fail_after(HANG_GUARD):
            while len(started) < 2:
                await anyio.sleep(0.05)
        port = int(upstream.rsplit(":", 1)[1].split("/")[0])
        wait_listening(port, started[-1], [upstream], tmp_path)
        async with Client(url, mode="legacy") as other:
            await echoes(other, "after")


async def test_an_upstream_crash_mid_call_over_http_is_a_clear_error(tmp_path: Path) -> None:
    await _crash_over_http(tmp_path, restarted=False)


async def test_after_an_http_upstream_crash_other_sessions_are_served(tmp_path: Path) -> None:
    await _crash_over_http(tmp_path, restarted=True)


# -- a hang: the upstream's, or a middleware's ---------------------------------------------

TIMEOUT = ("--call-timeout", "1")
TIMED_OUT = "harnessweaver refused the call: the tool did not answer within 1.0 s"


async def _hangs(client: Client) -> None:
    with anyio.fail_after(HANG_GUARD):
        result = await client.call_tool("hang", {})
    assert result.is_error
    [text] = [c.text for c in result.content if c.type == "text"]
    assert text == f"{TIMED_OUT} (code: upstream_timeout)"


async def test_a_hanging_upstream_is_refused_at_the_call_timeout_over_stdio() -> None:
    async with Client(proxy_stdio(PLAIN, more=TIMEOUT)) as client:
        await _hangs(client)
        await echoes(client, "after")


async def test_a_hanging_upstream_is_refused_at_the_call_timeout_over_http(
    tmp_path: Path,
) -> None:
    with (
        http_upstream(tmp_path) as (upstream, _),
        http_proxy(PLAIN, upstream, tmp_path, more=TIMEOUT) as (url, _),
    ):
        async with Client(url, mode="legacy") as client:
            await _hangs(client)
            await echoes(client, "same session")
        async with Client(url, mode="legacy") as other:
            await echoes(other, "other session")


STALLS = {
    # the item's own timeout, closed: the call is refused (middleware_timeout)
    "timeout, closed": ("  - {use: stall.stall, id: stall, timeout: 300ms}\n", "", "block"),
    # the item's own timeout, open: recorded, and the call goes on
    "timeout, open": (
        "  - {use: stall.stall, id: stall, timeout: 300ms, fail_mode: open}\n", "", "continue",
    ),
    # the spec's chain deadline, the middleware closed: refused (chain_deadline)
    "deadline": (
        "  - {use: stall.stall, id: stall}\n", "deadlines: {tool.before: 300ms}\n", "block",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(STALLS))
async def test_a_stalling_middleware_fails_the_call_as_its_fail_mode_says(
    case: str, tmp_path: Path
) -> None:
    item, deadlines, kind = STALLS[case]
    spec = tmp_path / "harness.yaml"
    plugin = (SUPPORT / "stall_plugin.py").read_text()
    (tmp_path / "stall_plugin.py").write_text(plugin)
    spec.write_text(f'plugins: {{local: ["stall_plugin"]}}\n{deadlines}middleware:\n{item}')
    calls = (Call("echo", {"text": "stall"}), Call("echo", {"text": "fine"}))
    record, trace = tmp_path / "upstream.jsonl", tmp_path / "trace.jsonl"
    async with Client(proxy_stdio(spec, record=record, trace=trace)) as client:
        with anyio.fail_after(HANG_GUARD):
            decisions = await through_proxy(client, record, calls)
    expected, _ = await through_bus(spec, calls)
    assert decisions == expected
    assert [d[0][0] for d in decisions] == [kind, "continue"]
    failures = [r for r in records(trace) if r["kind"] == "failure"]
    assert [(r["failure"], r["tool"]) for r in failures] == [
        ("deadline" if case == "deadline" else "timeout", "echo")
    ]


# -- a 50 MiB result -------------------------------------------------------------------------


def _proxy_pid() -> int:
    """The proxy this test process started through the SDK's stdio client (its child)."""
    mine = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"harnessweaver.cli" in argv and b"mcp" in argv:
            mine.append(int(entry.name))
    [pid] = mine
    return pid


PEAK_COPIES = 10
"""A generous bound on the proxy's peak resident growth while it relays one 50 MiB result:
decoding, the bus's event, encoding each take a transient copy (measured: 5 to 7)."""

HELD_COPIES = 0.5
"""What may stay resident once the proxy has answered the next call, above what it held
before the first (measured: at most a fiftieth of a copy, over HTTP and stdio). A copy kept
fails, as does a leak of more than a sixteenth of a copy per call over ``BIG_CALLS``."""

BIG_CALLS = 8
"""Calls of ``big`` in one HTTP session, each held to ``HELD_COPIES`` above the start: what
one call leaves behind adds up over eight."""

EXACT_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(64 * 1024)}
"""The proxy's allocator (glibc's) gives every block of 64 KiB or more back when it is freed.
By default the threshold for that starts at 128 KiB and rises with the blocks freed, up to
32 MiB, and the heap keeps what a large message's pieces freed: the resident size wandered
by as much as two thirds of a copy from one call to the next, and stood four copies above
the start right after a call (seen here on 2026-12-07, with other work beside the test as in
CI). At 1 MiB it still stepped up by two thirds of a copy once in a few runs (blocks of
64 KiB to 1 MiB). At 64 KiB the resident size is what the proxy holds, to a fiftieth of a
copy, so a copy kept shows."""


@pytest.fixture
def exact_malloc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes this test starts run with ``EXACT_MALLOC``: the proxy, which is measured,
    and the upstream, which is not."""
    for name, value in EXACT_MALLOC.items():
        monkeypatch.setenv(name, value)


async def _big(client: Client, pid: int, call: int = 0) -> tuple[int, int]:
    """Relays one 50 MiB result; the proxy's (resident, peak) KiB once it has answered the
    next call, a small one: before that it may still be writing the result, and what it
    frees then is not held. ``call`` goes in the arguments (the upstream ignores it), so that
    the loop guard of ``plain.yaml`` sees distinct calls and lets as many through as a test
    makes."""
    with anyio.fail_after(600):  # the SDK's stdio reader takes about 30 s for one such line
        result = await client.call_tool("big", {"call": call})
    assert not result.is_error
    [content] = result.content
    assert content.type == "text" and len(content.text) == mcp_servers.BIG_MIB * MIB
    assert content.text == "x" * len(content.text)
    await echoes(client, f"after big {call}")
    return rss_kib(pid)


def _bounded(base: int, after: list[tuple[int, int]]) -> None:
    copy = mcp_servers.BIG_MIB * 1024  # KiB
    for resident, peak in after:
        assert peak - base <= PEAK_COPIES * copy, (base, after)
        assert resident - base <= HELD_COPIES * copy, (base, after)


@pytest.mark.usefixtures("exact_malloc")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_50_mib_result_is_relayed_in_bounded_memory_over_http(
    mode: str, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    with (
        http_upstream(tmp_path) as (upstream, _),
        http_proxy(PLAIN, upstream, tmp_path, trace=trace) as (url, proxy),
    ):
        # The SDK's HTTP client refuses SSE events over 1 MiB by default: this client takes
        # any, so what is bounded is the proxy, not the client.
        transport = streamable_http_client(url, max_sse_event_size=None)
        async with Client(transport, mode=mode) as client:
            await echoes(client, "before")
            base, _ = rss_kib(proxy.pid)
            after = [await _big(client, proxy.pid, call) for call in range(BIG_CALLS)]
        async with Client(url, mode="legacy") as other:
            await echoes(other, "other session")
    _bounded(base, after)
    assert trace.stat().st_size < MIB  # the trace holds no content


@pytest.mark.usefixtures("exact_malloc")
async def test_a_50_mib_result_is_relayed_in_bounded_memory_over_stdio(tmp_path: Path) -> None:
    async with Client(proxy_stdio(PLAIN), read_timeout_seconds=None) as client:
        await echoes(client, "before")
        pid = _proxy_pid()
        base, _ = rss_kib(pid)
        after = [await _big(client, pid)]
    _bounded(base, after)


# -- odd tool names ----------------------------------------------------------------------------

UNKNOWN = "\x00nul\u202e\U0001f600" + "z" * 300
"""A name the upstream does not have: a NUL, a bidi override, an emoji, 300 characters."""


async def _odd_names(client: Client) -> None:
    listed = [tool.name for tool in (await client.list_tools()).tools]
    assert [name for name in listed if name in mcp_servers.ODD_NAMES] == list(mcp_servers.ODD_NAMES)
    for name in mcp_servers.ODD_NAMES:
        with anyio.fail_after(HANG_GUARD):
            result = await client.call_tool(name, {})
        assert not result.is_error
        assert [c.text for c in result.content if c.type == "text"] == [
            mcp_servers.answer(name, {})
        ]
    with anyio.fail_after(HANG_GUARD):
        result = await client.call_tool(UNKNOWN, {})
    assert result.is_error
    [text] = [c.text for c in result.content if c.type == "text"]
    assert text == mcp_servers.unknown(UNKNOWN)
    await echoes(client, "after")


def _traced_names(trace: Path) -> list[str]:
    hw.Trace.read_jsonl(trace)  # the bus's own reader takes every line
    return [r["tool"] for r in records(trace) if r["kind"] == "hook" and r["hook"] == "tool.before"]


async def test_odd_tool_names_pass_through_stdio_and_are_traced(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    async with Client(proxy_stdio(PLAIN, trace=trace)) as client:
        await _odd_names(client)
    assert _traced_names(trace) == [*mcp_servers.ODD_NAMES, UNKNOWN, "echo"]


async def test_odd_tool_names_pass_through_http_and_others_are_served(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with (
        http_upstream(tmp_path) as (upstream, _),
        http_proxy(PLAIN, upstream, tmp_path, trace=trace) as (url, _),
    ):
        async with Client(url, mode="legacy") as client:
            await _odd_names(client)
        async with Client(url, mode="legacy") as other:
            await echoes(other, "other session")
    assert _traced_names(trace) == [*mcp_servers.ODD_NAMES, UNKNOWN, "echo", "echo"]
