"""What the ``harnessweaver.authzen`` tests share: the local AuthZEN decision point
(``e2e/authzen-pdp``, Go on cedar-go) built once and started on the loopback, and a small
misbehaving one (``http.server``) for the answers no real decision point should give.

This module holds no tests; its name keeps it among the files of the ``authzen`` tests.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from checkout import require_checkout

import harnessweaver as hw

__all__ = [
    "Misbehaving",
    "event_call",
    "pdp",
    "pdp_binary",
    "run",
]

_GO_FALLBACK = "/usr/local/go/bin/go"


def _go() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    return _GO_FALLBACK if Path(_GO_FALLBACK).is_file() else None


def _source_key(folder: Path) -> str:
    """A key of the decision point's sources (the TypeScript tests compute the same one)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.suffix == ".go" or path.name in ("go.mod", "go.sum"):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def pdp_binary() -> Path:
    """``e2e/authzen-pdp`` built once for its sources (the user's own Go caches) into a folder
    of the system's temporary one, shared with the TypeScript tests: whoever takes the lock
    builds, the others wait for the binary. A skip naming what is missing without Go."""
    source = require_checkout() / "e2e" / "authzen-pdp"
    go = _go()
    if go is None:
        missing = "the local AuthZEN decision point needs Go (go on PATH) to be built"
        if os.environ.get("HARNESSWEAVER_REQUIRE_GO") == "1":  # nox: a skip would hide it
            pytest.fail(missing)
        pytest.skip(missing)
    folder = Path(tempfile.gettempdir()) / f"harnessweaver-authzen-pdp-{_source_key(source)}"
    binary, lock = folder / "authzen-pdp", folder.with_name(folder.name + ".lock")
    deadline = time.monotonic() + 900
    while not binary.exists():
        assert time.monotonic() < deadline, f"no decision point built at {binary} ({lock} stale?)"
        try:
            lock.mkdir()
        except FileExistsError:  # another test process is building it
            time.sleep(0.2)
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            partial = binary.with_name(f"authzen-pdp.{os.getpid()}")
            env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
            done = subprocess.run(
                [go, "build", "-o", str(partial), "."],
                cwd=source,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == 0, f"go build of e2e/authzen-pdp failed:\n{done.stderr}"
            partial.rename(binary)
        finally:
            lock.rmdir()
    return binary


@contextmanager
def pdp(
    policies: str | Sequence[Path],
    entities: Any = None,
    *,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """The local decision point on ``policies`` (Cedar text, or files) and ``entities`` (a
    JSON-able entity list, or a file), started for the ``with`` block: its base URL."""
    binary = pdp_binary()
    with tempfile.TemporaryDirectory(prefix="authzen-data-") as folder:
        args = [str(binary)]
        if isinstance(policies, str):
            path = Path(folder) / "policies.cedar"
            path.write_text(policies)
            files: Sequence[Path] = [path]
        else:
            files = policies
        for file in files:
            args += ["-policies", str(file)]
        if entities is not None:
            if isinstance(entities, Path):
                args += ["-entities", str(entities)]
            else:
                path = Path(folder) / "entities.json"
                path.write_text(json.dumps(entities))
                args += ["-entities", str(path)]
        args += list(extra)
        process = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline().strip()
            if not first.isdigit():
                process.kill()
                _, err = process.communicate(timeout=10)
                raise AssertionError(f"the decision point did not start: {err}")
            yield f"http://127.0.0.1:{first}"
        finally:
            process.terminate()
            process.wait(timeout=10)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


CLOCK = hw.FixedClock("2026-11-30T12:00:00+00:00")


def run(**attributes: object) -> hw.RunContext:
    """A run whose envelope carries ``attributes`` (``user``, ``agent``, ...)."""
    return hw.RunContext(envelope=hw.Envelope(clock=CLOCK, run_id="run-1", attributes=attributes))


def event_call(name: str = "search", step: int = 0, **arguments: Any) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        step=step,
        tool=hw.ToolSpec(name=name),
        call=hw.ToolCall(id="c1", name=name, arguments=arguments),
    )


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that stopped waiting (the PEP's timeout) breaks the pipe: expected here.
        pass


class Misbehaving:
    """A decision point that answers as ``mode`` says: ``slow`` (not before the test ends), ``500``,
    ``garbage`` (not JSON), ``string`` / ``number`` / ``null`` / ``missing`` (a decision that is
    not a boolean), ``huge`` (past the size cap), ``redirect``, ``short`` (a batch answer with a
    decision missing), or ``allow``. Its metadata is a 404 unless ``metadata`` is given. It
    keeps the headers and bodies it was sent (``seen``)."""

    def __init__(self, mode: str, metadata: dict[str, Any] | None = None) -> None:
        self.mode = mode
        self.metadata = metadata
        self.seen: list[tuple[str, dict[str, str], bytes]] = []
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: the test reads `seen`
                pass

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                for key, value in (headers or {"Content-Type": "application/json"}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                owner.seen.append(("GET " + self.path, dict(self.headers), b""))
                if owner.metadata is None:
                    self._send(404, b"{}")
                else:
                    self._send(200, json.dumps(owner.metadata).encode())

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(size)
                owner.seen.append(("POST " + self.path, dict(self.headers), body))
                mode = owner.mode
                if mode == "slow":
                    owner.release.wait(60)  # until the test is done with it
                    self._send(200, b'{"decision": true}')
                elif mode == "500":
                    self._send(500, b'{"decision": true}')
                elif mode == "garbage":
                    self._send(200, b"<html>decision: true</html>")
                elif mode == "huge":
                    self._send(200, b" " * (2 << 20) + b'{"decision": true}')
                elif mode == "redirect":
                    self._send(302, b"", {"Location": "http://127.0.0.1:9/"})
                elif mode == "short":
                    self._send(200, b'{"evaluations": [{"decision": true}]}')
                elif mode == "allow":
                    answer = {"decision": True}
                    if self.path.endswith("/evaluations"):
                        items = json.loads(body)["evaluations"]
                        answer = {"evaluations": [{"decision": True} for _ in items]}  # type: ignore[dict-item]
                    self._send(200, json.dumps(answer).encode())
                else:
                    decision = {"string": '"true"', "number": "1", "null": "null"}.get(mode)
                    text = "{}" if decision is None else f'{{"decision": {decision}}}'
                    self._send(200, text.encode())

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Misbehaving:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
