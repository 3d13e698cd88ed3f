"""``harnessweaver mcp`` under load (issue 29): 1,000 concurrent tool calls over 50 client
sessions through one proxy, nothing lost or crossed, a run context per session, memory bounded.

The upstream (``load_upstream.py``) echoes its argument, and every argument is distinct but
one, so each result is checked against its own call: a result lost, duplicated or delivered to
another call or session fails. The spec's loop guard refuses a third identical call within a
run. Every session sends ``ping`` twice among its calls, all at once: no ping is refused, so no
two sessions share a run, and a third ping in one session is refused, so the guard does count
per session. The trace then shows each session's run with exactly its own calls. The proxy's
memory after a second batch of 50 sessions is compared with what it held after the first,
with room for the allocator (``GROWTH``): a proxy that kept, batch after batch, about what a
batch holds in flight (its 16 kB arguments in the forms they take on the way) outgrows it.
The stdio variant sends concurrent calls through one stdio session.

No time is asserted (latency is in ``nox -s bench``, docs/performance.md).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from proxy_procs import free_port, rss_kib

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "load_upstream.py"
SESSIONS = 50
CALLS = 20
"""Calls per session, all sent at once: 1,000 in flight over the 50 sessions."""
PAD = "x" * 16_000
PING = "ping"
LIMIT = 3
SPEC = f"""\
middleware:
  - {{use: harnessweaver.loop_guard, id: loops, warn_after: null, block_after: {LIMIT},
      window: 10000}}
"""
REFUSED = (
    "harnessweaver refused the call: echo was called with the same arguments 3 times within "
    "the last 10000 tool calls; try something else (code: loop_detected)"
)
GROWTH = 1.5
"""How much larger the proxy's RSS may be after the second batch than after the first. What a
batch leaves is mostly the peak of its 1,000 calls in flight (CPython keeps the arenas): on
2026-12-06 250, 297, 311, 316 and 317 MB after five batches (docs/performance.md)."""
START_S = 60.0


def _text(result: Any) -> tuple[bool, list[str]]:
    return bool(result.is_error), [getattr(c, "text", None) for c in result.content]


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"pid {process.pid} did not stop on SIGTERM") from None


def _proxy(spec: Path, trace: Path) -> list[str]:
    return [sys.executable, "-m", "harnessweaver.cli", "mcp", "--spec", str(spec), "--trace",
            str(trace)]  # fmt: skip


@contextmanager
def _http_upstream() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(UPSTREAM), "http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/mcp"
    finally:
        _stop(process)
        if process.stdout is not None:
            process.stdout.close()


@contextmanager
def _http_proxy(command: list[str], upstream: str) -> Iterator[tuple[str, int]]:
    """The proxy on a free port (another one if that port was taken meanwhile); its URL and
    pid. Stopped with SIGTERM, after which its trace is whole."""
    for _ in range(3):
        port = free_port()
        listen = ["--upstream", upstream, "--listen", f"127.0.0.1:{port}"]
        process = subprocess.Popen([*command, *listen])
        deadline = time.monotonic() + START_S
        while process.poll() is None and not _listening(port):
            assert time.monotonic() < deadline, "the proxy did not listen"
            time.sleep(0.05)
        if process.poll() is None:
            break
    else:
        raise AssertionError(f"the proxy exited with status {process.returncode}")
    try:
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        _stop(process)


def _arguments(session: int) -> list[str]:
    """A session's calls: its own texts, and ``ping`` twice among them."""
    own = [f"session {session} call {i} {PAD}" for i in range(CALLS - 2)]
    return [*own[:5], PING, *own[5:12], PING, *own[12:]]


Answers = list[tuple[bool, list[str]]]


async def _session(client: Client, session: int) -> Answers:
    texts = _arguments(session)
    results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
    return [_text(result) for result in results]


async def _batch(url: str, *, control: bool) -> None:
    """``SESSIONS`` sessions, ``CALLS`` calls each, all in flight at once; with ``control``,
    then a third ping in the first session, which its run's loop guard refuses. Checked once
    the clients are closed: a failure inside 50 nested client contexts would come out wrapped
    in 50 exception groups."""
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(Client(url, mode="legacy")) for _ in range(SESSIONS)
        ]
        answers = await asyncio.gather(*(_session(c, s) for s, c in enumerate(clients)))
        refused = _text(await clients[0].call_tool("echo", {"text": PING})) if control else None
    for session, got in enumerate(answers):
        assert got == [(False, [text]) for text in _arguments(session)], f"session {session}"
    if control:
        assert refused == (True, [REFUSED])


def _guard_records(trace: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if r.get("middleware") == "loops" and r["hook"] == "tool.before"]


def test_1000_concurrent_calls_over_50_http_sessions(tmp_path: Path) -> None:
    spec, trace = tmp_path / "harness.yaml", tmp_path / "trace.jsonl"
    spec.write_text(SPEC)
    with _http_upstream() as upstream, _http_proxy(_proxy(spec, trace), upstream) as (url, pid):
        asyncio.run(asyncio.wait_for(_batch(url, control=True), 300))
        first = rss_kib(pid)[0]
        asyncio.run(asyncio.wait_for(_batch(url, control=False), 300))
        second = rss_kib(pid)[0]
    assert second <= first * GROWTH, f"RSS {first} KiB after the first batch, {second} after"
    records = _guard_records(trace)
    per_run = collections.Counter(r["run"] for r in records)
    # 100 sessions, 100 runs: the first batch's first session made one call more (refused).
    assert sorted(per_run.values()) == [CALLS] * (2 * SESSIONS - 1) + [CALLS + 1]
    refusals = [(r["outcome"], r.get("code")) for r in records if r["outcome"] != "continue"]
    assert refusals == [("block", "loop_detected")]


def test_concurrent_calls_through_one_stdio_session(tmp_path: Path) -> None:
    """Over stdio the proxy serves one session: 200 calls in flight on it, each answered with
    its own argument; the session is one run, so its third ping is refused."""
    spec, trace = tmp_path / "harness.yaml", tmp_path / "trace.jsonl"
    spec.write_text(SPEC)
    upstream = [sys.executable, str(UPSTREAM), "stdio"]
    command = [*_proxy(spec, trace), "--", *upstream]
    # The SDK gives a child only HOME, PATH and a few more unless told: the core selection
    # (HARNESSWEAVER_CORE) and PYTHONPATH must reach the proxy.
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))

    async def run() -> None:
        async with Client(params) as client:
            texts = [f"call {i} {PAD}" for i in range(199)] + [PING]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            assert [_text(r) for r in results] == [(False, [t]) for t in texts]
            assert _text(await client.call_tool("echo", {"text": PING})) == (False, [PING])
            assert _text(await client.call_tool("echo", {"text": PING})) == (True, [REFUSED])

    asyncio.run(asyncio.wait_for(run(), 300))
    records = _guard_records(trace)
    assert len(records) == 202 and len({r["run"] for r in records}) == 1
