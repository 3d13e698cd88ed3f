"""Starting ``harnessweaver mcp`` and its upstreams for the MCP tests: real processes, the
SDK's own client and servers, 127.0.0.1 only.

- :func:`proxy_stdio` gives the ``StdioServerParameters`` with which the SDK's ``Client``
  starts the proxy, which starts its stdio upstream (by default :mod:`mcp_servers`).
- :func:`serving` starts a process that listens on a port and waits until it accepts;
  :func:`http_upstream` and :func:`http_proxy` use it for an HTTP upstream and the proxy
  fronting it (``http://127.0.0.1:PORT/mcp``).
- :func:`records` reads a JSON Lines file (a trace, a ``--record`` file).

The proxy runs in a process of its own, on the core the suite runs on
(``HARNESSWEAVER_CORE`` is passed on), so which event loop the test's client runs on does not
change what is tested: the modules that start processes run under asyncio only (their own
``anyio_backend`` fixture), not asyncio and trio as the rest of the suite does.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import mcp_servers
from mcp.client.stdio import StdioServerParameters

import harnessweaver

__all__ = [
    "HERE",
    "SUPPORT",
    "asyncio_only",
    "child_env",
    "free_port",
    "http_proxy",
    "http_upstream",
    "proxy_command",
    "proxy_stdio",
    "records",
    "restarting_http_upstream",
    "rss_kib",
    "serving",
    "wait_listening",
]

HERE = Path(__file__).parent
SUPPORT = HERE / "support"
_PACKAGE_ROOT = Path(harnessweaver.__file__).resolve().parent.parent
# Start-up bound: a process that is not listening by then is broken; it only keeps a broken
# process from hanging the suite, never measures anything.
_STARTUP_SECONDS = 60.0


def asyncio_only() -> str:
    """For a test module's own ``anyio_backend`` fixture (see the module's docstring)."""
    return "asyncio"


def child_env(**more: str) -> dict[str, str]:
    """The environment of a process the tests start: this one's, with the package that is
    under test importable and the core chosen for the suite."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(_PACKAGE_ROOT) + (os.pathsep + path if path else "")
    env["HARNESSWEAVER_CORE"] = harnessweaver.CORE
    env.update(more)
    return env


def proxy_command(
    spec: Path,
    *,
    upstream: Sequence[str] | None = None,
    url: str | None = None,
    listen: str | None = None,
    trace: Path | None = None,
    task: str | None = None,
    more: Sequence[str] = (),
) -> list[str]:
    """``harnessweaver mcp`` as the brief's CLI contract has it (``more``: other options,
    such as ``--call-timeout``)."""
    argv = [sys.executable, "-m", "harnessweaver.cli", "mcp", "--spec", str(spec), *more]
    if task is not None:
        argv += ["--task", task]
    if trace is not None:
        argv += ["--trace", str(trace)]
    if url is not None:
        argv += ["--upstream", url]
    if listen is not None:
        argv += ["--listen", listen]
    if upstream is not None:
        argv += ["--", *upstream]
    return argv


def proxy_stdio(
    spec: Path,
    *,
    record: Path | None = None,
    trace: Path | None = None,
    task: str | None = None,
    upstream: Sequence[str] | None = None,
    more: Sequence[str] = (),
) -> StdioServerParameters:
    """The proxy over stdio fronting ``upstream`` (default: :mod:`mcp_servers` over stdio,
    recording each call it gets to ``record``)."""
    if upstream is None:
        upstream = mcp_servers.command(*(["--record", str(record)] if record else []))
    argv = proxy_command(spec, upstream=upstream, trace=trace, task=task, more=more)
    # The SDK starts a server with a reduced environment merged with ``env``: pass all of
    # ours, so the proxy and its upstream import the package under test.
    return StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())


def free_port() -> int:
    """A port nobody listens on now (the OS picks it; tests run in parallel sessions)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def serving(argv: Sequence[str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Runs ``argv`` until the block ends, once it accepts connections on ``port``; its
    stdout and stderr go to ``log`` (shown when it dies before listening)."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=child_env()
        )
    try:
        deadline = time.monotonic() + _STARTUP_SECONDS
        while not _accepts(port):
            if process.poll() is not None:
                code = process.returncode
                raise AssertionError(f"{argv[:6]} exited ({code}):\n{log.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{argv[:6]} is not listening on {port}:\n{log.read_text()}")
            time.sleep(0.05)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ends a process the tests started (by its own id), killing it if it will not stop."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def http_upstream(
    folder: Path, *, record: Path | None = None, stateless: bool = False
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:mod:`mcp_servers` over Streamable HTTP: its URL and process."""
    port = free_port()
    argv = mcp_servers.command("--http", str(port))
    argv += ["--record", str(record)] if record else []
    argv += ["--stateless"] if stateless else []
    with serving(argv, port, folder / f"upstream-{port}.log") as process:
        yield f"http://127.0.0.1:{port}/mcp", process


@contextlib.contextmanager
def http_proxy(
    spec: Path,
    upstream: str,
    folder: Path,
    *,
    trace: Path | None = None,
    task: str | None = None,
    more: Sequence[str] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``harnessweaver mcp --upstream URL --listen 127.0.0.1:PORT``: its URL and process."""
    port = free_port()
    listen = f"127.0.0.1:{port}"
    argv = proxy_command(spec, url=upstream, listen=listen, trace=trace, task=task, more=more)
    with serving(argv, port, folder / f"proxy-{port}.log") as process:
        yield f"http://127.0.0.1:{port}/mcp", process


@contextlib.contextmanager
def restarting_http_upstream(folder: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """:mod:`mcp_servers` over Streamable HTTP, started again on the same port whenever it
    dies (as a service manager would): its URL and every process started, in order."""
    port = free_port()
    argv = mcp_servers.command("--http", str(port))
    started: list[subprocess.Popen[bytes]] = []
    done = threading.Event()

    def start() -> None:
        with (folder / f"upstream-{port}-{len(started)}.log").open("wb") as out:
            started.append(
                subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=child_env()
                )
            )

    def watch() -> None:
        while not done.wait(0.05):
            if started[-1].poll() is not None:
                start()

    start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        wait_listening(port, started[-1], argv, folder)
        yield f"http://127.0.0.1:{port}/mcp", started
    finally:
        done.set()
        watcher.join()
        for process in started:
            stop(process)


def wait_listening(
    port: int, process: subprocess.Popen[bytes], argv: Sequence[str], log: Path
) -> None:
    """Until something accepts connections on ``port`` (``process`` must not exit first)."""
    deadline = time.monotonic() + _STARTUP_SECONDS
    while not _accepts(port):
        if process.poll() is not None:
            raise AssertionError(f"{argv[:6]} exited ({process.returncode}), see {log}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{argv[:6]} is not listening on {port}, see {log}")
        time.sleep(0.05)


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON Lines of ``path``, read at ``\\n`` only (as the trace readers do)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def rss_kib(pid: int) -> tuple[int, int]:
    """(resident, peak resident) KiB of process ``pid``, from /proc (Linux)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])
