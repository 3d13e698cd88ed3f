"""Running the real Gemini CLI against the fake Gemini API, with ``harnessweaver hook`` wired
in exactly as ``--print-config`` prints it.

Each :class:`GeminiBox` is a throwaway world: its own HOME (``~/.gemini/settings.json`` with
API-key auth, no telemetry, usage statistics or update checks, the printed hooks merged in;
``~/.gemini/trustedFolders.json`` trusting the working folder, so ``--yolo`` is not
overridden), a working folder, and the hook command's state under that HOME. Runs are
headless (``gemini -p ... --yolo``), with ``--debug`` so the CLI logs how long each hook event
took (``Hook execution for <Event>: ... total duration: <n>ms``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakemodel.gemini import GeminiHandler
from fakemodel.server import FakeServer, Turn

__all__ = [
    "GEMINI",
    "MODEL",
    "GeminiBox",
    "GeminiRun",
    "hook_timings",
    "quantile",
    "shell",
    "tool_results",
    "warm_helpers",
    "write_settings",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GEMINI = HERE / "node_modules" / ".bin" / "gemini"
MODEL = "gemini-2.5-flash"
"""A fixed model: with it Gemini CLI 0.61 sent nothing but the conversation's
``streamGenerateContent`` requests."""
TIMEOUT = 90
"""Seconds one agent run may take before the test fails (a run takes a few)."""

PRINT = ("--print-config",)
_TIMING = re.compile(r"Hook execution for (\w+): .*?total duration: (\d+)ms")


def shell(command: str, description: str = "run it") -> Turn:
    """The model's call of Gemini CLI's shell tool."""
    return Turn(
        tool="run_shell_command", arguments={"command": command, "description": description}
    )


def write_settings(home: Path, work: Path, printed: dict[str, Any]) -> None:
    """Gemini CLI's user settings for a headless test: an API key's auth, no telemetry, no
    updates, ``work`` trusted, and ``printed`` (what a ``--print-config`` printed) on top."""
    settings: dict[str, Any] = {
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": True},
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        **printed,
    }
    gemini = home / ".gemini"
    (gemini / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    trusted = {str(work): "TRUST_FOLDER"}
    (gemini / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")


@dataclass
class GeminiRun:
    """One ``gemini -p`` invocation: its exit status, output, and the requests the fake API
    was sent during it."""

    code: int
    stdout: str
    stderr: str
    requests: list[tuple[str, str, Any]] = field(default_factory=list)

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def conversation(self) -> list[Any]:
        """The bodies of the model requests (``:streamGenerateContent``/``:generateContent``)."""
        return [
            body
            for _method, path, body in self.requests
            if "GenerateContent" in path or "generateContent" in path
        ]


def tool_results(body: Any) -> list[str]:
    """The ``functionResponse`` parts of a model request, each as JSON text."""
    found = []
    for content in (body or {}).get("contents") or []:
        for part in content.get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                found.append(json.dumps(part["functionResponse"], ensure_ascii=False))
    return found


def hook_timings(output: str) -> list[tuple[str, int]]:
    """``(event, milliseconds)`` of every hook event the CLI's debug log reports."""
    return [(name, int(ms)) for name, ms in _TIMING.findall(output)]


def quantile(values: list[int], q: float) -> int:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _hook_env() -> dict[str, str]:
    """What the hook command needs from this process: this worktree's package first on the
    import path, and the virtual environment's ``harnessweaver`` on PATH."""
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    path = [str(REPO / "python"), os.environ.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = ":".join(p for p in path if p)
    for name in ("HARNESSWEAVER_CORE", "LANG", "LC_ALL"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


class GeminiBox:
    """A throwaway HOME and working folder for Gemini CLI, with the hook command wired on
    ``spec``. ``warm_dir`` is where the warm helper's socket lives (a short private path)."""

    def __init__(self, root: Path, spec_text: str, warm_dir: Path, **files: str) -> None:
        self.root = root
        self.home = root / "home"
        self.work = root / "work"
        self.spec = root / "harness.yaml"
        self.warm_dir = warm_dir
        for folder in (self.home / ".gemini", self.work):
            folder.mkdir(parents=True, exist_ok=True)
        self.spec.write_text(textwrap.dedent(spec_text), encoding="utf-8")
        for name, text in files.items():
            (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
        self.env = {
            **_hook_env(),
            "HOME": str(self.home),
            "TMPDIR": str(root),
            "TERM": "dumb",
            "NO_COLOR": "1",
            "GEMINI_API_KEY": "dummy",
            "HARNESSWEAVER_HOOK_WARM_DIR": str(warm_dir),
            "HARNESSWEAVER_HOOK_WARM_IDLE": "120",
        }
        self._configure()

    def printed_config(self) -> dict[str, Any]:
        """What ``harnessweaver hook --agent gemini --spec S --print-config`` prints, run in
        the working folder (Gemini's project) as a user would."""
        done = subprocess.run(
            ["harnessweaver", "hook", "--agent", "gemini", "--spec", str(self.spec), *PRINT],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        config: dict[str, Any] = json.loads(done.stdout)
        return config

    def _configure(self) -> None:
        write_settings(self.home, self.work, self.printed_config())  # the hooks, as printed

    def run(self, server: FakeServer, prompt: str, *args: str, debug: bool = True) -> GeminiRun:
        """``gemini -p prompt --yolo`` (plus ``args``) in the working folder, against
        ``server``; ``debug`` adds ``--debug`` (the hook timings)."""
        before = len(server.requests)
        env = {**self.env, "GOOGLE_GEMINI_BASE_URL": server.url}
        flags = ["--debug"] if debug else []
        command = [str(GEMINI), "-p", prompt, "--yolo", *flags, "-m", MODEL, *args]
        done = subprocess.run(
            command, cwd=self.work, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        return GeminiRun(done.returncode, done.stdout, done.stderr, server.requests[before:])

    @contextmanager
    def serving(self, turns: list[Turn]) -> Iterator[FakeServer]:
        with FakeServer(GeminiHandler, turns) as server:
            yield server


@contextmanager
def warm_helpers() -> Iterator[Path]:
    """A private folder for the warm helpers' sockets (short: a socket path is at most about
    100 bytes); the helpers that served in it are stopped at the end, by their own pid, and
    the folder removed."""
    folder = Path(tempfile.mkdtemp(prefix="hwg-"))
    try:
        yield folder
    finally:
        for lock in folder.glob("*.lock"):
            text = lock.read_text().strip()
            if text.isdigit():
                with suppress(ProcessLookupError):
                    os.kill(int(text), signal.SIGTERM)
        shutil.rmtree(folder, ignore_errors=True)
