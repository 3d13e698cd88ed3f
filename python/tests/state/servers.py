"""Real Redis and PostgreSQL servers for the state tests: each on a random free port on
127.0.0.1, its data in a temporary directory, stopped (and the directory removed) at the end.
Either can be killed with SIGKILL and started again on the same port and data directory (the
fault tests). Nothing is mocked.

Binaries: ``redis-server`` on ``PATH`` (or ``/usr/bin``); PostgreSQL's ``initdb`` and
``postgres`` on ``PATH`` or under ``/usr/lib/postgresql/*/bin`` (the newest). ``initdb``
refuses to run as root: as root, the server runs as the ``postgres`` user (``runuser``) in a
directory given to that user.

When a binary is missing the tests skip, except under CI (``CI`` set and not ``false``/``0``),
where they fail with what to install: the state tests never skip in CI.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "RedisServer", "postgres_server", "redis_server", "require"]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(what: str, found: str | None, install: str) -> str:
    """``found``, or a skip (a failure under CI) naming what is missing."""
    if found:
        return found
    message = f"{what} not found: install it ({install}); .ci/run does"
    if in_ci():
        pytest.fail(f"{message} (CI is set: the state tests may not skip)", pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes], deadline: float, log: Path) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {_tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError(f"server did not listen on 127.0.0.1:{port}: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return "(no log)"


def _kill_group(process: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL to the server and every process of its session (PostgreSQL's backends too)."""
    if process is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the rest of the group (PostgreSQL's backends)
        try:
            os.killpg(process.pid, 0)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.02)


class RedisServer:
    """redis-server with an append-only file fsynced on every write: a committed charge
    survives a SIGKILL."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="hw-redis-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = self.dir / "redis.log"
        command = [
            self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir),
            "--save", "", "--appendonly", "yes", "--appendfsync", "always",
            "--logfile", str(log), "--daemonize", "no", "--protected-mode", "yes",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        _wait_port(self.port, self.process, time.monotonic() + 30, log)
        self._wait_loaded()

    def _wait_loaded(self) -> None:
        """Until PING answers PONG (not LOADING while the append-only file is read)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1) as sock,
            ):
                sock.sendall(b"PING\r\n")
                if sock.recv(64).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not answer PING")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no save."""
        _kill_group(self.process)
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def _postgres_bin() -> str | None:
    found = shutil.which("postgres")
    if found and shutil.which("initdb"):
        return str(Path(found).parent)
    candidates = glob.glob("/usr/lib/postgresql/*/bin/postgres")
    candidates.sort(key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return str(Path(candidates[-1]).parent) if candidates else None


class PostgresServer:
    """A PostgreSQL cluster of its own (``initdb``, trust authentication on loopback only),
    the ``postgres`` database, user ``postgres``."""

    def __init__(self, bindir: str) -> None:
        self.bindir = Path(bindir)
        self.dir = Path(tempfile.mkdtemp(prefix="hw-postgres-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                raise RuntimeError("running as root, and no runuser to run PostgreSQL as postgres")
            self._as_user = [runuser, "-u", "postgres", "--"]
            shutil.chown(self.dir, "postgres", "postgres")
        log = self.dir / "initdb.log"
        with log.open("wb") as out:
            done = subprocess.run(
                [
                    *self._as_user, str(self.bindir / "initdb"), "-D", str(self.data),
                    "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync",
                ],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {_tail(log)}")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        log = self.dir / "postgres.log"
        command = [
            *self._as_user, str(self.bindir / "postgres"), "-D", str(self.data),
            "-p", str(self.port), "-k", str(self.dir), "-c", "listen_addresses=127.0.0.1",
            # A SIGKILL of the server loses nothing committed: each commit's WAL is written
            # (synchronous_commit stays on) and the page cache keeps it; fsync=off would lose
            # it only in a crash of the machine, which the tests do not do.
            "-c", "fsync=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200", "-c", "logging_collector=off",
        ]  # fmt: skip
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        _wait_port(self.port, self.process, time.monotonic() + 60, log)
        self._wait_ready(log)

    def _wait_ready(self, log: Path) -> None:
        """Until a connection succeeds (not "the database system is starting up")."""
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL refused connections: {_tail(log)}") from exc
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL to the postmaster and its backends: no shutdown checkpoint."""
        _kill_group(self.process)
        self.process = None
        # The lock files name a dead process now (possibly a zombie, which still "exists"):
        # gone, as an administrator would remove them after a crash.
        for lock in (self.data / "postmaster.pid", *self.dir.glob(".s.PGSQL.*")):
            with contextlib.suppress(OSError):
                lock.unlink()

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                _kill_group(self.process)
            self.process = None
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A started redis-server, stopped at the end (a skip, or a failure in CI, without one)."""
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None
    )
    server = RedisServer(require("redis-server", binary, "apt-get install redis-server"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A started PostgreSQL, stopped at the end (a skip, or a failure in CI, without one)."""
    pytest.importorskip("psycopg") if not in_ci() else __import__("psycopg")
    bindir = require("PostgreSQL (initdb, postgres)", _postgres_bin(), "apt-get install postgresql")
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
