"""The processes of the proxy benchmarks: the upstream server, the proxy in front of it, the
spec it runs, and SDK clients held open across pytest-benchmark's rounds."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

__all__ = [
    "MIDDLEWARE",
    "UPSTREAM",
    "Held",
    "free_port",
    "http_proxy",
    "http_upstream",
    "proxy_command",
    "stdio_params",
    "write_spec",
]

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "mcp_upstream.py"
MIDDLEWARE = 8
"""No-op plugin middleware on tool.before and tool.after, each with a 2 s timeout (issue 29)."""

START_S = 60.0
"""A server not listening after this long fails the benchmark (a loaded machine is slow)."""


def write_spec(folder: Path) -> Path:
    """harness.yaml with ``MIDDLEWARE`` pass-through middleware of a local plugin beside it."""
    shutil.copy(HERE / "mcp_passthrough.py", folder / "mcp_passthrough.py")
    items = "".join(
        f"  - {{use: benchmcp.passthrough, id: pass{i}}}\n" for i in range(1, MIDDLEWARE + 1)
    )
    spec = folder / "harness.yaml"
    spec.write_text(f"plugins: {{local: [mcp_passthrough]}}\nmiddleware:\n{items}")
    return spec


def proxy_command(spec: Path, trace: Path) -> list[str]:
    return [sys.executable, "-m", "harnessweaver.cli", "mcp", "--spec", str(spec), "--trace",
            str(trace)]  # fmt: skip


def stdio_params(command: list[str]) -> StdioServerParameters:
    # The SDK passes a child only HOME, PATH and a few more unless told: the core selection
    # (HARNESSWEAVER_CORE) and PYTHONPATH must reach the proxy and the upstream.
    return StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def http_upstream() -> Iterator[str]:
    """The echo server over Streamable HTTP; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, str(UPSTREAM), "http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(process)
        if process.stdout is not None:
            process.stdout.close()


@contextmanager
def http_proxy(command: list[str], upstream: str) -> Iterator[tuple[str, int]]:
    """``command --upstream URL --listen 127.0.0.1:PORT`` on a free port (another one if that
    port was taken meanwhile); yields its URL and pid."""
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


class Held:
    """An SDK ``Client`` kept open by a task of its own on ``runner``'s loop, so that batches run
    by separate ``runner.run`` calls (pytest-benchmark's rounds) share one session. ``close``
    ends it from the task that opened it, as anyio's scopes require."""

    def __init__(self, runner: asyncio.Runner, target: Any, **options: Any) -> None:
        self._runner = runner
        self._stop = asyncio.Event()
        ready: asyncio.Future[Client] = runner.get_loop().create_future()

        async def hold() -> None:
            try:
                async with Client(target, **options) as client:
                    ready.set_result(client)
                    await self._stop.wait()
            except BaseException as error:
                if not ready.done():
                    ready.set_exception(error)
                raise

        async def opened() -> Client:
            return await ready

        self._task = runner.get_loop().create_task(hold())
        self.client = runner.run(opened())

    def close(self) -> None:
        async def closed() -> None:
            self._stop.set()
            await self._task

        self._runner.run(closed())
