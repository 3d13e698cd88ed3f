"""Running the real Codex CLI (0.169.1) against the fake Responses server, with
``harnessweaver hook`` wired exactly as ``--print-config`` prints it (hooks.json on stdout, the
trust tables on stderr).

Each :class:`CodexBox` is a throwaway world: HOME, CODEX_HOME, a project folder, the warm
helper's socket folder and the hook state. The command the hooks name, ``harnessweaver``, is
found on PATH, where a small recorder stands first: it keeps each event document Codex sent,
the answer, the exit status and the command's wall time, then answers exactly as the real
command did. Nothing here reaches past 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakemodel.openai_responses import ResponsesHandler, function_outputs
from fakemodel.server import FakeServer, Turn

__all__ = [
    "CODEX",
    "CodexBox",
    "CodexRun",
    "HookCall",
    "Turn",
    "percentiles",
    "shell",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CODEX = HERE / "node_modules" / ".bin" / "codex"
SHELL_TOOL = "exec_command"
"""Codex 0.169's shell tool in the request's ``tools``: ``{"cmd": "<shell command>"}``."""

_RECORDER = """#!/bin/sh
# harnessweaver as the hooks name it: record the event, run the real command, answer as it did
n="$HW_E2E_LOG/$(date +%s%N)-$$"
cat > "$n.in"
start=$(date +%s%N)
"$HW_E2E_REAL" "$@" < "$n.in" > "$n.out" 2> "$n.err"
rc=$?
end=$(date +%s%N)
echo "$rc $start $end" > "$n.meta"
cat "$n.out"
cat "$n.err" >&2
exit $rc
"""

PLUGIN = '''
"""Middleware for the Codex end-to-end tests: an outcome chosen by a word in the command."""
import harnessweaver as hw


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def gate(event, env):
    command = str(event.call.arguments.get("command", ""))
    if "HW_SUSPEND" in command:
        return hw.Suspend("e2e: a person must approve this command")
    if "HW_BLOCK" in command:
        return hw.Block("e2e: destructive command refused", code="e2e")
    return None


plugin = hw.Plugin(namespace="e2e", version="1.0.0", middleware=[gate])
'''


def shell(command: str) -> Turn:
    """A model turn calling Codex's shell tool with ``command``."""
    return Turn(tool=SHELL_TOOL, arguments={"cmd": command})


@dataclass(frozen=True)
class HookCall:
    """One run of the hook command as Codex started it."""

    event: str
    document: dict[str, Any]
    stdout: str
    stderr: str
    status: int
    seconds: float


@dataclass(frozen=True)
class CodexRun:
    """One ``codex exec``: its exit status and output, the session id it printed, the model
    requests it made during this run and the hook calls."""

    status: int
    stdout: str
    stderr: str
    session: str | None
    requests: list[Any]
    hooks: list[HookCall]
    seconds: float

    def tool_results(self) -> list[str]:
        """The text of every tool result the model was sent in the last request."""
        if not self.requests:
            return []
        return [str(item.get("output")) for item in function_outputs(self.requests[-1])]

    def events(self) -> list[str]:
        return [call.event for call in self.hooks]


class CodexBox:
    """A throwaway HOME/CODEX_HOME/project for Codex, with a fake model server; a context
    manager that stops the server and any warm helper it started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.codex_home = root / "codex-home"
        self.project = root / "project"
        self.bin = root / "bin"
        self.log = root / "hook-log"
        self.warm = root / "warm"
        for folder in (self.home, self.codex_home, self.project, self.bin, self.log):
            folder.mkdir(parents=True)
        self.warm.mkdir(mode=0o700)
        self.fake = FakeServer(ResponsesHandler, [Turn(text="done")])
        recorder = self.bin / "harnessweaver"
        recorder.write_text(_RECORDER)
        recorder.chmod(0o755)
        (self.root / "e2e_plugin.py").write_text(textwrap.dedent(PLUGIN))

    def __enter__(self) -> CodexBox:
        self.fake.__enter__()
        (self.codex_home / "config.toml").write_text(self._config())
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.__exit__(*exc)
        for lock in self.warm.glob("*"):  # the warm helpers this box started, by their pid
            try:
                pid = int(lock.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)

    # -- set-up --------------------------------------------------------------------------

    def _config(self) -> str:
        return textwrap.dedent(
            f"""\
            model = "fake-model"
            model_provider = "fake"
            approval_policy = "never"
            sandbox_mode = "danger-full-access"
            check_for_update_on_startup = false

            [analytics]
            enabled = false

            [feedback]
            enabled = false

            [history]
            persistence = "none"

            [model_providers.fake]
            name = "fake"
            base_url = "{self.fake.url}/v1"
            wire_api = "responses"
            env_key = "HW_E2E_FAKE_KEY"
            request_max_retries = 0
            stream_max_retries = 0
            """
        )

    def spec(self, text: str, name: str = "harness.yaml") -> Path:
        """Write a harness spec into the box (beside the e2e plugin); its path."""
        path = self.root / name
        path.write_text(textwrap.dedent(text))
        return path

    def print_config(self, spec: Path) -> subprocess.CompletedProcess[str]:
        """``harnessweaver hook --agent codex --spec SPEC --print-config`` in this box."""
        argv = [sys.executable, "-m", "harnessweaver.cli", "hook", "--agent", "codex"]
        return subprocess.run(
            [*argv, "--spec", str(spec), "--print-config"],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def wire(self, spec: Path, *, trust: bool = True) -> None:
        """Save the printed hooks as ``$CODEX_HOME/hooks.json`` and, with ``trust``, append the
        printed trust tables to ``$CODEX_HOME/config.toml``."""
        printed = self.print_config(spec)
        assert printed.returncode == 0, printed.stderr
        (self.codex_home / "hooks.json").write_text(printed.stdout)
        if trust:
            with (self.codex_home / "config.toml").open("a") as config:
                config.write("\n" + printed.stderr)

    def env(self) -> dict[str, str]:
        path = os.pathsep.join(
            [str(self.bin), str(Path(sys.executable).parent), "/usr/bin", "/bin"]
        )
        python = os.pathsep.join([str(self.root), str(REPO / "python")])
        return {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "PATH": path,
            "PYTHONPATH": python,
            "HW_E2E_FAKE_KEY": "fake-key",
            "HW_E2E_LOG": str(self.log),
            "HW_E2E_REAL": str(Path(sys.executable).parent / "harnessweaver"),
            "HARNESSWEAVER_HOOK_WARM_DIR": str(self.warm),
            "HARNESSWEAVER_HOOK_WARM_IDLE": "60",
            "HARNESSWEAVER_HOOK_STATE": str(self.root / "hook-state.sqlite3"),
            "HARNESSWEAVER_CORE": os.environ.get("HARNESSWEAVER_CORE", ""),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }

    # -- running -------------------------------------------------------------------------

    def run(
        self,
        turns: list[Turn],
        prompt: str = "do the task",
        *,
        resume: str | None = None,
        flags: tuple[str, ...] = (),
    ) -> CodexRun:
        """``codex exec`` (or ``codex exec resume SESSION``) with the model scripted by
        ``turns`` (the turn after n tool results in the conversation is ``turns[n]``)."""
        self.fake.turns = turns
        seen_requests, seen_hooks = len(self.fake.requests), set(self.log.glob("*.meta"))
        common = ["--skip-git-repo-check", *flags]
        if resume:
            argv = [str(CODEX), "exec", "resume", *common, resume, prompt]
        else:
            argv = [str(CODEX), "exec", *common, "-C", str(self.project), prompt]
        started = time.monotonic()
        try:
            done = subprocess.run(
                argv,
                cwd=self.project,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=float(os.environ.get("HW_E2E_TIMEOUT", "90")),
                check=False,
            )
        except subprocess.TimeoutExpired as stalled:
            called = sorted(p.name for p in set(self.log.glob("*.meta")) - seen_hooks)
            asked = [path for _, path, _ in self.fake.requests[seen_requests:]]
            tail = (stalled.stderr or b"")[-1500:]
            raise AssertionError(
                f"codex exec stalled: model requests {asked}, hook calls {called}, stderr {tail!r}"
            ) from None
        seconds = time.monotonic() - started
        match = re.search(r"session id: (\S+)", done.stderr)
        requests = [
            body
            for method, path, body in self.fake.requests[seen_requests:]
            if method == "POST" and path.endswith("/responses")
        ]
        hooks = [self._hook(meta) for meta in sorted(set(self.log.glob("*.meta")) - seen_hooks)]
        return CodexRun(
            done.returncode,
            done.stdout,
            done.stderr,
            match.group(1) if match else None,
            requests,
            hooks,
            seconds,
        )

    def _hook(self, meta: Path) -> HookCall:
        stem = meta.with_suffix("")
        status, start, end = meta.read_text().split()
        raw = Path(f"{stem}.in").read_text()
        try:
            document = json.loads(raw)
        except ValueError:
            document = {"unparsed": raw}
        return HookCall(
            str(document.get("hook_event_name")),
            document,
            Path(f"{stem}.out").read_text(),
            Path(f"{stem}.err").read_text(),
            int(status),
            (int(end) - int(start)) / 1e9,
        )


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``seconds`` (the nearest rank)."""
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))]
    return statistics.median(ordered), p99
