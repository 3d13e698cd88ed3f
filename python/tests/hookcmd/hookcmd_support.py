"""Running ``harnessweaver hook`` on recorded event documents: in-process and as a process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
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
