"""Immutable JSON values for events (I18): every container inside an event refuses change.

An event is a frozen pydantic model, and so is every model inside it; what is left are its
free-form JSON values (``call.arguments``, ``tool.parameters``, ``result.output``, ...). Those
are held as ``FrozenDict`` and ``FrozenList``: subclasses of ``dict`` and ``list`` (so they
compare equal to plain dicts and lists, ``json.dumps`` them, and validate wherever a dict or a
list does) whose every in-place change raises ``TypeError``. ``model_dump()`` turns them back
into plain dicts and lists, so an event's dumped form is what it always was.

The one way to change an event is a changed copy: ``event.model_copy(update=...)`` (whose
update values are frozen on the way in) or, for a change deep inside, ``event.updated(...)``
with dotted paths (``docs/events.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, SupportsIndex

__all__ = ["KEPT", "FrozenDict", "FrozenList", "freeze", "keep", "refuse"]


def refuse(holder: object, change: str) -> NoReturn:
    """Raise the ``TypeError`` every in-place change of an event's value raises (I18)."""
    raise TypeError(
        f"{type(holder).__name__} is immutable: cannot {change}; a middleware changes an event "
        "by returning Continue(modified=event.model_copy(update=...)) or event.updated(...)"
    )


class FrozenDict(dict[str, Any]):
    """A JSON object inside an event: a ``dict`` that refuses every in-place change."""

    __slots__ = ()

    def __new__(
        cls, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), /, **more: Any
    ) -> FrozenDict:
        return _frozen_dict(dict(items, **more))

    @classmethod
    def fromkeys(cls, keys: Iterable[str], value: Any = None, /) -> FrozenDict:  # type: ignore[override]
        return _frozen_dict(dict.fromkeys(keys, value))

    def __init__(self, *args: object, **more: object) -> None:
        """Filled by ``__new__``: ``dict.__init__`` would merge into an existing one."""

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        refuse(self, f"set [{key!r}]")

    def __delitem__(self, key: str) -> NoReturn:
        refuse(self, f"delete [{key!r}]")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        refuse(self, "update it with |=")

    def clear(self) -> NoReturn:
        refuse(self, "clear it")

    def pop(self, *args: Any) -> NoReturn:
        refuse(self, "pop from it")

    def popitem(self) -> NoReturn:
        refuse(self, "pop from it")

    def setdefault(self, *args: Any) -> NoReturn:
        refuse(self, "setdefault on it")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        refuse(self, "update it")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array inside an event: a ``list`` that refuses every in-place change."""

    __slots__ = ()

    def __new__(cls, items: Iterable[Any] = (), /) -> FrozenList:
        return _frozen_list(items)

    def __init__(self, *args: object) -> None:
        """Filled by ``__new__``: ``list.__init__`` would empty an existing one."""

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        refuse(self, f"set [{index!r}]")

    def __delitem__(self, index: Any) -> NoReturn:
        refuse(self, f"delete [{index!r}]")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        refuse(self, "extend it with +=")

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        refuse(self, "repeat it with *=")

    def append(self, item: Any) -> NoReturn:
        refuse(self, "append to it")

    def extend(self, items: Any) -> NoReturn:
        refuse(self, "extend it")

    def insert(self, index: SupportsIndex, item: Any) -> NoReturn:
        refuse(self, "insert into it")

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        refuse(self, "pop from it")

    def remove(self, item: Any) -> NoReturn:
        refuse(self, "remove from it")

    def clear(self) -> NoReturn:
        refuse(self, "clear it")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        refuse(self, "sort it")

    def reverse(self) -> NoReturn:
        refuse(self, "reverse it")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[Any]]]:
        return (FrozenList, (list(self),))


KEPT: set[type] = {str, int, float, bool, type(None), FrozenDict, FrozenList}
"""The types whose values are immutable all the way down: ``freeze`` keeps them as they are.
Every event model adds itself (``keep``)."""


def keep(cls: type) -> None:
    """Declare ``cls``'s instances immutable all the way down."""
    KEPT.add(cls)


def _frozen_dict(items: dict[str, Any]) -> FrozenDict:
    # Filled here rather than through the type call, which would run __init__ too.
    made = dict.__new__(FrozenDict)
    dict.update(made, items)
    for key, value in dict.items(made):  # replacing values of existing keys is safe here
        if type(value) not in KEPT:  # a loop: map(type, ...) calls type() the slow way
            dict.__setitem__(made, key, freeze(value))
    return made


def _frozen_list(items: Iterable[Any]) -> FrozenList:
    made = list.__new__(FrozenList)
    list.extend(made, items)
    for index, value in enumerate(made):
        if type(value) not in KEPT:
            list.__setitem__(made, index, freeze(value))
    return made


def freeze(value: Any) -> Any:
    """``value`` with every dict and list in it (at any depth) made a ``FrozenDict`` or
    ``FrozenList``; a tuple's items frozen likewise. Scalars, frozen values and event models
    (which freeze their own fields) are returned as they are."""
    kind = type(value)
    if kind in KEPT:
        return value
    if isinstance(value, dict):
        return _frozen_dict(value)
    if isinstance(value, list):
        return _frozen_list(value)
    if kind is tuple:
        return tuple(freeze(item) for item in value)
    return value
