"""The corpus's closed behaviour vocabulary (INTERPRETING.md §3), implemented natively.

A declaration from a case becomes a real ``@hw.middleware`` function whose body does what its
behaviour says: return an outcome, modify the event, raise, sleep, block, branch, register.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
from pydantic import BaseModel

import harnessweaver as hw

from .cedar import CedarBehaviour

__all__ = ["RAN", "Behaviours", "CaseFault", "exception_type", "json_equal", "mutate"]


class CaseFault(BaseException):
    """A behaviour the runner cannot carry out: the case is at fault, not the middleware.

    A ``BaseException`` so the bus lets it through instead of recording a failure; the testee
    reports the case as errored (INTERPRETING.md §3).
    """


RAN: ContextVar[list[str]] = ContextVar("harnessweaver_conformance_ran")
"""The ``ran`` list of the emit in progress (a context variable, so concurrent emits differ)."""

_MADE: dict[str, type[Exception]] = {}


def exception_type(name: str) -> type[Exception]:
    """The built-in exception class ``name``, or an ``Exception`` subclass of that name."""
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    if name not in _MADE:
        _MADE[name] = type(name, (Exception,), {})
    return _MADE[name]


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: key order never matters, 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(json_equal, a, b))
    return type(a) is type(b) and a == b


_ABSENT = object()


def _lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return _ABSENT
    return data


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        data = data[int(part)] if isinstance(data, list) else data.setdefault(part, {})
    if isinstance(data, list):
        data[int(last)] = value
    else:
        data[last] = value


def json_form(event: Any) -> Any:
    """The event's JSON form (§6.3) as fresh lists and dicts: every key as the event holds it
    (pydantic's JSON mode would write a lone surrogate in a key as U+FFFD)."""
    return json.loads(json.dumps(event.model_dump()))


def modified(event: Any, change: dict[str, Any]) -> Any:
    """A copy of ``event`` with the ``set`` and ``append`` changes of §3 applied."""
    data = json_form(event)
    for path, value in change.get("set", {}).items():
        _put(data, path, copy.deepcopy(value))
    for path, value in change.get("append", {}).items():
        current = _lookup(data, path)
        items = [] if current is _ABSENT or current is None else list(current)
        _put(data, path, [*items, copy.deepcopy(value)])
    return type(event).model_validate(data)


async def _stray_cancellation() -> None:
    """Raise the runtime's cancellation while the caller is not being cancelled (I15): under
    asyncio by awaiting a future someone else cancelled; trio has no such future, so its
    ``Cancelled`` is raised outright."""
    if asyncio._get_running_loop() is None:
        import trio

        raise trio.Cancelled._create()
    future = asyncio.get_running_loop().create_future()
    future.cancel()
    await future


def _step(here: Any, part: str, path: str) -> Any:
    """One step of a path into a live event: a model's field, an object's key, a list's item."""
    if isinstance(here, BaseModel) and part in type(here).model_fields:
        return getattr(here, part)
    if isinstance(here, Mapping) and part in here:
        return here[part]
    listed = isinstance(here, Sequence) and not isinstance(here, str)
    if listed and part.isdigit() and int(part) < len(here):
        return here[int(part)]
    raise CaseFault(f"mutate: {path} leads nowhere in the event")


def mutate(event: Any, change: dict[str, Any]) -> None:
    """Tries to change ``event`` itself (§3 ``mutate``): for each ``set`` path, assigns the
    value there in place, as a careless middleware would. Events refuse it (I18): the
    ``TypeError`` raised is the middleware's failure."""
    for path, value in change["set"].items():
        *parents, last = path.split(".")
        here = event
        for part in parents:
            here = _step(here, part, path)
        if isinstance(here, BaseModel):
            setattr(here, last, copy.deepcopy(value))
        elif isinstance(here, Sequence) and not isinstance(here, str):
            here[int(last)] = copy.deepcopy(value)  # type: ignore[index]
        else:
            here[last] = copy.deepcopy(value)


class Behaviours:
    """Turns a case's declarations into middleware for one run of the case."""

    def __init__(
        self,
        samples: dict[str, Any],
        register: Callable[[dict[str, Any]], None],
        unregister: Callable[[str], object],
    ) -> None:
        self._samples = samples
        self._register = register
        self._unregister = unregister
        self._calls: dict[int, int] = {}
        self._cedar: dict[int, CedarBehaviour] = {}

    def sample(self, hook: str) -> Any:
        return hw.EVENT_TYPES[hook].model_validate(self._samples[hook])

    def function(self, name: str, behaviour: dict[str, Any]) -> Callable[..., Any]:
        """An async middleware body named ``name`` doing ``behaviour``."""

        async def body(event: Any, env: hw.Envelope) -> Any:
            RAN.get().append(name)
            return await self.perform(behaviour, event, env)

        body.__name__ = body.__qualname__ = "behaviour"
        return body

    async def perform(self, b: dict[str, Any], event: Any, env: hw.Envelope) -> Any:
        if "return" in b:
            return self._outcome(b, event)
        if "raise" in b:
            raise exception_type(b["raise"])(b.get("message", ""))
        if "raise_cancelled" in b:
            await _stray_cancellation()
        if "sleep" in b:
            await anyio.sleep(b["sleep"])
            return await self.perform(b["then"], event, env)
        if "busy" in b:
            time.sleep(b["busy"])  # never suspends: the bus cannot interrupt it
            return await self.perform(b["then"], event, env)
        if "if" in b:
            chosen = b["then"] if self._holds(b["if"], event, env) else b.get("else")
            return await self.perform(chosen or {"return": "none"}, event, env)
        if "sequence" in b:
            calls = self._calls.get(id(b), 0)
            self._calls[id(b)] = calls + 1
            steps = b["sequence"]
            return await self.perform(steps[min(calls, len(steps) - 1)], event, env)
        if "mutate" in b:
            mutate(event, b["mutate"])
            return await self.perform(b["then"], event, env)
        if "register" in b or "unregister" in b:
            self._change_bus(b)
            return await self.perform(b["then"], event, env)
        if "cedar" in b:  # I38: one engine per declaration, compiled on its first call
            engine = self._cedar.setdefault(id(b), CedarBehaviour(b["cedar"]))
            return engine.decide(event, env)
        raise CaseFault(f"unknown behaviour {b!r}")

    def _change_bus(self, b: dict[str, Any]) -> None:
        try:
            if "register" in b:
                self._register(b["register"])
            else:
                self._unregister(b["unregister"])
        except hw.HarnessweaverError as exc:
            raise CaseFault(f"the bus refused a behaviour's change: {exc}") from exc

    def _outcome(self, b: dict[str, Any], event: Any) -> Any:
        kind = b["return"]
        if kind == "none":
            return None
        if kind == "value":
            return b["value"]
        # I24: the JSON value as it is, whatever its type (invalid ones are the point).
        warnings = b.get("warnings")
        if kind == "continue":
            if "modify" in b:
                return hw.Continue(modified=modified(event, b["modify"]), warnings=warnings)
            if "modified_as" in b:
                return hw.Continue(modified=self.sample(b["modified_as"]), warnings=warnings)
            return hw.Continue(warnings=warnings)
        reason, code = b["reason"], b.get("code")
        if kind == "block":
            return hw.Block(reason, code=code, warnings=warnings)
        if kind == "suspend":
            return hw.Suspend(
                reason, approver_role=b.get("approver_role"), code=code, warnings=warnings
            )
        if kind == "escalate":
            return hw.Escalate(reason, to=b.get("to"), code=code, warnings=warnings)
        if kind == "retry":
            return hw.Retry(
                reason,
                delay=b.get("delay"),
                max_attempts=b.get("max_attempts"),
                code=code,
                warnings=warnings,
            )
        raise CaseFault(f"unknown return kind {kind!r}")

    def _holds(self, cond: dict[str, Any], event: Any, env: hw.Envelope) -> bool:
        if "weekend" in cond and env.clock.is_weekend() is not cond["weekend"]:
            return False
        if "path" in cond:
            value = _lookup(json_form(event), cond["path"])
            if "equals" in cond and (value is _ABSENT or not json_equal(value, cond["equals"])):
                return False
            if "greater_than" in cond and not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and value > cond["greater_than"]
            ):
                return False
        return True
