"""The warm helper, client side: a hook process asks an already-started helper to answer.

A coding agent starts ``harnessweaver hook`` for every event, and a process that imports the
bus, pydantic, the spec machinery and asyncio pays about ten times a bare interpreter's
start-up before it reads a byte. So the first event of a machine answers in-process (cold)
and then starts a helper (``hookcmd/helper.py``) that has imported all of that once; later
events connect to it over a Unix socket, and it forks a child per event that runs exactly the
cold path's :func:`~harnessweaver.hookcmd.command.main` on the event, with the client's working
directory and environment. State stays in the SQLite database, so cold and warm invocations
(and several helpers) share it as before.

This module imports nothing of the bus: it is all the warm path loads.

Safety: the socket lives in a directory only the user can enter; a helper that does not
acknowledge the request leaves it to the cold path, and one that acknowledged it but gave no
answer makes the hook fail closed (the event may have counted, so it is never run twice).
``HARNESSWEAVER_HOOK_WARM=0`` turns the helper off; ``HARNESSWEAVER_HOOK_WARM_IDLE`` sets its
idle lifetime in seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from .options import HookOptions

__all__ = [
    "ACK",
    "DIR_ENV",
    "ENV",
    "IDLE_ENV",
    "IDLE_SECONDS",
    "Answer",
    "WarmError",
    "address",
    "ask",
    "closed",
    "run",
    "settings",
    "start",
]

ENV: Final = "HARNESSWEAVER_HOOK_WARM"
DIR_ENV: Final = "HARNESSWEAVER_HOOK_WARM_DIR"
IDLE_ENV: Final = "HARNESSWEAVER_HOOK_WARM_IDLE"
IDLE_SECONDS: Final = 600
"""A helper with no event for this long exits."""
MAX_IDLE: Final = 86_400
ACK: Final = b"\x06"
"""The helper's child sends this before it reads the request: the event is now its to answer."""
EXIT_BLOCK: Final = 2
"""``protocol.EXIT_BLOCK``, the agents' blocking exit status (not imported: this module is all
the warm path loads, and the protocol's module loads dataclasses)."""
_OFF = frozenset({"0", "off", "false", "no"})
_ON = frozenset({"", "1", "on", "true", "yes"})
_MAX_PATH: Final = 100
"""Unix socket paths are limited to about 104 bytes (108 on Linux)."""
_FAILED: Final = (
    "harnessweaver hook: error: the warm helper took the event but gave no answer "
    "(failing closed)\n"
)


class WarmError(ValueError):
    """``HARNESSWEAVER_HOOK_WARM`` or ``HARNESSWEAVER_HOOK_WARM_IDLE`` holds a value it cannot."""


class Answer(NamedTuple):
    """What the hook writes: its exit status, stdout and stderr text."""

    code: int
    stdout: str = ""
    stderr: str = ""


_EXIT_ZERO_DENY: Final = frozenset({"copilot"})
"""Agents that skip a hook exiting non-zero (Copilot CLI): they fail closed with exit 0 and a
deny on stdout, as ``copilot.fail`` answers (not imported: see ``EXIT_BLOCK``)."""


def closed(agent: str, line: str) -> Answer:
    """The fail-closed answer for ``agent``, ``line`` (ending in a newline) on stderr."""
    if agent in _EXIT_ZERO_DENY:
        reason = line.rstrip("\n")
        deny: dict[str, object] = {"permissionDecision": "deny", "permissionDecisionReason": reason}
        deny["hookSpecificOutput"] = {"hookEventName": "PreToolUse", **deny}
        return Answer(0, json.dumps(deny, ensure_ascii=False) + "\n", line)
    return Answer(EXIT_BLOCK, "", line)


def settings() -> int | None:
    """The helper's idle lifetime in seconds, or ``None`` when the helper is off."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in _OFF:
        return None
    if value not in _ON:
        raise WarmError(
            f"{ENV}={os.environ.get(ENV)!r}: expected 1/on (the default: a warm helper answers "
            "later events) or 0/off (every event answers in its own process)"
        )
    idle = os.environ.get(IDLE_ENV, "").strip()
    if not idle:
        return IDLE_SECONDS
    if idle.isascii() and idle.isdigit() and 1 <= int(idle) <= MAX_IDLE:
        return int(idle)
    raise WarmError(
        f"{IDLE_ENV}={os.environ.get(IDLE_ENV)!r}: expected the helper's idle lifetime, a "
        f"whole number of seconds from 1 to {MAX_IDLE} (unset: {IDLE_SECONDS})"
    )


def _folder() -> Path | None:
    """The user's private directory for helper sockets, or ``None`` when there is no safe one
    (it must be a real directory the user owns that nobody else can enter)."""
    given = os.environ.get(DIR_ENV)
    if given:
        folder = Path(given)
    else:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        base = Path(runtime or os.environ.get("TMPDIR") or "/tmp")
        folder = base / f"harnessweaver-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, parents=False, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    private = info.st_uid == os.getuid() and (info.st_mode & 0o077) == 0
    return folder if private and folder.is_dir() and not folder.is_symlink() else None


def _identity() -> str:
    """What a helper must share with this process to answer for it: the interpreter, the
    import path (without the script's own directory) and the installed harnessweaver (its
    files' change times, so an upgrade starts a new helper), and the core chosen at import."""
    package = Path(__file__).resolve().parent.parent
    stamps = []
    for name in ("__init__.py", "hookcmd/command.py", "hookcmd/helper.py", "_select.py"):
        try:
            stamps.append((package / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    text = json.dumps(
        [
            sys.executable,
            sys.path[1:],
            str(package),
            stamps,
            os.environ.get("HARNESSWEAVER_CORE", ""),
            os.getuid(),
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def address() -> Path | None:
    """The socket of this installation's helper, or ``None`` when none can be used here."""
    if not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX"):
        return None
    folder = _folder()
    if folder is None:
        return None
    path = folder / f"hook-{_identity()}.sock"
    return path if len(os.fsencode(path)) <= _MAX_PATH else None


def ask(path: Path, request: dict[str, object], raw: bytes) -> Answer | None:
    """The helper's answer to one event; ``None`` when no helper took it (the caller answers
    cold). A helper that took it and then failed is a fail-closed answer, never ``None``."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with conn:
        try:
            conn.connect(os.fspath(path))
            if conn.recv(1) != ACK:
                return None  # the helper was leaving: the event is still ours
        except OSError:
            return None
        try:
            conn.sendall(json.dumps(request).encode() + b"\n" + raw)
            conn.shutdown(socket.SHUT_WR)
            reply = read_all(conn)
            data = json.loads(reply)
            answer = Answer(int(data["code"]), str(data["stdout"]), str(data["stderr"]))
        except (OSError, ValueError, KeyError, TypeError):
            return Answer(EXIT_BLOCK, "", _FAILED)
        return answer


def read_all(conn: socket.socket) -> bytes:
    """Everything the peer sends until it shuts its side down (client and helper alike)."""
    parts = []
    while chunk := conn.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


def start(path: Path, idle: int) -> None:
    """Start a helper for ``path`` in the background (its own session, no inherited streams,
    so it neither holds the agent's pipes open nor receives its signals). A helper already
    starting or serving there makes the new one exit at once."""
    import subprocess

    command = [sys.executable, "-P", "-m", "harnessweaver.hookcmd.helper", os.fspath(path)]
    with contextlib.suppress(OSError):  # no helper: events answer cold, as with WARM=0
        subprocess.Popen(
            [*command, str(idle)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )


def run(options: HookOptions) -> int:
    """The ``harnessweaver hook`` process: the event on stdin answered by the warm helper when
    one takes it, else in-process (and a helper started for the next event)."""
    from .limits import LimitError, max_input, read_input
    from .output import refusal, write_answer

    try:
        idle = settings()
    except WarmError as exc:
        failed = closed(options.agent, f"harnessweaver hook: error: {exc} (failing closed)\n")
        return write_answer(failed.code, failed.stdout, failed.stderr, sys.stdout, sys.stderr)
    try:
        raw = read_input(sys.stdin.buffer, max_input())
    except LimitError as exc:  # the same line as the cold path's; the helper is not asked
        failed = closed(options.agent, refusal(str(exc), "refused"))
        return write_answer(failed.code, failed.stdout, failed.stderr, sys.stdout, sys.stderr)
    path = None if idle is None else address()
    if path is not None:
        request: dict[str, object] = {
            "options": options.to_json(),
            "cwd": os.getcwd(),
            "environ": dict(os.environ),
        }
        answer = ask(path, request, raw)
        if answer == Answer(EXIT_BLOCK, "", _FAILED):  # the helper failed: in agent's terms
            answer = closed(options.agent, _FAILED)
        if answer is not None:  # written inside the fail-closed path, as the cold path's
            return write_answer(answer.code, answer.stdout, answer.stderr, sys.stdout, sys.stderr)
    import io

    from .command import main

    code = main(options, io.BytesIO(raw), sys.stdout, sys.stderr)
    if path is not None and idle is not None:
        sys.stdout.flush()
        start(path, idle)
    return code
