"""The processes of the run-loop approval tests: an app (a plugin with one approval rule, a
refund tool that counts its side effects in a file, a model that asks for one refund) and the
commands each process runs. Also the crash sweep of ``test_crash.py``.

Run as a script (``python crash_worker.py COMMAND ...``); each command prints one JSON line.
The spec the tests write names this module as its local plugin (``loopapp.needs_approval``),
so every process, the real ``harnessweaver approvals`` CLI included, loads the same harness.

- ``suspend SPEC JOURNAL RUN_ID``: run until the run suspends; the state goes to
  ``JOURNAL.state.json``.
- ``resume SPEC JOURNAL STATE_FILE|-``: resume with no decision (``-``: the state
  ``hw.recover`` reads from the journal): the approval record is claimed.
- ``sweep SPEC_DIR COUNT SHARD SHARDS``: the crash sweep (``test_crash.py``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

import harnessweaver as hw
from harnessweaver.approvals import ApprovalRefused

RUN_ID = "run-approval-1"
ROLE = "finance"
EFFECTS = "HW_EFFECTS"
"""The environment variable naming the side-effect file the refund tool appends to."""


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def needs_approval(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Refunds over 100 USD wait for finance."""
    amount = event.call.arguments.get("amount_usd", 0)
    if isinstance(amount, int | float) and amount > 100:
        return hw.Suspend(
            reason="refunds over 100 USD need approval", approver_role=ROLE, code="refund"
        )
    return None


plugin = hw.Plugin(namespace="loopapp", version="1.0.0", middleware=[needs_approval])


@hw.tool
def refund(order: int, amount_usd: float) -> str:
    """Refund an order: one line in the side-effect file per refund really made."""
    with open(os.environ[EFFECTS], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"order": order, "amount_usd": amount_usd}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return f"refunded {amount_usd} USD for order {order}"


class Agent:
    """A model that asks for one refund, then answers once it has read the tool's message:
    stateless, so a run resumed in a new process gets the answer it would have got."""

    async def complete(self, request: hw.ModelRequest) -> hw.ModelResponse:
        last = request.messages[-1]
        if last.role == "tool":
            return hw.ScriptedProvider.text(f"Done: {last.content}")
        return hw.ScriptedProvider.tool_call("refund", {"order": 42, "amount_usd": 250})


def harness(spec: str, journal: str) -> hw.Harness:
    loaded = hw.load(spec)
    return loaded.with_agent(
        provider=Agent(), tools=[refund], journal=journal, approvals=loaded.approvals
    )


def effects(path: str | os.PathLike[str]) -> int:
    """The refunds really made: lines of the side-effect file."""
    file = Path(path)
    return len(file.read_text(encoding="utf-8").splitlines()) if file.exists() else 0


def _outcome(result: hw.RunResult) -> dict[str, Any]:
    return {"exit": result.exit_reason, "approval": result.approval, "output": result.output}


async def suspend(spec: str, journal: str, run_id: str = RUN_ID) -> dict[str, Any]:
    h = harness(spec, journal)
    try:
        ctx = hw.RunContext(envelope=hw.Envelope(run_id=run_id))
        result = await h.run("Refund order 42, 250 USD", ctx=ctx)
    finally:
        await h.aclose()
    Path(journal + ".state.json").write_text(result.state.model_dump_json(), encoding="utf-8")
    return _outcome(result)


async def resume(spec: str, journal: str, state_file: str) -> dict[str, Any]:
    """Resume with no decision; a refusal or a run-loop error is reported by its code."""
    if state_file == "-":
        state = hw.recover(journal)
        assert state is not None
    else:
        state = hw.RunState.model_validate_json(Path(state_file).read_text(encoding="utf-8"))
    h = harness(spec, journal)
    try:
        return _outcome(await h.resume(state))
    except ApprovalRefused as refused:
        return {"refused": refused.code, "approval": refused.approval}
    except hw.AgentError as error:
        return {"agent_error": error.kind}
    finally:
        await h.aclose()


# --- the crash sweep --------------------------------------------------------------------------


class _KillAt:
    """A profiler that counts the calls of harnessweaver's Python functions in this thread
    from the run's first emit (``Segment.emit``) on, and sends this process SIGKILL at call
    ``at`` (``None``: it only counts). The store's SQLite work runs in a worker thread, which
    is not counted: a kill lands before or after each of its transactions, which SQLite makes
    atomic."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.count = 0
        self.armed = False

    def __call__(self, frame: Any, event: str, arg: object) -> None:
        if event != "call":
            return
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith("harnessweaver"):
            return
        if not self.armed:
            self.armed = module == "harnessweaver.agent.segment" and frame.f_code.co_name == "emit"
            if not self.armed:
                return
        self.count += 1
        if self.count == self.at:
            os.kill(os.getpid(), signal.SIGKILL)


def _in_child(work: Callable[[], dict[str, Any]]) -> tuple[int, dict[str, Any] | None]:
    """Run ``work`` in a forked process (its own memory, files and SQLite connection); its
    wait status and the JSON it answered (``None`` when it died first)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into the parent's code
        os.close(read)
        code = 0
        try:
            answer = work()
        except BaseException:
            answer = {"crashed": traceback.format_exc()}
            code = 1
        os.write(write, json.dumps(answer).encode())
        os.close(write)
        os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    return status, (json.loads(data) if data else None)


def _point_spec(spec_dir: Path, where: Path) -> str:
    """A copy of the sweep's spec whose state file is the point's own."""
    text = (spec_dir / "harness.yaml").read_text(encoding="utf-8")
    spec = where / "harness.yaml"
    spec.write_text(text.replace("STATE_PATH", str(where / "state.sqlite3")), encoding="utf-8")
    return str(spec)


def _crash_run(spec: str, journal: str, at: int | None) -> dict[str, Any]:
    killer = _KillAt(at)
    sys.setprofile(killer)
    try:
        outcome = anyio.run(suspend, spec, journal)
    finally:
        sys.setprofile(None)
    return {**outcome, "calls": killer.count}


def _kinds(journal: str) -> list[str]:
    return [line.kind for line in hw.read_journal(journal)] if Path(journal).exists() else []


async def _recover(spec: str, journal: str) -> dict[str, Any]:
    """After the crash: what it left (the journal's lines, the records filed), then go on
    from the journal until the run is suspended again (or run it anew when the journal holds
    no line); the approval id, and the records waiting."""
    h = hw.load(spec)
    try:
        left = {"journal": _kinds(journal), "records": len(await h.approvals.list())}
    finally:
        await h.aclose()
    state = hw.recover(journal)
    if state is None:
        outcome = await suspend(spec, journal)
    elif state.pending is not None:
        outcome = {"exit": "suspended", "approval": state.pending.approval, "recovered": True}
    else:
        h = harness(spec, journal)
        try:
            outcome = _outcome(await h.resume(state))
        finally:
            await h.aclose()
    h = hw.load(spec)
    try:
        waiting = await h.approvals.list(status="pending")
    finally:
        await h.aclose()
    return {**outcome, "left": left, "pending": [record.id for record in waiting]}


def _approve_with_cli(spec: str, ident: str) -> dict[str, Any]:
    from harnessweaver.cli import main

    return {"status": main(["approvals", "approve", ident, "--spec", spec, "--role", ROLE])}


def _point(spec_dir: Path, at: int) -> dict[str, Any]:
    """One kill point: crash, recover, approve, resume, resume again; what each saw."""
    where = spec_dir / f"point-{at}"
    where.mkdir()
    spec, journal = _point_spec(spec_dir, where), str(where / "run.jsonl")
    os.environ[EFFECTS] = str(where / "effects.txt")
    seen: dict[str, Any] = {"at": at}
    status, _ = _in_child(lambda: _crash_run(spec, journal, at))
    seen["killed"] = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    seen["effects_after_crash"] = effects(where / "effects.txt")
    _, seen["recover"] = _in_child(lambda: anyio.run(_recover, spec, journal))
    seen["effects_before_approval"] = effects(where / "effects.txt")
    ident = (seen["recover"] or {}).get("approval")
    if ident is None:
        return seen
    replay = str(where / "replay.json")
    recovered = hw.recover(journal)
    assert recovered is not None
    Path(replay).write_text(recovered.model_dump_json(), encoding="utf-8")
    _, seen["approve"] = _in_child(lambda: _approve_with_cli(spec, ident))
    _, seen["resume"] = _in_child(lambda: anyio.run(resume, spec, journal, "-"))
    _, seen["replay"] = _in_child(lambda: anyio.run(resume, spec, journal, replay))
    seen["effects"] = effects(where / "effects.txt")
    return seen


def _warm(spec_dir: Path) -> None:
    """Import and build once, in this process, what every child needs (the plugin, the spec
    machinery, the SQLite store, the CLI): the children, forked from here, then count the
    same calls and start in milliseconds. Nothing is left open at the fork (no thread, no
    connection)."""
    where = spec_dir / "warm"
    where.mkdir()
    spec = _point_spec(spec_dir, where)
    os.environ[EFFECTS] = str(where / "effects.txt")
    anyio.run(_recover, spec, str(where / "run.jsonl"))
    import harnessweaver.cli  # noqa: F401 - loaded before the fork


def measure(spec_dir: Path) -> int:
    """An uncrashed run: the calls from its first emit to its end, the span the kill points
    are spread over."""
    where = spec_dir / "measure"
    where.mkdir()
    spec = _point_spec(spec_dir, where)
    os.environ[EFFECTS] = str(where / "effects.txt")
    _, answer = _in_child(lambda: _crash_run(spec, str(where / "run.jsonl"), None))
    assert answer is not None and answer["exit"] == "suspended", answer
    return int(answer["calls"])


def sweep(spec_dir: Path, count: int, shard: int, shards: int) -> dict[str, Any]:
    """``count`` kill points spread evenly over the measured span (the first call and the
    last included); this process runs every ``shards``-th of them, from ``shard``."""
    _warm(spec_dir)
    calls = measure(spec_dir)
    points = sorted({1 + round(i * (calls - 1) / (count - 1)) for i in range(count)})
    return {"calls": calls, "points": [_point(spec_dir, at) for at in points[shard::shards]]}


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "suspend":
        answer = anyio.run(suspend, args[0], args[1], args[2])
    elif command == "resume":
        answer = anyio.run(resume, args[0], args[1], args[2])
    elif command == "sweep":
        answer = sweep(Path(args[0]), *map(int, args[1:]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
