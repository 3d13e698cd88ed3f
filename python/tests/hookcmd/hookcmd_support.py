"""Running ``harnessweaver hook`` on recorded event documents: in-process and as a process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessweaver.hookcmd.command import HookOptions, main

HERE = Path(__file__).parent
EVENTS = HERE / "events"
SUPPORT = HERE / "support"
SCRIPTED = SUPPORT / "scripted.yaml"
GUARDS = SUPPORT / "guards.yaml"
MANY = SUPPORT / "many.yaml"
AGENT_NAMES = ("claude-code", "codex", "gemini")


def recorded(agent: str) -> list[str]:
    """The event names recorded for ``agent`` (one file each)."""
    return sorted(path.stem for path in (EVENTS / agent).glob("*.json"))


def event(agent: str, name: str, session: str = "session-1", **changes: Any) -> dict[str, Any]:
    """The recorded document of ``name``, for ``session``, with ``changes``."""
    doc: dict[str, Any] = json.loads((EVENTS / agent / f"{name}.json").read_text())
    return {**doc, "session_id": session, **changes}


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> Any:
        """The JSON document written on stdout (``None`` when nothing was)."""
        return json.loads(self.stdout) if self.stdout.strip() else None


def _raw(doc: dict[str, Any] | bytes) -> bytes:
    return doc if isinstance(doc, bytes) else json.dumps(doc).encode()


def run_in_process(
    agent: str, doc: dict[str, Any] | bytes, spec: Path, state: Path, task: str | None = None
) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    options = HookOptions(agent=agent, spec=spec, task=task, state=state)
    code = main(options, io.BytesIO(_raw(doc)), out, err)
    return Ran(code, out.getvalue(), err.getvalue())


def command(agent: str, spec: Path, state: Path, *more: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harnessweaver.cli",
        "hook",
        "--agent",
        agent,
        "--spec",
        str(spec),
        "--state",
        str(state),
        *more,
    ]


def start(agent: str, spec: Path, state: Path, env: dict[str, str] | None = None) -> Any:
    """A hook process, waiting for its stdin."""
    return subprocess.Popen(
        command(agent, spec, state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def run_process(
    agent: str,
    doc: dict[str, Any] | bytes,
    spec: Path,
    state: Path,
    env: dict[str, str] | None = None,
) -> Ran:
    done = subprocess.run(
        command(agent, spec, state),
        input=_raw(doc),
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def _wait_for(check: Any, what: str, seconds: float = 90.0) -> None:
    """Wait for a helper process to reach a state (a test of its outcome, not of its time:
    the bound only keeps a broken helper from hanging the suite)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def sockets(folder: Path) -> list[Path]:
    return sorted(folder.glob("hook-*.sock"))


def stop_helpers(folder: Path, how: signal.Signals = signal.SIGTERM) -> None:
    """Stop every helper serving in ``folder`` (their pids are in the lock files); SIGKILL
    is a helper that crashed."""
    for lock in folder.glob("hook-*.sock.lock"):
        text = lock.read_text().strip()
        if text.isdigit():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(text), how)


def serving(path: Path) -> bool:
    """Whether a helper acknowledges a connection on ``path`` (its spare child takes it, reads
    no request and leaves; the helper forks the next)."""
    import socket

    from harnessweaver.hookcmd import warm

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(path))
            return conn.recv(1) == warm.ACK
        except OSError:
            return False


@contextlib.contextmanager
def warm_helper(idle: int = 300) -> Iterator[dict[str, str]]:
    """The environment of a hook that a warm helper answers: the helper is started by a first
    (cold) event with no hook point, and is serving when this yields."""
    folder = Path(tempfile.mkdtemp(prefix="hw-"))  # short: socket paths are limited
    env = {
        "HARNESSWEAVER_HOOK_WARM": "1",
        "HARNESSWEAVER_HOOK_WARM_IDLE": str(idle),
        "HARNESSWEAVER_HOOK_WARM_DIR": str(folder),
    }
    try:
        notification = event("claude-code", "Notification")
        ran = run_process("claude-code", notification, SCRIPTED, folder / "unused.db", env)
        assert (ran.code, ran.stderr) == (0, ""), ran
        _wait_for(lambda: sockets(folder), "the warm helper's socket")
        _wait_for(lambda: serving(sockets(folder)[0]), "the warm helper to serve")
        yield env
    finally:
        stop_helpers(folder)
        shutil.rmtree(folder, ignore_errors=True)


_PENDING = re.compile(
    r"; approval ap_[0-9a-f]{16}_[0-9]+ is pending \((?:role [^,]*, )?expires [0-9TZ:-]+\): "
    r"decide it with `harnessweaver approvals approve ap_[0-9a-f]{16}_[0-9]+` or "
    r"`harnessweaver approvals deny ap_[0-9a-f]{16}_[0-9]+`"
)
PENDING = "; <approval pending>"
"""How :func:`filed` shows the note a Suspend at a tool call adds (hookcmd/approve.py)."""


def filed(value: Any) -> Any:
    """``value`` (an answer) with each pending approval's note (its id, expiry and the
    commands that decide it) as :data:`PENDING`: the rest stays as it was, to compare."""
    if isinstance(value, str):
        return _PENDING.sub(PENDING, value)
    if isinstance(value, dict):
        return {key: filed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [filed(item) for item in value]
    return value
