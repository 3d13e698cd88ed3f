"""``harnessweaver hook``: one event of a coding agent, through the bus of a harness spec.

Per invocation: read the event document (stdin), map it to its hook point; if it has one,
load the harness (its guards' states collected as they are built), then in one SQLite
transaction restore the session's states, emit, and write them back (or forget the session
at its end); answer in the agent's own terms. Anything wrong with the input, the spec, the
state or the emit is one line on stderr and the blocking exit status: the hook fails closed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .agents import AGENTS, Agent, parse
from .options import HookOptions
from .protocol import EXIT_BLOCK, Decision, HookInputError, Reply, Request

if TYPE_CHECKING:  # the store (and sqlite3) load only for an event with a hook point
    from .store import SessionRow, Store

__all__ = ["HookError", "HookOptions", "handle", "main"]

_log = logging.getLogger(__name__)


class HookError(Exception):
    """Something other than the input went wrong (the spec, the state, the emit)."""


def main(options: HookOptions, stdin: IO[bytes], stdout: IO[str], stderr: IO[str]) -> int:
    """Run one event; returns the exit status."""
    agent = AGENTS[options.agent]
    try:
        reply = handle(agent, options, stdin.read())
    except HookInputError as exc:
        reply = _fail(agent, f"harnessweaver hook: invalid {agent.title} event: {exc}")
    except HookError as exc:
        reply = _fail(agent, f"harnessweaver hook: error: {exc}")
    except Exception as exc:  # a bug: never a traceback, never failing open
        _log.error("harnessweaver hook failed: %s", type(exc).__name__)
        line = f"harnessweaver hook: error: {type(exc).__name__} (a bug: please report it)"
        reply = _fail(agent, line)
    if reply.stdout is not None:
        stdout.write(json.dumps(reply.stdout, ensure_ascii=False) + "\n")
    if reply.stderr:
        stderr.write(reply.stderr + "\n")
    return reply.exit_code


def _fail(agent: Agent, message: str) -> Reply:
    line = message + " (failing closed)"
    return Reply(None, EXIT_BLOCK, line) if agent.fail is None else agent.fail(line)


def handle(agent: Agent, options: HookOptions, raw: bytes) -> Reply:
    """The reply to one event document ``raw``."""
    request = parse(agent, raw)
    if request.hook is None:
        return Reply()  # no hook point: the agent's neutral answer, nothing loaded
    import sqlite3

    harness, states = _load(options)
    key = _harness_key(options, harness)
    store = _open(options.state)
    try:
        store.begin()
        row = store.load(agent.name, request.session, key)
        decision, row = _decide(request, row, harness, states, options.task)
        if request.hook == "task.end":
            store.end(agent.name, request.session)
        else:
            store.save(agent.name, request.session, key, row)
        store.expire()
        store.commit()
    except sqlite3.Error as exc:
        store.rollback()
        raise HookError(f"the state database failed: {type(exc).__name__}") from None
    except BaseException:
        store.rollback()
        raise
    finally:
        store.close()
    return _with_warnings(agent, agent.answer(request, decision), decision.warnings)


# Agents whose hook output shows a ``systemMessage`` to the user whatever the decision.
_SYSTEM_MESSAGE = frozenset({"claude-code", "gemini"})


def _with_warnings(agent: Agent, reply: Reply, warnings: tuple[str, ...]) -> Reply:
    """The reply, with the result's warnings (I24) shown to the user as a ``systemMessage``
    where the agent has one (after a message the reply already shows). An exit-2 reply's
    stdout is not read, so it is left as it is."""
    if not warnings or agent.name not in _SYSTEM_MESSAGE or reply.exit_code != 0:
        return reply
    shown = "harnessweaver warnings: " + "; ".join(warnings)
    out = dict(reply.stdout or {})
    before = out.get("systemMessage")
    out["systemMessage"] = shown if not before else f"{before}\n{shown}"
    return replace(reply, stdout=out)


def _decide(
    request: Request, row: SessionRow, harness: Any, states: list[Any], task: str | None
) -> tuple[Decision, SessionRow]:
    hook = request.hook
    assert hook is not None
    if row.blocked is not None and hook not in ("task.end", "step.end"):
        return Decision("block", row.blocked), row  # the session was refused for good
    stored = _states(row)
    try:
        for state, data in zip(states, stored or [[]] * len(states), strict=True):
            state.restore(data)
    except ValueError as exc:
        raise HookError(f"the stored guard state is unreadable ({exc})") from None
    step = row.step + 1 if hook == "step.start" else row.step
    event = _event(request, step, task)
    decision = _emit(harness, hook, event, request.session)
    blocked = row.blocked
    if decision.kind == "stop" or (hook == "task.start" and decision.kind in ("block", "ask")):
        blocked = decision.reason
    dumped = json.dumps([state.dump() for state in states], separators=(",", ":"))
    return decision, replace(row, step=step, blocked=blocked, states=dumped)


def _states(row: SessionRow) -> list[Any]:
    try:
        data = json.loads(row.states)
    except ValueError:
        raise HookError("the stored guard state is not JSON") from None
    if not isinstance(data, list):
        raise HookError("the stored guard state is not a list")
    return data


def _event(request: Request, step: int, task: str | None) -> Any:
    from .translate import build_event

    try:
        return build_event(request, step, task)
    except HookInputError:
        raise
    except ValueError as exc:  # pydantic: a field of the wrong shape
        raise HookInputError(f"{request.name}: {type(exc).__name__} building the event") from None


def _emit(harness: Any, hook: str, event: Any, session: str) -> Decision:
    from .. import Envelope, RunContext

    ctx = RunContext(Envelope(run_id=session))
    try:
        result = asyncio.run(harness.bus.emit(hook, event, ctx))
    except Exception as exc:  # a bug or a broken middleware the bus let through
        _log.error("harnessweaver hook: emit at %s failed: %s", hook, type(exc).__name__)
        raise HookError(f"emitting {hook} failed: {type(exc).__name__}") from None
    decision = _decision(result)
    if result.warnings:
        lines = tuple(f"{w.middleware}: {w.text}" for w in result.warnings)
        decision = replace(decision, warnings=lines)
    return decision


def _decision(result: Any) -> Decision:
    from .. import Block, Continue, Escalate, Retry, Suspend

    outcome = result.outcome
    if isinstance(outcome, Block):
        return Decision("block", _reason(outcome))
    if isinstance(outcome, Suspend):
        return Decision("ask", _reason(outcome))
    if isinstance(outcome, Escalate):
        return Decision("stop", _reason(outcome))
    if isinstance(outcome, Retry):
        return Decision("retry", _reason(outcome))
    if isinstance(outcome, Continue) and outcome.modified is not None:
        return Decision("modify", "", result.event)
    return Decision("continue")


def _reason(outcome: Any) -> str:
    code = getattr(outcome, "code", None)
    reason = str(outcome.reason)
    return f"{reason} ({code})" if code else reason


def _load(options: HookOptions) -> tuple[Any, list[Any]]:
    from ..builtins._runs import tracked
    from ..spec import SpecError, load

    try:
        with tracked() as states:
            harness = load(
                options.spec, task=options.task, env=options.env, org_profiles=options.org_profiles
            )
    except SpecError as exc:
        raise HookError(f"the harness spec does not load:\n{exc}") from None
    except Exception as exc:  # a loader bug: its type, never its message (R9)
        raise HookError(f"loading {options.spec} failed: {type(exc).__name__}") from None
    return harness, list(states)


def _harness_key(options: HookOptions, harness: Any) -> str:
    """Which harness a session's state belongs to: the spec, task, env and every entry with
    its settings. A spec changed in the middle of a session starts its guards afresh."""
    entries = [[e.name, e.use, e.settings] for e in harness.entries]
    text = json.dumps(
        [str(options.spec.resolve()), options.task, options.env, entries],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _open(path: Path | None) -> Store:
    import sqlite3

    from .store import Store, default_path

    try:
        return Store(path or default_path())
    except (OSError, sqlite3.Error) as exc:
        raise HookError(f"cannot open the state database: {type(exc).__name__}") from None
