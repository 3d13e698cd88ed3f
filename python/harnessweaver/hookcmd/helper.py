"""The warm helper, server side: ``python -P -m harnessweaver.hookcmd.helper SOCKET IDLE``.

Started by a cold hook (``hookcmd/warm.py``), it imports what an event needs once, listens
on its socket, and forks a child per connection. The child acknowledges the request, takes
the client's working directory and environment, and runs the cold path's ``main`` on the event
document: the same spec loading (a changed spec is read again), the same SQLite transaction,
the same answer. The parent only accepts, forks and reaps, so its memory stays flat however
long it runs; it exits after ``IDLE`` seconds without an event, or when another helper holds
the socket's lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import select
import signal
import socket
import struct
import sys
from pathlib import Path
from typing import Final

from .warm import ACK, read_all

__all__ = ["CHILD_SECONDS", "serve"]

CHILD_SECONDS: Final = 900
"""A child still running after this long is stopped (an agent gives up on a hook long before:
Claude Code after 60 s by default); its transaction is rolled back by SQLite."""


def _preload() -> None:
    """Import what every event needs, so a child starts with it."""
    import asyncio  # noqa: F401
    import sqlite3  # noqa: F401

    from .. import builtins, context  # noqa: F401
    from .._select import core
    from ..spec import loader, render  # noqa: F401  (hw.spec itself is a lazy namespace)
    from . import command, store, translate  # noqa: F401

    for name in getattr(core, "__all__", ()):  # the pure core loads its modules on first use
        getattr(core, name)


def _peer_is_us(conn: socket.socket) -> bool:
    """On Linux, the connecting process must be this user's (the directory already is)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def _answer(conn: socket.socket) -> None:
    """The child's work: one event, start to end."""
    from .command import main
    from .options import HookOptions

    conn.sendall(ACK)
    header, _, raw = read_all(conn).partition(b"\n")
    request = json.loads(header)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["environ"])
    out, err = io.StringIO(), io.StringIO()
    code = main(HookOptions.from_json(request["options"]), io.BytesIO(raw), out, err)
    reply = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
    conn.sendall(json.dumps(reply).encode())


def _child(listener: socket.socket, conn: socket.socket) -> None:
    listener.close()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.alarm(CHILD_SECONDS)
    status = 0
    try:
        _answer(conn)
    except BaseException:  # the client sees no answer and fails closed
        status = 1
    finally:
        with contextlib.suppress(OSError):
            conn.close()
        os._exit(status)


def _finished(pid: int) -> bool:
    """Whether child ``pid`` has ended (and is now reaped); one already reaped counts as ended."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done != 0


def _reap(children: set[int]) -> None:
    children.difference_update([pid for pid in children if _finished(pid)])


def _bind(path: Path) -> socket.socket:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by a helper that died: we hold the lock now
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(os.fspath(path))
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def serve(path: Path, idle: float) -> int:
    """Answer events on ``path`` until ``idle`` seconds pass without one."""
    lock = open(f"{path}.lock", "a+")  # noqa: SIM115 (held for the helper's whole life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another helper serves (or is starting): nothing to do
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")  # who serves here, for `kill` (and the tests)
    lock.flush()
    _preload()
    listener = _bind(path)
    inode = path.stat().st_ino
    children: set[int] = set()
    try:
        while True:
            ready, _, _ = select.select([listener], [], [], idle)
            _reap(children)
            if not ready:
                if not children:
                    return 0
                continue
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            if not _peer_is_us(conn):
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                _child(listener, conn)
            conn.close()
            children.add(pid)
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if path.stat().st_ino == inode:
                path.unlink()
        lock.close()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -P -m harnessweaver.hookcmd.helper SOCKET IDLE", file=sys.stderr)
        return 2
    return serve(Path(argv[0]), float(argv[1]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
