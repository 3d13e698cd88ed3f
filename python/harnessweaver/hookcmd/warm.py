"""The warm helper, client side: a hook process asks an already-started helper to answer.

A coding agent starts a hook process for every event, and a process that imports the bus,
pydantic, the spec machinery and asyncio pays some twenty times a bare interpreter's start-up
before it reads a byte. So the events of a machine are answered by a helper
(``hookcmd/helper.py``) that has imported all of that once: a hook process connects to it over
a Unix socket, and a child the helper forked ahead of time runs exactly the in-process path on
the event, with the client's working directory, environment and arguments. State stays in the
SQLite database, so in-process and helper answers (and several helpers) share it.

The first event of a machine starts the helper *before* it answers in-process, and the helper
listens before it imports anything: the second event waits on the socket for the helper to be
ready instead of paying the whole start-up again.

This module is the whole client, and it loads nothing but the interpreter's built-in modules
(no ``socket``, ``json``, ``hashlib`` or ``pathlib``: each costs more than a bare start-up).
It also runs on its own, ``python -S -P .../hookcmd/hook.py --agent ... --spec ...``
(:func:`command_line`), which skips ``site`` and the ``harnessweaver`` package until an event
has to be answered in-process; ``harnessweaver hook`` (the console script) uses it too.

Safety: the socket lives in a directory only the user can enter; a helper that does not
acknowledge the event within :data:`ACK_SECONDS` leaves it to the in-process path (the event
was not sent, so it cannot run twice), and one that acknowledged it but gave no whole answer
makes the hook fail closed (the event may have counted, so it is never run again).
``HARNESSWEAVER_HOOK_WARM=0`` turns the helper off; ``HARNESSWEAVER_HOOK_WARM_IDLE`` sets its
idle lifetime in seconds. ``harnessweaver hook --stop-helper`` stops this user's helpers.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: this module loads nothing it can do without
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from .options import HookOptions

    Answer = tuple[int, bytes, bytes]
    """What the hook writes: its exit status, stdout and stderr."""

__all__ = [
    "ACK",
    "ACK_SECONDS",
    "DIR_ENV",
    "ENV",
    "EXIT_BLOCK",
    "IDLE_ENV",
    "IDLE_SECONDS",
    "MAX_INPUT",
    "MAX_INPUT_ENV",
    "Closed",
    "WarmError",
    "address",
    "ask",
    "closed",
    "command_line",
    "folder",
    "main",
    "read_all",
    "request",
    "run",
    "settings",
    "start",
    "stop",
    "words",
]

ENV: Final = "HARNESSWEAVER_HOOK_WARM"
DIR_ENV: Final = "HARNESSWEAVER_HOOK_WARM_DIR"
IDLE_ENV: Final = "HARNESSWEAVER_HOOK_WARM_IDLE"
IDLE_SECONDS: Final = 600
"""A helper with no event for this long exits."""
MAX_IDLE: Final = 86_400
ACK: Final = b"\x06"
"""The helper's child sends this before it reads the request: the event is now its to answer."""
ACK_SECONDS: Final = 5.0
"""How long a hook waits for the helper's acknowledgement: a helper still starting (the second
event of a machine) is ready well within it; one that is not leaves the event to the hook."""
EXIT_BLOCK: Final = 2
"""``protocol.EXIT_BLOCK``, the agents' blocking exit status (not imported: see above)."""
MAX_INPUT_ENV: Final = "HARNESSWEAVER_HOOK_MAX_INPUT"
MAX_INPUT: Final = 16 * 1024 * 1024
"""The largest event document read from stdin, in bytes (``HARNESSWEAVER_HOOK_MAX_INPUT``
changes it, up to :data:`_MAX_INPUT_CEILING`): a larger one is refused, never held whole."""
_MAX_INPUT_CEILING: Final = 1024 * 1024 * 1024
_OFF = frozenset({"0", "off", "false", "no"})
_ON = frozenset({"", "1", "on", "true", "yes"})
_MAX_PATH: Final = 100
"""Unix socket paths are limited to about 104 bytes (108 on Linux)."""
_PACKAGE: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The ``harnessweaver`` package this client belongs to (the helper must run the same one)."""
_STAMPED: Final = (
    "__init__.py",
    "_select.py",
    "hookcmd/command.py",
    "hookcmd/helper.py",
    "hookcmd/warm.py",
)
"""The files whose change times name the helper: a new version (a new protocol) gets its own."""
_IDENTITY_ENV: Final = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "HOME",
    "HARNESSWEAVER_CORE",
)
"""What decides which modules a helper imports, besides the interpreter and the package."""
_FAILED: Final = (
    b"harnessweaver hook: error: the warm helper took the event but gave no answer "
    b"(failing closed)\n"
)
_FULL_CLI: Final = ("--print-config", "--stop-helper", "--help")
"""Options the command line handles itself, never a helper (argparse takes abbreviations)."""
_BOOT: Final = (
    "import sys; root = sys.argv[1]; sys.path.insert(0, root) if root not in sys.path else 0; "
    "from harnessweaver.hookcmd.helper import main; raise SystemExit(main(sys.argv[2:]))"
)
"""The helper's start: the package of this client, ahead of any other on the path only when
the path does not hold its folder already (as a site-packages or ``PYTHONPATH`` install does)."""

_given: bytes | None = None
"""The event document when this process answers in-process without asking a helper: set by
the helper's child (the request's document) and by the file client's fallback (stdin)."""


class WarmError(ValueError):
    """A setting of the warm path holds a value it cannot."""


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


def max_input() -> int:
    """The limit on stdin in bytes (:data:`MAX_INPUT_ENV`, else :data:`MAX_INPUT`)."""
    given = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not given:
        return MAX_INPUT
    if given.isascii() and given.isdigit() and 1 <= int(given) <= _MAX_INPUT_CEILING:
        return int(given)
    raise WarmError(
        f"{MAX_INPUT_ENV}={os.environ.get(MAX_INPUT_ENV)!r:.40}: expected the largest event "
        f"document in bytes, a whole number from 1 to {_MAX_INPUT_CEILING} (unset: {MAX_INPUT})"
    )


def read_input() -> bytes:
    """The event document on stdin, reading at most one byte past the limit."""
    limit = max_input()
    raw = sys.stdin.buffer.read(limit + 1)
    if len(raw) > limit:
        raise WarmError(
            f"the event document is larger than {limit} bytes, the limit "
            f"({MAX_INPUT_ENV}; default {MAX_INPUT})"
        )
    return raw


def folder(create: bool = True) -> str | None:
    """The user's private directory for helper sockets, or ``None`` when there is no safe one
    (it must be a real directory the user owns that nobody else can enter)."""
    given = os.environ.get(DIR_ENV)
    if given:
        path = given
    else:
        base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
        path = os.path.join(base, f"harnessweaver-{os.getuid()}")
    try:
        if create:
            try:  # noqa: SIM105 (contextlib is not loaded here)
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
        info = os.lstat(path)
    except OSError:
        return None
    mode = info.st_mode
    private = info.st_uid == os.getuid() and (mode & 0o077) == 0
    return path if private and (mode & 0o170000) == 0o040000 else None  # a directory, no link


def _sha256(data: bytes) -> str:
    try:  # the interpreter's own module: hashlib would load OpenSSL (several milliseconds)
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    return str(sha256(data).hexdigest())


def _identity() -> str:
    """What a helper must share with this process to answer for it: the interpreter, the
    installed harnessweaver (its files' change times, so an upgrade starts a new helper), what
    in the environment decides its import path, the core chosen, and the user."""
    stamps = []
    for name in _STAMPED:
        try:
            stamps.append(str(os.stat(os.path.join(_PACKAGE, name)).st_mtime_ns))
        except OSError:
            stamps.append("0")
    environ = [f"{name}={os.environ.get(name, '')}" for name in _IDENTITY_ENV]
    parts = [sys.executable, _PACKAGE, *stamps, *environ, str(os.getuid())]
    return _sha256("\0".join(parts).encode("utf-8", "surrogateescape"))[:24]


def address() -> str | None:
    """The socket of this installation's helper, or ``None`` when none can be used here."""
    if not hasattr(os, "fork"):
        return None
    try:
        import _socket
    except ImportError:
        return None
    if not hasattr(_socket, "AF_UNIX"):
        return None
    where = folder()
    if where is None:
        return None
    path = os.path.join(where, f"hook-{_identity()}.sock")
    return path if len(os.fsencode(path)) <= _MAX_PATH else None


def request(argv: Sequence[str], raw: bytes) -> bytes:
    """What a hook sends once acknowledged: ``"ENV WORDS\\0"``, then the working directory, the
    environment's ``KEY=VALUE`` items and the hook's arguments, each ended by a NUL (none can
    hold one), then the event document as it came."""
    env = [key + b"=" + value for key, value in os.environb.items()]
    fields = [os.getcwdb(), *env, *(os.fsencode(word) for word in argv)]
    head = b"%d %d\0" % (len(env), len(argv))
    return head + b"\0".join(fields) + b"\0" + raw


def read_all(conn: object) -> bytes:
    """Everything the peer sends until it shuts its side down (client and helper alike)."""
    parts = []
    while chunk := conn.recv(65536):  # type: ignore[attr-defined]
        parts.append(chunk)
    return b"".join(parts)


def _reply(data: bytes) -> Answer:
    """``"CODE OUT ERR\\n"`` then that many bytes of stdout and of stderr: anything else, or
    fewer bytes (a child that died while answering), is a ``ValueError``."""
    head, newline, rest = data.partition(b"\n")
    code, out, err = (int(field) for field in head.split(b" "))
    if not newline or out < 0 or err < 0 or len(rest) != out + err:
        raise ValueError("a partial answer")
    return code, rest[:out], rest[out:]


def ask(path: str, payload: bytes) -> Answer | None:
    """The helper's answer to one event; ``None`` when no helper took it (the caller answers
    in-process). A helper that took it and then failed is a fail-closed answer, never ``None``."""
    import _socket

    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        try:
            conn.settimeout(ACK_SECONDS)
            conn.connect(path)
            if conn.recv(1) != ACK:
                return None  # the helper was leaving: the event is still ours
            conn.settimeout(None)
        except OSError:  # none serves there, or it is not ready in time: not sent, still ours
            return None
        try:
            conn.sendall(payload)
            conn.shutdown(_socket.SHUT_WR)
            return _reply(read_all(conn))
        except (OSError, ValueError):
            return EXIT_BLOCK, b"", _FAILED
    finally:
        conn.close()


def start(path: str, idle: int) -> None:
    """Start a helper for ``path`` in the background (its own session, no inherited streams or
    descriptors, so it neither holds the agent's pipes open nor receives its signals). A helper
    already starting or serving there makes the new one exit at once."""
    argv = [sys.executable, "-P", "-c", _BOOT, os.path.dirname(_PACKAGE), path, str(idle)]
    try:
        pid = os.fork()
    except OSError:
        return  # no helper: events answer in-process, as with WARM=0
    if pid:
        return
    try:  # the forked child: become the helper
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        os.closerange(3, 1 << 16)
        os.execv(sys.executable, argv)
    finally:
        os._exit(127)


def words(options: HookOptions) -> list[str]:
    """The command line of ``options`` (what the helper's child parses again): each field is
    the option of its name, a path as given (the child takes this process's directory)."""
    argv: list[str] = []
    for name, value in zip(options._fields, options, strict=True):
        flag = "--" + name.replace("_", "-")
        for item in value if isinstance(value, tuple) else (value,):
            if item is not None:
                argv += [flag, os.fspath(item) if isinstance(item, os.PathLike) else str(item)]
    return argv


def _write(answer: Answer) -> int:
    """Write the helper's answer; a hook that cannot write it fails closed."""
    code, out, err = answer
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    except (OSError, ValueError):
        return EXIT_BLOCK  # the agent reads nothing more: its answer is the exit status
    try:
        sys.stderr.flush()
        sys.stderr.buffer.write(err)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stdout and the status are the answer
    return code


class Closed:
    """A fail-closed answer in an agent's terms: exit status, stdout and stderr text."""

    __slots__ = ("code", "stderr", "stdout")

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr


_EXIT_ZERO_DENY: Final = frozenset({"copilot"})
"""Agents that skip a hook exiting non-zero (Copilot CLI): they fail closed with exit 0 and a
deny on stdout, as their protocol's own refusal answers (not imported: see ``EXIT_BLOCK``)."""


def closed(agent: str | None, line: str) -> Closed:
    """The fail-closed answer for ``agent``, ``line`` (ending in a newline) on stderr."""
    if agent in _EXIT_ZERO_DENY:
        from _json import encode_basestring_ascii  # the interpreter's own: json loads re

        reason = encode_basestring_ascii(line.rstrip("\n"))
        deny = f'"permissionDecision": "deny", "permissionDecisionReason": {reason}'
        nested = f'"hookSpecificOutput": {{"hookEventName": "PreToolUse", {deny}}}'
        return Closed(0, f"{{{deny}, {nested}}}\n", line)
    return Closed(EXIT_BLOCK, "", line)


def _agent(argv: Sequence[str]) -> str | None:
    """The ``--agent`` of the hook's arguments (for a refusal before they are parsed)."""
    for index, word in enumerate(argv):
        if word == "--agent" and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith("--agent="):
            return word.partition("=")[2]
    return None


def _refuse(argv: Sequence[str], line: str) -> int:
    answer = closed(_agent(argv), line)
    return _write((answer.code, answer.stdout.encode(), answer.stderr.encode()))


def _warm(argv: Sequence[str]) -> tuple[int | None, bytes | None]:
    """Ask the helper: ``(code, None)`` when answered (or refused), ``(None, raw)`` when the
    event is left to this process (a helper has been started for the next one)."""
    try:
        idle = settings()
    except WarmError as exc:
        return _refuse(argv, f"harnessweaver hook: error: {exc} (failing closed)\n"), None
    try:
        raw = read_input()
    except WarmError as exc:  # the cold path's line for input beyond a limit
        return _refuse(argv, f"harnessweaver hook: refused: {exc} (failing closed)\n"), None
    path = None if idle is None else address()
    if path is None or idle is None:
        return None, raw
    answer = ask(path, request(argv, raw))
    if answer == (EXIT_BLOCK, b"", _FAILED):  # the helper failed: in the agent's terms
        return _refuse(argv, _FAILED.decode()), None
    if answer is not None:
        return _write(answer), None
    start(path, idle)  # before answering: ready (or nearly) for the next event
    return None, raw


def run(options: HookOptions) -> int:
    """The ``harnessweaver hook`` process: the event on stdin answered by the warm helper when
    one takes it, else in-process."""
    raw = _given
    if raw is None:
        code, raw = _warm(words(options))
        if code is not None:
            return code
    assert raw is not None
    import io

    from .command import main as answer

    return answer(options, io.BytesIO(raw), sys.stdout, sys.stderr)


def command_line(python: str | None = None) -> list[str]:
    """The fastest command line of the hook (before its arguments): this interpreter on
    ``hookcmd/hook.py`` (which runs :func:`main`), without ``site`` until an event must be
    answered in-process."""
    return [python or sys.executable, "-S", "-P", os.path.join(_PACKAGE, "hookcmd", "hook.py")]


def _full_cli(argv: Sequence[str], raw: bytes | None) -> int:
    """``harnessweaver hook ARGV`` in this process (the file client's fallback): the site
    directories added as a normal start would, and this client's package imported."""
    import site

    if sys.flags.no_site:
        site.main()
    root = os.path.dirname(_PACKAGE)
    if root not in sys.path:
        sys.path.insert(0, root)
    from harnessweaver.cli import main as cli
    from harnessweaver.hookcmd import warm

    warm._given = raw
    return cli(["hook", *argv])


def _needs_full_cli(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for something else than an event (``--print-config``...)."""
    for word in argv:
        name = word.partition("=")[0]
        if word == "-h" or (len(name) > 3 and any(f.startswith(name) for f in _FULL_CLI)):
            return True
    return False


def stop() -> int:
    """Stop this user's helpers (those whose sockets are in :func:`folder`): each is sent
    SIGTERM, finishes the events it has taken and exits. Returns how many were stopped."""
    if not hasattr(os, "fork"):
        return 0  # no helper runs here (Windows): nothing to stop
    import fcntl
    import signal
    import time

    where = folder(create=False)
    if where is None:
        return 0
    stopped = []
    for name in sorted(os.listdir(where)):
        if not (name.startswith("hook-") and name.endswith(".sock.lock")):
            continue
        with open(os.path.join(where, name), "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                continue  # nobody holds it: no helper, whatever pid it names
            except OSError:
                pass  # held: the pid it names is the helper's
            lock.seek(0)
            text = lock.read().strip()
        if text.isdigit():
            try:
                os.kill(int(text), signal.SIGTERM)
            except ProcessLookupError:
                continue
            stopped.append(os.path.join(where, name))
    deadline = time.monotonic() + 10
    for path in stopped:  # wait until each has let go of its lock (it has left)
        with open(path, "a+") as lock:
            while time.monotonic() < deadline:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    time.sleep(0.02)
    return len(stopped)


def main(argv: Sequence[str]) -> int:
    """The file client, ``python -S -P hook.py ARGS`` (``harnessweaver hook ARGS``)."""
    if _needs_full_cli(argv):
        return _full_cli(argv, None)
    code, raw = _warm(argv)
    return code if code is not None else _full_cli(argv, raw)
