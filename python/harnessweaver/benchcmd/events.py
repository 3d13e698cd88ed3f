"""The events ``--events FILE`` gives ``harnessweaver bench``: an events file, or a run journal.

An events file is JSON Lines, one ``{"hook": "tool.before", "event": {...}}`` per line (the
event's JSON form, ``model_dump(mode="json")``); blank lines are ignored. A run journal (its
lines have a ``"kind"``, ``harnessweaver.agent.journal``) is read with the journal's own reader
and turned into the events the run's hook points saw. :func:`dump_events` writes an events
file: what the Node command reads, as it reads no journal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..events import (
    EVENT_TYPES,
    Event,
    Message,
    ModelRequestEvent,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
)
from ..jsondepth import nests_deeper

__all__ = ["EventsError", "Timed", "dump_events", "grouped", "read_events"]

Timed = list[tuple[str, Event]]
"""Events in the order they were read, each with its hook point."""

_HOOKS = ", ".join(EVENT_TYPES)
MAX_DEPTH = 128
"""How deep a line may nest arrays and objects: pydantic stops near 254 levels, and an event's
own fields take a few (jsondepth.py)."""


class EventsError(Exception):
    """An events file or journal that cannot be read: the message names the file and line."""


def read_events(path: str | os.PathLike[str]) -> Timed:
    """The events of ``path``: an events file, or a journal when its first line has a
    ``"kind"``. Raises :class:`EventsError` (``FILE:LINE: what``, FILE as given)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise EventsError(
            f"{path}: cannot read it ({exc.strerror or type(exc).__name__})"
        ) from None
    lines = data.split(b"\n")
    first = next((n for n, line in enumerate(lines, 1) if line.strip()), None)
    if first is None:
        raise EventsError(f"{path}: no events (the file is empty)")
    if _is_journal(lines[first - 1]):
        return _from_journal(Path(path))
    return [_event_line(path, number, line) for number, line in enumerate(lines, 1) if line.strip()]


def _is_journal(line: bytes) -> bool:
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        return False  # reported as the events file's bad line
    return isinstance(raw, dict) and "kind" in raw and "hook" not in raw


def _event_line(path: str | os.PathLike[str], number: int, line: bytes) -> tuple[str, Event]:
    where = f"{path}:{number}"
    try:
        raw: Any = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise EventsError(f"{where}: not UTF-8 (at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise EventsError(f"{where}: not JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise EventsError(f"{where}: not JSON this reader can follow (nested too deep)") from None
    if not isinstance(raw, dict) or set(raw) != {"hook", "event"}:
        got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise EventsError(
            f'{where}: a line is {{"hook": HOOK, "event": {{...}}}}, got {got} '
            '(a journal\'s lines have a "kind": give the journal whole)'
        )
    if nests_deeper(raw, MAX_DEPTH):
        raise EventsError(f"{where}: nests arrays and objects more than {MAX_DEPTH} deep")
    hook = raw["hook"]
    kind = EVENT_TYPES.get(hook) if isinstance(hook, str) else None
    if kind is None:
        raise EventsError(f"{where}: unknown hook {hook!r} (hook points: {_HOOKS})")
    try:
        return hook, kind.model_validate(raw["event"])
    except ValidationError as exc:
        raise EventsError(f"{where}: not a valid {hook} event: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    """The first problem and how many more, without the input (it may hold the run's data)."""
    problems = exc.errors(include_url=False, include_input=False)
    first = problems[0]
    place = ".".join(map(str, first["loc"])) or "(the event)"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{place}: {first['msg']}{more}"


def _from_journal(path: Path) -> Timed:
    """What the run's hook points saw, from its journal: ``task.start`` from the start line,
    each step's ``step.start``, ``model.before``, ``model.after``, a ``tool.before`` and
    ``tool.after`` per tool call answered, ``step.end``, and ``task.end`` from an end line."""
    from ..agent.errors import JournalError
    from ..agent.journal import read_journal
    from ..agent.lines import EndLine, StartLine
    from ..agent.state import StepRecord

    try:
        lines = read_journal(path)
    except JournalError as exc:
        raise EventsError(str(exc)) from None
    events: Timed = []
    for line in lines:
        if isinstance(line, StartLine):
            state = line.state
            events.append(("task.start", TaskStartEvent(task=state.task or "", input=state.input)))
        elif isinstance(line, StepRecord):
            events.extend(_step_events(line))
        elif isinstance(line, EndLine):
            end = TaskEndEvent(
                output=line.output,
                exit_reason=line.exit.exit_reason,
                steps=line.steps,
                usage=line.usage,
            )
            events.append(("task.end", end))
    if not events:
        raise EventsError(f"{path}: a journal with no start, step or end line: no events")
    return events


def _step_events(record: Any) -> Timed:
    """One journaled step's events, in the order the run emitted them."""
    number, request, response = record.step, record.action.request, record.action.response
    events: Timed = [
        (
            "step.start",
            StepStartEvent(step=number, messages=record.state.messages, tools=request.tools),
        ),
        ("model.before", ModelRequestEvent(step=number, request=request)),
        ("model.after", ModelResponseEvent(step=number, response=response)),
    ]
    tools = {tool.name: tool for tool in request.tools}
    answers = {m.tool_call_id: m for m in record.observation if m.tool_call_id}
    for call in response.message.tool_calls:
        tool = tools.get(call.name, ToolSpec(name=call.name))
        events.append(("tool.before", ToolCallEvent(step=number, tool=tool, call=call)))
        answer = answers.get(call.id)
        if answer is not None:
            events.append(("tool.after", _result_event(number, tool, call, answer)))
    events.append(("step.end", StepEndEvent(step=number, usage=record.usage)))
    return events


def _result_event(step: int, tool: ToolSpec, call: ToolCall, answer: Message) -> ToolResultEvent:
    """``tool.after`` from the tool message that answered ``call``: the loop writes a result
    as JSON text (anything but a string), so JSON text is read back as its value."""
    try:
        output: Any = json.loads(answer.content)
    except ValueError:
        output = answer.content
    return ToolResultEvent(step=step, tool=tool, call=call, result=ToolResult(output=output))


def grouped(events: Timed) -> dict[str, list[Event]]:
    """The events of each hook point, in catalogue order, each hook's in the order read."""
    by_hook: dict[str, list[Event]] = {}
    for hook in EVENT_TYPES:
        of_hook = [event for named, event in events if named == hook]
        if of_hook:
            by_hook[hook] = of_hook
    return by_hook


def dump_events(events: Iterable[tuple[str, Event]], out: Path) -> int:
    """Write ``events`` to ``out`` as an events file; the number written."""
    count = 0
    with open(out, "w", encoding="utf-8", newline="\n") as handle:
        for hook, event in events:
            line = {"hook": hook, "event": event.model_dump(mode="json")}
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count
