"""``harnessweaver hook``: one event of a coding agent, through the bus of a harness spec.

Per invocation: read the event document (stdin), map it to its hook point; if it has one,
load the harness, its stateful guards attached to the state store (an ``SqliteStore`` on the
hook command's state file, or the backend the spec's ``state:`` names), the run-scope keys made
the session's (``hookcmd/state.py``); in one short SQLite transaction forget the sessions past
their lifetime and take the session's row (its step, whether it was refused for good, its
generation); emit; write what the emit decided about the session back; answer in the agent's
own terms. Anything wrong with the input, the spec, the state file or the emit is one line on
stderr and the blocking exit status: the hook fails closed. A state store that cannot answer
during the emit is a failure of the guard that asked, under its declared fail mode
(docs/state.md): closed blocks with ``state_unavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .agents import Agent, agent_for, parse
from .approve import consult
from .limits import LimitError, check_depth, max_input, read_input
from .options import HookOptions
from .output import write_answer
from .protocol import EXIT_BLOCK, Decision, HookInputError, Reply, Request
from .trace import EventTrace, current

if TYPE_CHECKING:  # the store (and sqlite3) load only for an event with a hook point
    from collections.abc import Iterator

    from ..state import StateConfig
    from ..state import Store as StateStore
    from .state import SessionStore
    from .store import SessionRow, Store

__all__ = ["HookError", "HookOptions", "handle", "main"]

_log = logging.getLogger(__name__)


class HookError(Exception):
    """Something other than the input went wrong (the spec, the state, the emit)."""


class _SpecFailed(HookError):
    """The harness spec does not load (the trace's ``hook_spec_error``)."""


def main(options: HookOptions, stdin: IO[bytes], stdout: IO[str], stderr: IO[str]) -> int:
    """Run one event; returns the exit status (0, or 2: the answer, or failing closed)."""
    agent = agent_for(options)
    traced = None if options.trace is None else EventTrace(options.trace)
    token = current.set(traced)
    raw = b""
    try:
        raw = read_input(stdin, max_input())
        check_depth(raw)
        reply, cause = handle(agent, options, raw), "session"
    except LimitError as exc:
        reply, cause = _fail(agent, f"harnessweaver hook: refused: {exc}"), "limit"
    except HookInputError as exc:
        line = f"harnessweaver hook: invalid {agent.title} event: {exc}"
        reply, cause = _fail(agent, line), "input"
    except _SpecFailed as exc:
        reply, cause = _fail(agent, f"harnessweaver hook: error: {exc}"), "spec"
    except HookError as exc:
        reply, cause = _fail(agent, f"harnessweaver hook: error: {exc}"), "error"
    except BaseException as exc:  # a bug, or a middleware's exit(): never a traceback or exit 1
        _log.error("harnessweaver hook failed: %s", type(exc).__name__)
        message = f"harnessweaver hook: error: {type(exc).__name__} (a bug: please report it)"
        reply, cause = _fail(agent, message), "error"
    finally:
        current.reset(token)
    reply = _at_turn_end(agent, raw, reply)
    out, reply, cause = _serialised(agent, reply, cause)
    err = "" if not reply.stderr else reply.stderr + "\n"
    if traced is not None:
        err += _traced(traced, agent, raw, reply, cause)
    return write_answer(reply.exit_code, out, err, stdout, stderr)


def _fail(agent: Agent, message: str) -> Reply:
    line = message + " (failing closed)"
    return Reply(None, EXIT_BLOCK, line) if agent.fail is None else agent.fail(line)


def _at_turn_end(agent: Agent, raw: bytes, reply: Reply) -> Reply:
    """A refusal at the end of a turn (``Stop``, ``AfterAgent``), as an answer that stops.

    There the blocking exit status means "do not stop: keep working" (Claude Code and Codex
    send the model back with the reason, Gemini CLI retries the turn), so a spec that broke
    mid-session would keep the agent calling the model again and again. Failing closed at a
    turn's end is ending the session: ``continue: false`` with the reason."""
    if reply.exit_code != EXIT_BLOCK or reply.stdout is not None:
        return reply
    try:
        name = json.loads(raw).get("hook_event_name")
    except (AttributeError, ValueError, RecursionError):
        return reply  # not a document: nothing says it is a turn's end
    if not isinstance(name, str) or agent.events.get(name) != "step.end":
        return reply
    stop = {"continue": False, "stopReason": (reply.stderr or "harnessweaver hook: error")}
    return Reply(stop, 0, reply.stderr)


def _serialised(agent: Agent, reply: Reply, cause: str) -> tuple[str, Reply, str]:
    """The answer's stdout text, checked to be JSON the agent can read (no ``NaN``, nothing
    UTF-8 cannot carry); a reply that cannot be written becomes a refusal."""
    if reply.stdout is None:
        return "", reply, cause
    try:
        out = json.dumps(reply.stdout, ensure_ascii=False, allow_nan=False) + "\n"
        out.encode("utf-8")
    except UnicodeEncodeError:
        problem = "the answer holds text UTF-8 cannot carry (a lone surrogate)"
        return "", _fail(agent, f"harnessweaver hook: error: {problem}"), "answer"
    except (TypeError, ValueError, RecursionError) as exc:
        problem = f"the answer cannot be written as JSON: {type(exc).__name__}"
        return "", _fail(agent, f"harnessweaver hook: error: {problem}"), "answer"
    return out, reply, cause


def _traced(traced: EventTrace, agent: Agent, raw: bytes, reply: Reply, cause: str) -> str:
    """Record the event (the bus's records, and the command's own refusal when it refused
    without the bus deciding) and write the trace; the stderr line if that failed."""
    decided = reply.exit_code != 0 or reply.stdout is not None  # not the neutral answer
    if cause != "session" or (decided and traced.emits == 0):
        with contextlib.suppress(Exception):  # a document that does not parse names no run
            request = parse(agent, raw)
            if request.hook is not None:
                tool = request.doc.get("tool_name")
                traced.add_refusal(request.hook, request.session, tool, cause)
    note = traced.write()
    return "" if note is None else note + "\n"


def handle(agent: Agent, options: HookOptions, raw: bytes) -> Reply:
    """The reply to one event document ``raw``."""
    request = parse(agent, raw)
    if request.hook is None:
        return Reply()  # no hook point: the agent's neutral answer, nothing loaded
    ttl = _lifetime(options)
    path = _state_path(options)
    opened: list[SessionStore] = []
    harness = _load(options, lambda config: _session_store(config, path, opened))
    try:
        key = _harness_key(options, harness)
        store = _open(path)
        try:
            row = _session(store, agent.name, request.session, key, ttl, request.hook)
            for session_store in opened:
                session_store.bind(key, row.epoch, float(ttl))
            decision, blocked = _decide(request, row, harness, options.task)
            decision = consult(request, decision, harness)
            if blocked != row.blocked:
                _refuse(store, agent.name, request.session, key, blocked, ttl)
        finally:
            store.close()
    finally:
        _close(harness)
    return _with_warnings(agent, agent.answer(request, decision), decision.warnings)


def _session(store: Store, agent: str, session: str, key: str, ttl: int, hook: str) -> SessionRow:
    """In one transaction: forget the sessions past their lifetime, take the session's row
    (a new one gets its generation), count a step start, and write it back."""
    import secrets

    with _transaction(store):
        at = _now()
        store.expire(at)  # first: a session past its lifetime starts afresh
        row = store.load(agent, session, key)
        if not row.epoch:
            row = replace(row, epoch=secrets.token_hex(8))
        if hook == "step.start" and not _refused(row, hook):
            row = replace(row, step=row.step + 1)
        store.save(agent, session, key, row, at, ttl)
    return row


def _refuse(
    store: Store, agent: str, session: str, key: str, blocked: str | None, ttl: int
) -> None:
    """Record that the session was refused for good (read again: another invocation of the
    session may have written its row meanwhile)."""
    with _transaction(store):
        row = store.load(agent, session, key)
        store.save(agent, session, key, replace(row, blocked=blocked), _now(), ttl)


@contextlib.contextmanager
def _transaction(store: Store) -> Iterator[None]:
    """One short ``BEGIN IMMEDIATE`` transaction on the session table, committed at the end
    of the block; a database error is a HookError naming its type only (fail closed)."""
    import sqlite3

    try:
        store.begin()
        yield
        store.commit()
    except sqlite3.Error as exc:
        store.rollback()
        raise HookError(f"the state database failed: {type(exc).__name__}") from None
    except BaseException:
        store.rollback()
        raise


def _refused(row: SessionRow, hook: str) -> bool:
    return row.blocked is not None and hook not in ("task.end", "step.end")


def _session_store(
    config: StateConfig | None, path: Path, opened: list[SessionStore]
) -> StateStore:
    """The store the harness's stateful guards use: the spec's ``state:`` backend, else an
    ``SqliteStore`` on the hook command's state file; its run-scope keys the session's."""
    from ..state import SqliteStore, open_store
    from .state import SessionStore

    inner = SqliteStore(path) if config is None or config.backend == "memory" else None
    wrapped = SessionStore(inner if inner is not None else open_store(config))
    opened.append(wrapped)
    return wrapped


def _close(harness: Any) -> None:
    """Close the harness's store (its connections, its thread)."""
    close = getattr(harness, "aclose", None)
    if close is None:
        return
    with contextlib.suppress(Exception):  # the answer is decided: closing cannot change it
        asyncio.run(close())


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
    request: Request, row: SessionRow, harness: Any, task: str | None
) -> tuple[Decision, str | None]:
    """The decision on the event, and why the session is refused for good after it (or
    ``None``)."""
    hook = request.hook
    assert hook is not None
    if _refused(row, hook):
        return Decision("block", row.blocked or ""), row.blocked  # refused for good
    event = _event(request, row.step, task)
    decision = _emit(harness, hook, event, request.session)
    blocked = row.blocked
    if decision.kind == "stop" or (hook == "task.start" and decision.kind in ("block", "ask")):
        blocked = decision.reason
    return decision, blocked


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

    ctx = RunContext(Envelope(run_id=session, attributes=_attributes(session)))
    try:
        result = asyncio.run(harness.bus.emit(hook, event, ctx))
    except Exception as exc:  # a bug or a broken middleware the bus let through
        _log.error("harnessweaver hook: emit at %s failed: %s", hook, type(exc).__name__)
        raise HookError(f"emitting {hook} failed: {type(exc).__name__}") from None
    finally:
        traced = current.get()
        if traced is not None:
            traced.add_bus(ctx.trace)
    decision = _decision(result)
    if result.warnings:
        lines = tuple(f"{w.middleware}: {w.text}" for w in result.warnings)
        decision = replace(decision, warnings=lines)
    return decision


def _attributes(session: str) -> dict[str, object]:
    """``session`` is the agent's session id; ``user``/``app`` come from the environment
    (``harnessweaver.state.scope.ATTRIBUTE_ENV``, docs/state.md)."""
    from ..state.scope import environ_attributes

    return environ_attributes(session)


def _decision(result: Any) -> Decision:
    from .. import Block, Continue, Escalate, Retry, Suspend

    outcome = result.outcome
    if isinstance(outcome, Block):
        return Decision("block", _reason(outcome))
    if isinstance(outcome, Suspend):
        return Decision("ask", _reason(outcome), result.event, outcome=outcome)
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


def _load(options: HookOptions, open_state: Any) -> Any:
    from ..spec import SpecError, load

    try:
        return load(
            options.spec,
            task=options.task,
            env=options.env,
            org_profiles=options.org_profiles,
            open_state=open_state,
        )
    except SpecError as exc:
        raise _SpecFailed(f"the harness spec does not load:\n{exc}") from None
    except HookError:
        raise
    except Exception as exc:  # a loader bug: its type, never its message (R9)
        raise _SpecFailed(f"loading {options.spec} failed: {type(exc).__name__}") from None


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


def _lifetime(options: HookOptions) -> int:
    """Seconds a session's state outlives its last event: ``--state-ttl``, else
    ``$HARNESSWEAVER_HOOK_STATE_TTL``, else the default."""
    if options.state_ttl is not None:
        return options.state_ttl
    from .lifetime import LifetimeError, ttl_from_env

    try:
        return ttl_from_env()
    except LifetimeError as exc:
        raise HookError(str(exc)) from None


def _now() -> float:
    from . import store

    return store.now()


def _state_path(options: HookOptions) -> Path:
    from .store import default_path

    return options.state or default_path()


def _open(path: Path) -> Store:
    import sqlite3

    from .store import Store

    try:
        return Store(path)
    except (OSError, sqlite3.Error) as exc:
        raise HookError(f"cannot open the state database: {type(exc).__name__}") from None
