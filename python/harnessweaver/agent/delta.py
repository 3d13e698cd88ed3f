"""Journal format 2: each line holds what changed since the line before, not the whole state.

Format 1 wrote every line's whole state, conversation included, so a journal grew with the
square of the steps. Format 2 writes a state as a *delta* against the state the line before
left the run in (its :func:`~.lines.resumable_state`, the *base*):

- a field of :class:`RunState` is written only when it differs from the base's (a line with
  no base, the first of a journal, writes every field that differs from its default);
- a list of messages is ``{"keep": k, "add": [...]}``: the first ``k`` messages of a
  reference list, then the messages written. The reference of ``state.messages`` is the
  base's; of a step in flight, its ``before`` state's; of a request, its step's messages
  (a step line: the messages of the state before the step);
- a step in flight writes its ``before`` state as a delta against the same base;
- a pending approval's event that holds the conversation (``step.start``'s messages,
  ``model.before``'s request) writes it against the state's messages; so does an
  approver's edit of such an event (I23), against the messages of the state it was made in;
- a list of tools is left out when it is the reference's: the last step line's request
  tools (a request in flight: its step's).

A value is unchanged only when it is written the same (``_same``). So a step writes its new
messages, its request's changes, the response and the tool messages, and a few numbers.
Decoding applies the same rules in the same order, so the states read back are the states
written, to the byte of their JSON: resume is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from pydantic import BaseModel, TypeAdapter

from ..events import Message, ModelRequest, ToolSpec
from .lines import DecisionLine, EndLine, Line, StartLine, resumable_state
from .state import Action, Decision, PendingApproval, RunState, StepRecord, StepState

__all__ = ["FORMAT", "Base", "decode_line", "encode_line"]

FORMAT: Final = 2
"""The ``v`` of every line this module writes; format 1 lines have no ``v``."""

Json = dict[str, Any]
T = TypeVar("T")

_STATE_FIELDS: Final = tuple(RunState.model_fields)
_STATE_DEFAULTS: Final = {
    name: info.get_default(call_default_factory=True)
    for name, info in RunState.model_fields.items()
    if not info.is_required()
}


@dataclass(frozen=True, slots=True)
class Base:
    """What the next line is written against: the state the last line left the run in, and
    the tools of the last step line's request."""

    state: RunState | None = None
    tools: tuple[ToolSpec, ...] = ()

    def after(self, line: Line) -> Base:
        tools = line.action.request.tools if isinstance(line, StepRecord) else self.tools
        return Base(resumable_state(line), tools)


def _dump(model: BaseModel) -> Json:
    return model.model_dump(mode="json", exclude_defaults=True)


_ANY: Final[TypeAdapter[Any]] = TypeAdapter(Any)


def _same(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are written the same: equal is not enough, as ``1``, ``1.0``
    and ``true`` are equal in Python. Identity first: most values a line is compared with are
    the very objects the line before held."""
    return a is b or (a == b and _ANY.dump_json(a) == _ANY.dump_json(b))


def _kept(new: Sequence[T], old: Sequence[T]) -> int:
    """How many first items ``new`` shares with ``old``."""
    most = min(len(new), len(old))
    k = 0
    while k < most and _same(new[k], old[k]):
        k += 1
    return k


def _same_items(new: Sequence[T], old: Sequence[T]) -> bool:
    """``_same`` item by item (a list is often a new tuple of the same objects)."""
    return len(new) == len(old) == _kept(new, old)


def _messages(new: Sequence[Message], ref: Sequence[Message]) -> Json:
    k = _kept(new, ref)
    return {"keep": k, "add": [_dump(message) for message in new[k:]]}


def _unmessages(raw: Json, ref: Sequence[Message]) -> tuple[Message, ...]:
    keep = raw["keep"]
    if not isinstance(keep, int) or isinstance(keep, bool) or not 0 <= keep <= len(ref):
        raise ValueError(f"keep {keep!r}: the reference list has {len(ref)} messages")
    return (*ref[:keep], *(Message.model_validate(item) for item in raw["add"]))


def _request(request: ModelRequest, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Json:
    out: Json = {"model": request.model, "messages": _messages(request.messages, messages)}
    if not _same_items(request.tools, tools):
        out["tools"] = [_dump(spec) for spec in request.tools]
    return out


def _unrequest(raw: Json, messages: Sequence[Message], tools: tuple[ToolSpec, ...]) -> ModelRequest:
    return ModelRequest.model_validate(
        {
            "model": raw["model"],
            "messages": _unmessages(raw["messages"], messages),
            "tools": raw.get("tools", tools),
        }
    )


_EVENT_CONVERSATIONS: Final = ((), ("request",))
"""Where a pending event holds a conversation, ``messages``: in ``step.start``'s event, and
in the request of ``model.before``'s."""


def _holder(event: Json, path: tuple[str, ...]) -> Json | None:
    """A copy of the object at ``path`` in ``event`` (copied along the way), or ``None``."""
    holder = event
    for key in path:
        inner = holder.get(key)
        if not isinstance(inner, dict):
            return None
        holder[key] = inner = dict(inner)
        holder = inner
    return holder


def _event(event: Json, messages: Sequence[Message]) -> Json:
    """A copy of ``event`` (JSON), each conversation it holds as a delta against
    ``messages`` (a ``step.start`` or ``model.before`` event holds all of them)."""
    event = dict(event)
    ref: list[Json] | None = None
    for path in _EVENT_CONVERSATIONS:
        holder = _holder(event, path)
        listed = None if holder is None else holder.get("messages")
        if holder is None or not isinstance(listed, list):
            continue
        if ref is None:
            ref = [message.model_dump(mode="json") for message in messages]
        k = _kept(listed, ref)
        holder["messages"] = {"keep": k, "add": listed[k:]}
    return event


def _unevent(event: Json, messages: Sequence[Message]) -> Json:
    event = dict(event)
    for path in _EVENT_CONVERSATIONS:
        holder = _holder(event, path)
        delta = None if holder is None else holder.get("messages")
        if holder is None or not isinstance(delta, dict):
            continue
        kept = _unmessages({"keep": delta["keep"], "add": []}, messages)
        holder["messages"] = [
            *(message.model_dump(mode="json") for message in kept),
            *delta["add"],
        ]
    return event


def _pending(pending: PendingApproval, messages: Sequence[Message]) -> Json:
    """A pending approval, the conversation its event holds as a delta against the state's
    messages."""
    raw = _dump(pending)
    return {**raw, "event": _event(raw["event"], messages)}


def _unpending(raw: Json, messages: Sequence[Message]) -> PendingApproval:
    return PendingApproval.model_validate({**raw, "event": _unevent(raw["event"], messages)})


def _decision(decision: Decision, base: Base) -> Json:
    """A decision; an edit's event (I23) holds the conversation as a pending event does, as
    a delta against the messages of the state the decision was made in (the base)."""
    raw = _dump(decision)
    if decision.edited is None:
        return raw
    return {**raw, "edited": _event(raw["edited"], _base_messages(base))}


def _undecision(raw: Any, base: Base) -> Any:
    edited = raw.get("edited") if isinstance(raw, dict) else None
    if not isinstance(edited, dict):
        return raw
    return {**raw, "edited": _unevent(edited, _base_messages(base))}


def _base_messages(base: Base) -> tuple[Message, ...]:
    return () if base.state is None else base.state.messages


def _step(step: StepState, base: Base) -> Json:
    out: Json = {
        "number": step.number,
        "before": encode_state(step.before, base),
        "messages": _messages(step.messages, step.before.messages),
        "observation": [_dump(message) for message in step.observation],
        "usage": _dump(step.usage),
    }
    if not _same_items(step.tools, base.tools):
        out["tools"] = [_dump(spec) for spec in step.tools]
    if step.request is not None:
        out["request"] = _request(step.request, step.messages, step.tools)
    if step.response is not None:
        out["response"] = _dump(step.response)
    if step.call is not None:
        out["call"] = _dump(step.call)
    return out


def _unstep(raw: Json, base: Base) -> StepState:
    before = decode_state(raw["before"], base)
    messages = _unmessages(raw["messages"], before.messages)
    step_tools: tuple[ToolSpec, ...] = (
        tuple(ToolSpec.model_validate(item) for item in raw["tools"])
        if "tools" in raw
        else base.tools
    )
    request = raw.get("request")
    return StepState.model_validate(
        {
            "number": raw["number"],
            "before": before,
            "messages": messages,
            "tools": step_tools,
            "request": None if request is None else _unrequest(request, messages, step_tools),
            "response": raw.get("response"),
            "call": raw.get("call"),
            "observation": raw["observation"],
            "usage": raw["usage"],
        }
    )


def encode_state(state: RunState, base: Base) -> Json:
    """``state`` as what changed since ``base.state``."""
    ref = base.state
    out: Json = {}
    for name in _STATE_FIELDS:
        value = getattr(state, name)
        if ref is None:
            if name in _STATE_DEFAULTS and _same(value, _STATE_DEFAULTS[name]):
                continue
        elif name == "messages":
            if _same_items(value, ref.messages):
                continue
        elif _same(value, getattr(ref, name)):
            continue
        if name == "messages":
            out[name] = _messages(value, () if ref is None else ref.messages)
        elif name == "step":
            out[name] = None if value is None else _step(value, base)
        elif name == "pending":
            out[name] = None if value is None else _pending(value, state.messages)
        else:
            out[name] = state.model_dump(mode="json", include={name})[name]
    return out


def decode_state(raw: Json, base: Base) -> RunState:
    """The state ``raw`` describes against ``base.state``."""
    ref = base.state
    values: Json = {} if ref is None else {name: getattr(ref, name) for name in _STATE_FIELDS}
    unknown = raw.keys() - set(_STATE_FIELDS)
    if unknown:
        raise ValueError(f"state fields {sorted(unknown)}: a run state has no such field")
    for name in _STATE_FIELDS:  # in order: the pending event refers to the messages
        if name not in raw:
            continue
        item = raw[name]
        if name == "messages":
            values[name] = _unmessages(item, () if ref is None else ref.messages)
        elif name == "step":
            values[name] = None if item is None else _unstep(item, base)
        elif name == "pending":
            messages = values.get("messages", ())
            values[name] = None if item is None else _unpending(item, messages)
        else:
            values[name] = item
    return RunState.model_validate(values)


def encode_line(line: Line, base: Base) -> Json:
    """A journal line in format 2, against the base the lines before it leave."""
    head: Json = {"v": FORMAT, "kind": line.kind, "run_id": line.run_id}
    if line.warnings:
        head["warnings"] = [_dump(warning) for warning in line.warnings]
    state = encode_state(line.state, base)
    if isinstance(line, StartLine):
        return {**head, "state": state}
    if isinstance(line, StepRecord):
        request = _request(line.action.request, line.state.messages, base.tools)
        return {
            **head,
            "step": line.step,
            "state": state,
            "request": request,
            "response": _dump(line.action.response),
            "observation": [_dump(message) for message in line.observation],
            "usage": _dump(line.usage),
            "elapsed_s": line.elapsed_s,
        }
    if isinstance(line, DecisionLine):
        decision = _decision(line.decision, base)
        approval = {} if line.approval is None else {"approval": line.approval}
        return {**head, "hook": line.hook, "decision": decision, **approval, "state": state}
    return {
        **head,
        "exit": _dump(line.exit),
        "output": line.output,
        "steps": line.steps,
        "usage": _dump(line.usage),
        "state": state,
    }


def decode_line(raw: Json, base: Base) -> Line:
    """The line a format 2 ``raw`` line describes (``ValueError`` or pydantic's
    ``ValidationError`` when it does not describe one)."""
    kind = raw.get("kind")
    head = {"kind": kind, "run_id": raw["run_id"], "warnings": raw.get("warnings", ())}
    state = decode_state(raw["state"], base)
    if kind == "start":
        return StartLine.model_validate({**head, "state": state})
    if kind == "step":
        request = _unrequest(raw["request"], state.messages, base.tools)
        action = Action.model_validate({"request": request, "response": raw["response"]})
        fields = ("step", "observation", "usage", "elapsed_s")
        return StepRecord.model_validate(
            {**head, "state": state, "action": action, **{name: raw[name] for name in fields}}
        )
    if kind == "decision":
        decision = _undecision(raw["decision"], base)
        approval = raw.get("approval")
        return DecisionLine.model_validate(
            {
                **head,
                "hook": raw["hook"],
                "decision": decision,
                "approval": approval,
                "state": state,
            }
        )
    if kind == "end":
        fields = ("exit", "output", "steps", "usage")
        return EndLine.model_validate({**head, "state": state, **{n: raw[n] for n in fields}})
    raise ValueError(f"kind {kind!r}: a line is a start, step, decision or end")
