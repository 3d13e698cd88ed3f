"""Typed, immutable events: one pydantic model per hook point of the catalogue.

The JSON form of every model (``model_dump(mode="json")``) is pinned by
``conformance/catalogue.json``; the TypeScript implementation produces the same form.
Events are immutable all the way down (I18): setting an attribute, or changing a dict or a
list inside, raises ``TypeError``. Middleware change an event by returning
``Continue(modified=event.model_copy(update=...))``, or ``event.updated({...})`` for a change
deep inside (``docs/events.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, NoReturn, Self, TypeVar, get_origin

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidatorFunctionWrapHandler
from pydantic.functional_validators import WrapValidator

from .frozen import KEPT, FrozenDict, freeze, keep, refuse

__all__ = [
    "EVENT_TYPES",
    "Event",
    "Message",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelResponse",
    "ModelResponseEvent",
    "StepEndEvent",
    "StepStartEvent",
    "TaskEndEvent",
    "TaskStartEvent",
    "ToolCall",
    "ToolCallEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Usage",
]


def _frozen(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return freeze(handler(value))


FrozenJson = Annotated[JsonValue, WrapValidator(_frozen)]
"""A JSON value held frozen: objects as ``FrozenDict``, arrays as ``FrozenList``."""
FrozenObject = Annotated[dict[str, JsonValue], WrapValidator(_frozen)]
"""A JSON object held frozen (a ``FrozenDict``)."""


_Model = TypeVar("_Model", bound=BaseModel)


class _Frozen(BaseModel):
    """A model no one can change in place: attributes, and the dicts and lists inside (I18)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    __tuple_fields__: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        keep(cls)
        cls.__tuple_fields__ = frozenset(
            name for name, info in cls.model_fields.items() if get_origin(info.annotation) is tuple
        )

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        refuse(self, f"set .{name}")

    def __delattr__(self, name: str) -> NoReturn:
        refuse(self, f"delete .{name}")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied (not validated, as in pydantic), its dicts and lists
        frozen on the way in: a list given for a tuple field becomes a tuple."""
        if update:
            for value in update.values():
                if type(value) not in KEPT:  # mostly models and scalars: nothing to freeze
                    update = self._frozen_update(update)
                    break
        return BaseModel.model_copy(self, update=update, deep=deep)

    def _frozen_update(self, update: Mapping[str, Any]) -> dict[str, Any]:
        tuples = self.__tuple_fields__
        return {
            name: tuple(freeze(v) for v in value)
            if name in tuples and type(value) is list
            else freeze(value)
            for name, value in update.items()
        }

    def updated(self, changes: Mapping[str, Any]) -> Self:
        """A copy with the value at each dotted path of ``changes`` replaced, however deep:
        ``event.updated({"call.arguments.amount_usd": 0})``. A path names attributes of
        models, keys of JSON objects (an absent key is added) and indices of lists."""
        return _updated(self, _split(changes))  # type: ignore[no-any-return]


class ToolCall(_Frozen):
    """A call of a tool as the model asked for it."""

    id: str = ""
    name: str = ""
    arguments: FrozenObject = Field(default_factory=FrozenDict)

    def arguments_as(self, model: type[_Model]) -> _Model:
        """The arguments validated into ``model``, a pydantic model of the tool's parameters:
        typed access for a middleware (``event.call.arguments_as(RefundArgs).amount_usd``),
        where ``arguments`` holds untyped JSON. Arguments that do not fit raise pydantic's
        ``ValidationError``; raised in a middleware, that is a failure its fail mode resolves
        (closed: the call is blocked), never a call let through unread."""
        return model.model_validate(self.arguments)


class Message(_Frozen):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class ToolSpec(_Frozen):
    """A tool as offered to the model: its name, description and JSON Schema parameters."""

    name: str
    description: str = ""
    parameters: FrozenObject = Field(default_factory=FrozenDict)


class ToolResult(_Frozen):
    output: FrozenJson = None
    is_error: bool = False
    truncated: bool = False


class Usage(_Frozen):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ModelRequest(_Frozen):
    model: str = ""
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()


class ModelResponse(_Frozen):
    message: Message
    stop_reason: str = "end_turn"
    usage: Usage = Usage()


class Event(_Frozen):
    """Base class of every hook point's event."""


class TaskStartEvent(Event):
    """``task.start``: a task begins."""

    task: str = ""
    input: FrozenJson = None


class StepStartEvent(Event):
    """``step.start``: a step of the run loop begins."""

    step: int = 0
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()


class ModelRequestEvent(Event):
    """``model.before``: the request about to be sent to the model."""

    step: int = 0
    request: ModelRequest


class ModelResponseEvent(Event):
    """``model.after``: the model's response."""

    step: int = 0
    response: ModelResponse


class ToolCallEvent(Event):
    """``tool.before``: a tool call about to run (``event.tool.name``, ``event.call.arguments``)."""

    step: int = 0
    tool: ToolSpec
    call: ToolCall


class ToolResultEvent(Event):
    """``tool.after``: a tool call and its result."""

    step: int = 0
    tool: ToolSpec
    call: ToolCall
    result: ToolResult = ToolResult()


class StepEndEvent(Event):
    """``step.end``: a step finished, with the usage it cost."""

    step: int = 0
    usage: Usage = Usage()


class TaskEndEvent(Event):
    """``task.end``: the task finished, with its output and exit reason."""

    output: FrozenJson = None
    exit_reason: str = "completed"
    steps: int = 0
    usage: Usage = Usage()


Changes = dict[str, Any]  # the rest of a path -> its new value ("" for the value itself)


def _split(changes: Mapping[str, Any]) -> dict[str, Changes]:
    """``{"a.b.c": v}`` as ``{"a": {"b.c": v}}``: the changes under each first step."""
    grouped: dict[str, Changes] = {}
    for path, value in changes.items():
        head, _, rest = str(path).partition(".")
        grouped.setdefault(head, {})[rest] = value
    return grouped


def _updated(value: Any, steps: dict[str, Changes]) -> Any:
    """``value`` with each first step's changes applied below it."""
    if isinstance(value, _Frozen):
        known = type(value).model_fields
        for name in steps:
            if name not in known:
                raise ValueError(f"{type(value).__name__} has no field {name!r}")
        new = {name: _apply(getattr(value, name), rest) for name, rest in steps.items()}
        return value.model_copy(update=new)
    if isinstance(value, Mapping):
        items = dict(value)
        for key, rest in steps.items():
            items[key] = _apply(items.get(key), rest)
        return items
    if isinstance(value, list | tuple):
        seq = list(value)
        for key, rest in steps.items():
            if not key.isdigit() or int(key) >= len(seq):
                raise IndexError(f"no item {key!r} in a sequence of {len(seq)}")
            seq[int(key)] = _apply(seq[int(key)], rest)
        return seq if isinstance(value, list) else tuple(seq)
    if value is None:
        return _updated({}, steps)  # a path through an absent key makes the object
    raise TypeError(f"cannot follow a path into a {type(value).__name__}")


def _apply(value: Any, rest: Changes) -> Any:
    if "" in rest:
        if len(rest) > 1:
            raise ValueError("updated() got a path and a path inside it")
        return rest[""]
    return _updated(value, _split(rest))


EVENT_TYPES: dict[str, type[Event]] = {
    "task.start": TaskStartEvent,
    "step.start": StepStartEvent,
    "model.before": ModelRequestEvent,
    "model.after": ModelResponseEvent,
    "tool.before": ToolCallEvent,
    "tool.after": ToolResultEvent,
    "step.end": StepEndEvent,
    "task.end": TaskEndEvent,
}
"""The event type of every hook point, in catalogue order."""
