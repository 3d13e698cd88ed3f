"""What the MCP end-to-end runs share: free ports on 127.0.0.1, processes started and stopped
by their own id (a server, the proxy), waiting for a port to answer, the ``harnessweaver``
command under test and the JSON Lines trace it writes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "HERE",
    "Missing",
    "environment",
    "free_port",
    "harnessweaver",
    "node_modules_bin",
    "python_server",
    "read_trace",
    "serving",
]

HERE = Path(__file__).resolve().parent
"""This folder: the servers, the specs, and ``node_modules`` (``npm ci`` here)."""


class Missing(RuntimeError):
    """A part the run needs is not installed: the run fails, it is never skipped."""


def harnessweaver() -> str:
    """The ``harnessweaver`` command on PATH (the one the session installed)."""
    found = shutil.which("harnessweaver")
    if found is None:
        raise Missing("no `harnessweaver` command on PATH: put the environment's bin first")
    return found


def node_modules_bin(name: str) -> Path:
    path = HERE / "node_modules" / ".bin" / name
    if not path.exists():
        raise Missing(f"{path} is not installed: run `npm ci` in {HERE}")
    return path


def free_port() -> int:
    """A port free on 127.0.0.1 now (the server started on it next binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def serving(
    command: Sequence[str], port: int, *, cwd: Path, log: Path, timeout: float = 30.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Starts ``command`` (a server that listens on ``port``), waits until the port answers,
    and stops that process (by its id) on the way out. Its output goes to ``log``, which an
    error quotes when it does not come up."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + timeout
        while not _answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                said = log.read_text(encoding="utf-8", errors="replace")[-4000:]
                raise RuntimeError(
                    f"{' '.join(command)} did not listen on 127.0.0.1:{port} "
                    f"(exit status {process.poll()}):\n{said}"
                )
            time.sleep(0.05)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def python_server(script: str, port: int) -> list[str]:
    """The command that runs one of this folder's servers on ``port`` with this Python."""
    return [sys.executable, str(HERE / script), "--port", str(port)]


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines trace (lines end at \\n only, as the cores write them)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def environment() -> dict[str, str]:
    """The environment the proxy and the servers run in: this one, with no HTTP proxy for
    127.0.0.1 (the specs' local plugin is found beside the spec, no import path needed)."""
    env = dict(os.environ)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env
