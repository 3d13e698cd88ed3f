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

__all__ = [
    "SECRET",
    "PostgresServer",
    "RedisServer",
    "postgres_server",
    "postgres_url",
    "redis_server",
    "redis_url",
    "require",
]


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
    """redis-server; ``durable`` (the default): with an append-only file fsynced on every
    write, so a committed charge survives a SIGKILL (the fault tests). ``durable=False`` keeps
    nothing on disk: for benchmarks, where an fsync per write would be what is measured."""

    def __init__(self, binary: str, password: str | None = None, durable: bool = True) -> None:
        self.binary = binary
        self.password = password
        self.durable = durable
        self.dir = Path(tempfile.mkdtemp(prefix="hw-redis-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f"default:{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = self.dir / "redis.log"
        command = [
            self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir),
            "--save", "", "--appendonly", "yes" if self.durable else "no",
            "--appendfsync", "always",
            "--logfile", str(log), "--daemonize", "no", "--protected-mode", "yes",
        ]  # fmt: skip
        if self.password:
            command += ["--requirepass", self.password]
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
                answer = sock.recv(64)
                if answer.startswith((b"+PONG", b"-NOAUTH")):  # -NOAUTH: loaded, wants a password
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

    def __init__(self, bindir: str, password: str | None = None) -> None:
        self.bindir = Path(bindir)
        self.password = password
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
        auth = f"postgres:{self.password}" if self.password else "postgres"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/postgres"

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


def _redis_binary() -> str:
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None
    )
    return require("redis-server", binary, "apt-get install redis-server")


def _postgres_bindir() -> str:
    if in_ci():
        import psycopg  # noqa: F401  (a failure, not a skip, in CI)
    else:
        pytest.importorskip("psycopg")
    return require("PostgreSQL (initdb, postgres)", _postgres_bin(), "apt-get install postgresql")


@contextlib.contextmanager
def redis_server(password: str | None = None, *, durable: bool = True) -> Iterator[RedisServer]:
    """A started redis-server (``.url``), stopped at the end; a skip (a failure in CI) when
    there is none. ``durable=False``: no append-only file (benchmarks)."""
    pytest.importorskip("redis") if not in_ci() else __import__("redis")
    server = RedisServer(_redis_binary(), password, durable)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def postgres_server(password: str | None = None) -> Iterator[PostgresServer]:
    """A started PostgreSQL (``.url``), stopped at the end; a skip (a failure in CI) when
    there is none."""
    server = PostgresServer(_postgres_bindir(), password)
    try:
        server.start()
        yield server
    finally:
        server.stop()


SECRET = "hw-not-a-real-password-7c1f"
"""The password in the shared servers' URLs: a test checks it never shows in an error or a
repr (Redis requires it; PostgreSQL's trust authentication accepts and ignores it)."""


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """One redis-server for the session (import this fixture into a test module)."""
    with redis_server(SECRET) as server:
        yield server.url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """One PostgreSQL for the session (import this fixture into a test module)."""
    with postgres_server(SECRET) as server:
        yield server.url
