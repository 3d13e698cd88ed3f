"""What every agent's end-to-end tests share: a throwaway home and project per test, a harness
spec, the ``harnessweaver`` command and the agent CLIs (a missing one FAILS the test: these
tests exist to run them), the settings ``--print-config`` prints, and an agent run with a
timeout and an environment that reaches only 127.0.0.1.

Agent-specific wiring (settings files, environment variables, the fake vendor server) lives
in each agent's test module; nothing here knows one agent from another.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "AGENTS_DIR",
    "Run",
    "Sandbox",
    "agent_cli",
    "base_env",
    "harnessweaver_command",
    "percentile",
    "print_config",
    "run_agent",
    "stop_helpers",
]

AGENTS_DIR = Path(__file__).resolve().parent
"""This folder: ``node_modules/.bin`` holds the pinned agent CLIs (``npm ci`` here)."""

_PASSED_ON = ("PYTHONPATH", "HARNESSWEAVER_CORE", "LANG", "LC_ALL", "SYSTEMROOT")
"""The only variables of the test's own environment an agent run inherits: what makes the
``harnessweaver`` under test the one the session chose (import path, core)."""

_NO_NETWORK = {
    # Only loopback: anything honouring a proxy goes nowhere, the fake server is reached directly.
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def agent_cli(name: str) -> Path:
    """The pinned CLI ``name`` in ``node_modules/.bin``; the test fails when it is missing."""
    path = AGENTS_DIR / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.fail(
            f"the agent CLI {name!r} is not installed at {path}: run `npm ci` in {AGENTS_DIR}",
            pytrace=False,
        )
    return path


def harnessweaver_command() -> Path:
    """The ``harnessweaver`` found on ``PATH``, as the printed settings run it; the test fails
    when there is none."""
    found = shutil.which("harnessweaver")
    if found is None:
        pytest.fail(
            "no `harnessweaver` command on PATH: put the virtual environment's bin first",
            pytrace=False,
        )
    return Path(found)


@dataclass(frozen=True)
class Sandbox:
    """A test's throwaway world: ``home`` is the agent's HOME, ``project`` its working folder."""

    root: Path
    home: Path
    project: Path

    @classmethod
    def make(cls, root: Path) -> Sandbox:
        home, project = root / "home", root / "project"
        for folder in (home, project, root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        return cls(root=root, home=home, project=project)

    def write_spec(self, text: str, name: str = "harness.yaml") -> Path:
        """A harness spec in the project folder."""
        path = self.project / name
        path.write_text(text, encoding="utf-8")
        return path

    def write_json(self, path: Path, doc: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return path


def print_config(agent: str, spec: Path, project: Path, *options: str) -> dict[str, Any]:
    """What ``harnessweaver hook --agent AGENT --spec SPEC --print-config`` prints, parsed, run
    in the agent's ``project`` as a user would (a spec inside it is written relative to the
    agent's project variable)."""
    argv = [str(harnessweaver_command()), "hook", "--agent", agent, "--spec", str(spec)]
    done = subprocess.run(
        [*argv, *options, "--print-config"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"--print-config exited {done.returncode}: {done.stderr}", pytrace=False)
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def base_env(sandbox: Sandbox, warm_dir: Path | None = None) -> dict[str, str]:
    """An environment with nothing of the user's: the throwaway HOME and temp folder, a PATH of
    the ``harnessweaver`` command's folder, node's and the system's, and no proxy."""
    path = [str(harnessweaver_command().parent)]
    node = shutil.which("node")
    if node:
        path.append(str(Path(node).parent))
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "HOME": str(sandbox.home),
        "TMPDIR": str(sandbox.root / "tmp"),
        "XDG_CONFIG_HOME": str(sandbox.home / ".config"),
        "XDG_STATE_HOME": str(sandbox.home / ".local" / "state"),
        "XDG_CACHE_HOME": str(sandbox.home / ".cache"),
        "TERM": "dumb",
        **_NO_NETWORK,
    }
    env.update({name: os.environ[name] for name in _PASSED_ON if name in os.environ})
    if warm_dir is not None:
        env["HARNESSWEAVER_HOOK_WARM_DIR"] = str(warm_dir)
    return env


@dataclass(frozen=True)
class Run:
    """What one agent process did."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        """For assertion messages: the command, its status and the tail of its output."""
        return (
            f"{' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
        )


def run_agent(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60.0, stdin: str = ""
) -> Run:
    """Runs an agent to its end (its whole process group is killed past ``timeout``, and the
    test fails)."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{argv[0]} did not finish in {timeout}s\nstdout: {out}\nstderr: {err}")
    return Run(list(argv), process.returncode, out, err, time.monotonic() - started)


def private_dir(prefix: str) -> Path:
    """A fresh folder only this user can enter (the warm helper's socket folder must be)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def stop_helpers(warm_dir: Path) -> list[int]:
    """Stops the warm helpers whose socket folder is ``warm_dir`` (only the ones these tests
    started, found by that folder in their environment), by process id."""
    needle = f"HARNESSWEAVER_HOOK_WARM_DIR={warm_dir}".encode()
    stopped = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in environ and b"harnessweaver.hookcmd.helper" in cmdline:
            try:
                os.kill(int(entry.name), signal.SIGTERM)
                stopped.append(int(entry.name))
            except OSError:
                pass
    return stopped


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile ``p`` (0-100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]
