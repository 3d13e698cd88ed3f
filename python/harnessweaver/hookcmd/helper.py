"""The warm helper, server side: started by a hook (``hookcmd/warm.py``) as
``python -P -c BOOT ROOT SOCKET IDLE``.

It takes the socket's lock, listens at once (a hook that connects while it is still starting
waits for it instead of answering in-process), imports what an event needs, answers a few
events of a built-in profile so that the caches a process fills at its first event are filled
here, and then keeps two children forked ahead of time waiting for connections: a hook pays
neither the imports nor the fork. The child that takes a connection tells the parent (which
forks another once it has answered), acknowledges the event, takes the client's working
directory, environment and arguments, and runs ``harnessweaver hook`` in-process on the
document: the same spec loading (a changed spec is read again), the same SQLite transaction,
the same answer. The parent only forks and reaps (a child of its own holds the state databases
open, so that a child's close does not write a database back); its memory stays flat; it
exits after ``IDLE`` seconds without an event, on SIGTERM (``harnessweaver hook
--stop-helper``; events already taken are answered), or at once when another helper holds
the lock.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import os
import select
import signal
import socket
import sqlite3
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Final, NoReturn
from urllib.parse import quote

from . import warm
from .warm import ACK, read_all

__all__ = ["CHILD_SECONDS", "SPARES", "parse_request", "serve"]

CHILD_SECONDS: Final = 900
"""A child still running after this long is stopped (an agent gives up on a hook long before:
Claude Code after 60 s by default); its transaction is rolled back by SQLite."""


def _preload() -> None:
    """Import what every event needs, so a child starts with it."""
    import asyncio  # noqa: F401
    import sqlite3  # noqa: F401

    from .. import approvals, builtins, cli, context  # noqa: F401  (approvals: a Suspend)
    from .._select import core
    from ..spec import loader, render  # noqa: F401  (hw.spec itself is a lazy namespace)
    from ..state import sqlite  # noqa: F401  (the guards' store: the state file's tables)
    from . import approve, command, state, store, translate  # noqa: F401

    for name in getattr(core, "__all__", ()):  # the pure core loads its modules on first use
        getattr(core, name)
    global _parser
    _parser = cli.build_parser("hook")  # built once: a child only parses


_parser: argparse.ArgumentParser | None = None
"""``harnessweaver hook``'s argument parser, as ``cli.main`` builds it (about a millisecond,
with its translated messages looked up, that no child repeats)."""


_WARM_UP_EVENTS: Final = (
    b'{"session_id": "warm-up", "hook_event_name": "SessionStart", "source": "startup"}',
    b'{"session_id": "warm-up", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
    b' "tool_input": {"command": "true"}, "tool_use_id": "t"}',
    b'{"session_id": "warm-up", "hook_event_name": "PostToolUse", "tool_name": "Bash",'
    b' "tool_input": {"command": "true"}, "tool_response": {"stdout": ""}, "tool_use_id": "t"}',
)
_WARM_UP_SPEC: Final = "profiles: [profile://agent-guards]\n"


def _warm_up(where: Path) -> None:
    """Answer a few events through a built-in profile, in a scratch folder: what a process does
    for its first event only (reading schemas, building validators, compiling patterns) is then
    done once here instead of in every child. No user code runs: the spec is built in."""
    from .command import main
    from .options import HookOptions

    with tempfile.TemporaryDirectory(dir=where) as scratch:
        spec = Path(scratch, "warm-up.yaml")
        spec.write_text(_WARM_UP_SPEC, encoding="utf-8")
        options = HookOptions("claude-code", spec, state=Path(scratch, "state.sqlite3"))
        for doc in _WARM_UP_EVENTS:
            main(options, io.BytesIO(doc), io.StringIO(), io.StringIO())


def _peer_is_us(conn: socket.socket) -> bool:
    """On Linux, the connecting process must be this user's (the directory already is)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def parse_request(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], list[str], bytes]:
    """The working directory, environment, arguments and document of a request
    (:func:`warm.request`); a ``ValueError`` for anything else."""
    head, _, rest = data.partition(b"\0")
    n_env, n_words = (int(count) for count in head.split(b" "))
    if n_env < 0 or n_words < 0:
        raise ValueError("negative counts")
    fields = rest.split(b"\0", 1 + n_env + n_words)
    if len(fields) != 2 + n_env + n_words:
        raise ValueError("too few fields")
    cwd, env, argv, raw = fields[0], fields[1 : 1 + n_env], fields[1 + n_env : -1], fields[-1]
    pairs = []
    for item in env:
        key, equals, value = item.partition(b"=")
        if not key or not equals:
            raise ValueError("an environment item without a name")
        pairs.append((key, value))
    return cwd, pairs, [os.fsdecode(word) for word in argv], raw


def _exit_code(exc: SystemExit) -> int:
    """The status a process ending with ``exc`` has (argparse's usage errors, ``--help``)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"{exc.code}\n")
    return 1


def _answer(conn: socket.socket) -> None:
    """The child's work: one event, start to end."""
    conn.sendall(ACK)
    cwd, environ, argv, raw = parse_request(read_all(conn))
    os.chdir(cwd)
    os.environ.clear()
    for key, value in environ:
        os.environb[key] = value
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    warm._given = raw  # answered here, in-process: never asked of a helper again
    try:
        code = _run(argv)
    except SystemExit as exc:
        code = _exit_code(exc)
    sys.stdout.flush()
    sys.stderr.flush()
    stdout, stderr = out.getvalue(), err.getvalue()
    conn.sendall(b"%d %d %d\n" % (code, len(stdout), len(stderr)) + stdout + stderr)


_state: str | None = None
"""The state database the child's event used, told to the parent for the holder (:func:`_hold`)."""


def _run(argv: list[str]) -> int:
    """``harnessweaver hook ARGV`` in-process, as ``cli.main`` runs it."""
    from .. import cli
    from .store import default_path

    global _state
    parser = _parser or cli.build_parser("hook")
    args = parser.parse_args(["hook", *argv])
    state = getattr(args, "state", None) or default_path()
    _state = os.path.abspath(state)
    run: cli.Runner = args.run
    return run(args)


class _Spare:
    """A child forked ahead of time: it waits for one connection, answers it, and exits. It
    tells the parent when it takes one (``t``) and when it has answered (``d``)."""

    def __init__(self, listener: socket.socket, news: int, alive: int) -> None:
        self.listener, self.news, self.alive = listener, news, alive
        self.busy = False

    def _leave(self, *_: object) -> None:
        if not self.busy:  # an event taken (and so acknowledged) is always answered
            os._exit(0)

    def _tell(self, what: bytes, state: str | None = None) -> None:
        line = b"%s%d" % (what, os.getpid())
        if state is not None and b"\n" not in os.fsencode(state):
            line += b" " + os.fsencode(state)
        if len(line) < select.PIPE_BUF:  # written at once, never mixed with another child's
            with contextlib.suppress(OSError):  # the parent has gone: nothing to tell
                os.write(self.news, line + b"\n")

    def run(self) -> NoReturn:
        signal.signal(signal.SIGTERM, self._leave)
        status = 0
        try:
            conn = self._accept()
            if conn is not None:
                self.busy = True
                self._tell(b"t")
                self.listener.close()
                signal.alarm(CHILD_SECONDS)
                try:
                    _answer(conn)
                finally:
                    with contextlib.suppress(OSError):
                        conn.close()
                    self._tell(b"d", _state)  # answered: the parent forks a spare again now
        except BaseException:  # the client sees no answer and fails closed
            status = 1
        os._exit(status)

    def _accept(self) -> socket.socket | None:
        """This user's next connection; ``None`` when the parent has gone."""
        self.listener.setblocking(False)  # another spare may take it first
        while True:
            ready, _, _ = select.select([self.listener.fileno(), self.alive], [], [])
            if self.alive in ready:
                return None  # the parent's end of the pipe closed: it has left
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            conn.setblocking(True)
            if _peer_is_us(conn):
                return conn
            conn.close()


def _finished(pid: int) -> bool:
    """Whether child ``pid`` has ended (and is now reaped); one already reaped counts as ended."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done != 0


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


def _ours(path: Path, inode: int) -> bool:
    """Whether ``path`` is still this helper's socket (not removed with its folder)."""
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def _stop(*_: object) -> NoReturn:
    raise SystemExit(0)


CHECK_SECONDS: Final = 30.0
"""How often an idle helper checks that its socket is still there (a helper whose folder was
removed can be reached by no hook: it leaves instead of waiting out its idle time)."""
HELD: Final = 32
"""At most so many state databases are held open (:func:`_hold`)."""


def _hold(paths: int) -> NoReturn:
    """The holder, a child of the helper that never forks: it keeps a read-only connection to
    each state database the children have used (their paths come on ``paths``, one a line)
    until the helper leaves. SQLite's last connection to a database in WAL mode checkpoints it
    (writing the file back and syncing it) as it closes, which every child would otherwise be
    at every event. These read nothing more and hold no transaction, so no child waits for
    them; and a process that holds connections must not fork (SQLite's per-process lock state
    would be copied into the child), hence a process of their own."""
    held = []
    rest = b""
    with contextlib.suppress(BaseException):
        while chunk := os.read(paths, 65536):
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines:
                uri = f"file:{quote(os.fsdecode(line))}?mode=ro"
                try:
                    conn = sqlite3.connect(uri, uri=True, timeout=0.1)
                    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # the WAL index
                except (sqlite3.Error, OSError):
                    continue
                held.append(conn)
    os._exit(0)


SPARES: Final = 2
"""Children kept forked ahead of time: two events at once (parallel tool calls) find one each,
and a spare taken is replaced after its event is answered, not while it runs."""


class _Server:
    """The parent: :data:`SPARES` children waiting for connections, forked again as events are
    answered (or at once when none is left)."""

    def __init__(self, listener: socket.socket, lock: IO[str]) -> None:
        self.listener, self.lock = listener, lock
        self.news_r, self.news_w = os.pipe()
        self.alive_r, self.alive_w = os.pipe()
        self.spares: set[int] = set()
        self.busy: set[int] = set()
        self.told: set[bytes] = set()
        self.hold_w = self._fork_holder()

    def _fork_holder(self) -> int:
        """Start the holder (:func:`_hold`); the write end of its pipe."""
        paths_r, paths_w = os.pipe()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.lock.close()
            self.listener.close()
            for fd in (paths_w, self.news_r, self.news_w, self.alive_r, self.alive_w):
                os.close(fd)
            _hold(paths_r)
        os.close(paths_r)
        return paths_w

    def _fork_spare(self) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.lock.close()  # the lock is the parent's alone: it says a helper is alive
            os.close(self.news_r)
            os.close(self.alive_w)
            os.close(self.hold_w)
            _Spare(self.listener, self.news_w, self.alive_r).run()
        self.spares.add(pid)

    def _read_news(self) -> None:
        for line in os.read(self.news_r, 65536).split(b"\n"):
            pid, _, state = line[1:].partition(b" ")
            if not pid.isdigit():
                continue
            if line[:1] == b"t":
                self.spares.discard(int(pid))
                self.busy.add(int(pid))
            elif line[:1] == b"d":
                self.busy.discard(int(pid))
                if state and state not in self.told and len(self.told) < HELD:
                    self.told.add(state)
                    with contextlib.suppress(OSError):  # the holder has gone: only slower
                        os.write(self.hold_w, state + b"\n")

    def _reap(self) -> None:
        for group in (self.spares, self.busy):
            group.difference_update([pid for pid in group if _finished(pid)])

    def serve(self, idle: float, reachable: Callable[[], bool]) -> int:
        """Serve until ``idle`` seconds pass with no event and none in flight, or until
        ``reachable()`` says no hook can connect any more (the socket was removed)."""
        last = time.monotonic()
        while True:
            self._reap()
            while len(self.spares) < SPARES and (not self.spares or not self.busy):
                self._fork_spare()  # none left, or nothing in flight to slow down
            wait = min(CHECK_SECONDS, max(0.0, last + idle - time.monotonic()))
            ready, _, _ = select.select([self.news_r], [], [], wait)
            if ready:
                self._read_news()
                last = time.monotonic()
            elif not self.busy and (time.monotonic() >= last + idle or not reachable()):
                return 0

    def close(self) -> None:
        """Stop the spares (one that has just taken an event ignores it and answers), then
        leave: children still answering finish on their own."""
        for pid in self.spares:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        os.close(self.alive_w)
        os.close(self.hold_w)  # the holder leaves


def serve(path: Path, idle: float) -> int:
    """Answer events on ``path`` until ``idle`` seconds pass without one."""
    lock = open(f"{path}.lock", "a+")  # noqa: SIM115 (held for the helper's whole life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another helper serves (or is starting): nothing to do
    signal.signal(signal.SIGTERM, _stop)
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")  # who serves here, for --stop-helper (and the tests)
    lock.flush()
    listener = _bind(path)  # now: a hook that comes while we start waits for us
    inode = path.stat().st_ino
    server = None
    try:
        _preload()
        with contextlib.suppress(Exception):  # a cache left cold is only slower
            _warm_up(path.parent)
        server = _Server(listener, lock)
        return server.serve(idle, lambda: _ours(path, inode))
    finally:
        if server is not None:
            server.close()
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
