"""A fleet of workers on one store, for test_fleet.py and python/benchmarks/test_state.py.

One harness spec (``spec_text``) with a rate limit and a budget guard, both of scope ``org``,
on the store a ``state:`` section names through ``${HW_FLEET_URL}``; workers of three kinds
charge them at once:

- Python processes (``fleet_worker.py``): asyncio workers, each call a run of the run loop
  (``loop``) or ``model.before``/``model.after`` on the bus (``bus``);
- Node processes (``fleet_worker.mjs``): the same through ts-runner's ``load``;
- hook-command invocations: Gemini CLI's ``BeforeModel`` then ``AfterModel`` of one session,
  each its own ``harnessweaver hook`` process.

Every worker waits for a start file, so they begin together. What each let through is counted
from its answers and compared with what the store holds afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
TS = ROOT / "ts-runner"
TS_DIST = TS / "dist" / "index.js"
PY_WORKER = HERE / "fleet_worker.py"
NODE_WORKER = HERE / "fleet_worker.mjs"
PYTHON_PATH = str(ROOT / "python")
RESERVE = 10
"""Tokens each call reserves at ``model.before`` (``reserve_tokens``); no call uses more."""


@dataclass(frozen=True)
class Fleet:
    """The spec's items: a budget of ``budget`` tokens and a limit of ``rate`` calls."""

    budget: int
    rate: int
    per: str = "1h"
    reserve: int = RESERVE
    """Tokens each model call reserves; no call may use more (else the budget can be passed)."""
    """The rate limit's window. Each call in it is a live hold the store sums on every call
    (docs/state.md, "Running at scale"): the large benchmark run keeps it short."""
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    warn: bool = True
    """Whether the budget warns the model at 70% (``warn_at``'s default); False: no warning."""

    @property
    def budget_item(self) -> str:
        return f"budget_{self.tag}"

    @property
    def rate_item(self) -> str:
        return f"rate_{self.tag}"

    def spec_text(self, backend: str) -> str:
        return (
            f"state: {{backend: {backend}, url: '${{HW_FLEET_URL}}', timeout: 5s}}\n"
            "middleware:\n"
            f"  - {{use: harnessweaver.rate_limit, id: {self.rate_item}, scope: org,"
            f" limit: {self.rate}, per: {self.per}}}\n"
            f"  - {{use: harnessweaver.budget_guard, id: {self.budget_item}, scope: org,"
            f" max_tokens: {self.budget}, reserve_tokens: {self.reserve}"
            f"{'' if self.warn else ', warn_at: null'}}}\n"
        )

    def keys(self) -> tuple[str, str]:
        """The store keys of the budget's tokens and the rate limit's calls."""
        from harnessweaver.state import state_key

        return (
            state_key("app", self.budget_item, "org", "-", "tokens"),
            state_key("app", self.rate_item, "org", "-", "calls"),
        )


@dataclass
class Tally:
    """What the workers were answered: the amounts let through, the refusals by code."""

    allowed: list[int] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, found: dict[str, Any]) -> None:
        self.allowed += [int(a) for a in found["allowed"]]
        self.codes.update(found["codes"])
        self.by_kind[kind] += len(found["allowed"])


def node_ready() -> str | None:
    """Why the Node worker cannot run here (None: it can). A checkout whose ts-runner has its
    packages but no build is built here (``npm run build``, about a minute)."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    npm = shutil.which("npm")
    if not TS_DIST.is_file() and npm is not None and (TS / "node_modules").is_dir():
        subprocess.run([npm, "run", "build"], cwd=TS, capture_output=True, check=False)
    if not TS_DIST.is_file():
        return "ts-runner/dist is not built (cd ts-runner && npm ci && npm run build)"
    return None


def node_count() -> int:
    """How many Node workers a test may start: 2, or 0 where Node or ts-runner/dist is
    missing (the Python and hook-command workers still run); under CI a missing Node fails."""
    why = node_ready()
    if why is None:
        return 2
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        import pytest

        pytest.fail(f"the Node worker cannot run: {why}", pytrace=False)
    return 0


def _env(url: str, go: Path, ready: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HW_FLEET_URL"] = url
    env["HW_FLEET_GO"] = str(go)
    env["HW_FLEET_READY"] = str(ready)
    env["PYTHONPATH"] = PYTHON_PATH + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _gemini(name: str, session: str, amount: int) -> bytes:
    doc: dict[str, Any] = {
        "session_id": session,
        "transcript_path": "/tmp/fleet.json",
        "cwd": "/tmp",
        "timestamp": "2026-12-06T12:00:00.000Z",
        "hook_event_name": name,
        "llm_request": {
            "model": "gemini-2.5-pro",
            "messages": [{"role": "user", "content": f"call {session}"}],
        },
    }
    if name == "AfterModel":
        doc["llm_response"] = {
            "candidates": [{"content": {"role": "model", "parts": ["ok"]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": amount},
        }
    return json.dumps(doc).encode()


def _hook(spec: Path, state: Path, env: dict[str, str], doc: bytes) -> dict[str, Any] | None:
    command = [sys.executable, "-m", "harnessweaver.cli", "hook", "--agent", "gemini"]
    command += ["--spec", str(spec), "--state", str(state)]
    done = subprocess.run(command, input=doc, capture_output=True, env=env, timeout=120)
    if done.returncode not in (0, 2):
        raise AssertionError(f"hook exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    if done.returncode == 2:
        return {"decision": "deny", "reason": done.stderr.decode()}
    return json.loads(done.stdout) if done.stdout.strip() else None


def hook_session(spec: Path, state: Path, env: dict[str, str], session: str, amount: int) -> Any:
    """One model call of a Gemini CLI session through ``harnessweaver hook``: the worker's
    result document."""
    go = Path(env["HW_FLEET_GO"])
    while not go.exists():
        time.sleep(0.005)
    before = _hook(spec, state, env, _gemini("BeforeModel", session, amount))
    if before is not None and before.get("decision") == "deny":
        reason = str(before.get("reason", ""))
        code = reason.rsplit("(", 1)[-1].rstrip(")").strip() if "(" in reason else "denied"
        return {"allowed": [], "codes": {code: 1}}
    after = _hook(spec, state, env, _gemini("AfterModel", session, amount))
    if after is not None and after.get("decision") == "deny":
        return {"allowed": [amount], "codes": {"after:denied": 1}}
    return {"allowed": [amount], "codes": {}}


@dataclass(frozen=True)
class Plan:
    """Who runs: Python processes x workers x calls, Node processes x calls, hook sessions."""

    python: tuple[int, ...] = (4, 4)
    """Workers in each Python process."""
    calls: int = 5
    node: int = 2
    hooks: int = 6
    mode: str = "loop"
    amounts: tuple[int, ...] = (RESERVE,)
    delays_ms: tuple[int, ...] = ()
    node_mode: str = "bus"
    """``bus``: the Node worker emits on ts-runner's bus; ``ai``: each call a ``generateText``
    of the AI SDK through harnessweaver/ai (15 tokens a call)."""


def run_fleet(fleet: Fleet, plan: Plan, backend: str, url: str, tmp: Path) -> Tally:
    """Every worker of ``plan`` at once on ``url``; what they were answered."""
    spec = tmp / f"fleet-{fleet.tag}.yaml"
    spec.write_text(fleet.spec_text(backend))
    go = tmp / f"go-{fleet.tag}"
    ready = tmp / f"ready-{fleet.tag}"
    ready.mkdir()
    env = _env(url, go, ready)
    amounts = ",".join(str(a) for a in plan.amounts)
    delays = ",".join(str(d) for d in plan.delays_ms)
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    for number, workers in enumerate(plan.python):
        command = [sys.executable, str(PY_WORKER), str(spec), f"{fleet.tag}-{number}"]
        command += [plan.mode, str(workers), str(plan.calls), amounts, delays]
        procs.append(("python", _popen(command, env)))
    for number in range(plan.node):
        command = ["node", str(NODE_WORKER), str(TS_DIST), str(spec), f"{fleet.tag}-{number}"]
        command += [str(plan.calls), amounts, delays]
        procs.append(("node", _popen(command, {**env, "HW_FLEET_NODE_MODE": plan.node_mode})))
    tally = Tally()
    with ThreadPoolExecutor(max(1, plan.hooks)) as pool:
        state = tmp / f"hook-{fleet.tag}.sqlite3"
        sessions = [
            pool.submit(
                hook_session,
                spec,
                state,
                env,
                f"hook-{fleet.tag}-{n}",
                plan.amounts[n % len(plan.amounts)],
            )
            for n in range(plan.hooks)
        ]
        deadline = time.monotonic() + 300
        while len(list(ready.iterdir())) < len(procs):  # each process has loaded its harness
            for kind, proc in procs:
                if proc.poll() is not None:
                    _, err = proc.communicate()
                    raise AssertionError(f"{kind} worker exited early: {err.decode()[-3000:]}")
            assert time.monotonic() < deadline, "the workers did not load their harness"
            time.sleep(0.01)
        go.touch()
        for future in sessions:
            tally.add("hook", future.result(timeout=300))
    for kind, proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise AssertionError(f"{kind} worker exited {proc.returncode}: {err.decode()[-3000:]}")
        tally.add(kind, json.loads(out.decode().strip().splitlines()[-1]))
    return tally


def _popen(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )


def totals(backend: str, url: str, fleet: Fleet) -> tuple[float, float]:
    """The store's totals of the budget's tokens and the rate limit's calls."""
    store = open_store(backend, url)
    tokens, calls = fleet.keys()

    async def read() -> tuple[float, float]:
        try:
            return await store.total(tokens), await store.total(calls)
        finally:
            await store.close()

    return asyncio.run(read())


def open_store(backend: str, url: str) -> Any:
    if backend == "redis":
        from harnessweaver.state.redis import RedisStore

        return RedisStore(url)
    from harnessweaver.state.postgres import PostgresStore

    return PostgresStore(url)


@dataclass
class Servers:
    """The session's servers, started on first use."""

    stack: Any
    found: dict[str, Any] = field(default_factory=dict)

    def url(self, backend: str) -> str:
        if backend not in self.found:
            from servers import postgres_server, redis_server

            starter = redis_server if backend == "redis" else postgres_server
            self.found[backend] = self.stack.enter_context(starter())
        return str(self.found[backend].url)
