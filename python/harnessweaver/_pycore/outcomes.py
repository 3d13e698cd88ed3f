"""Outcomes and the hook result, in pure Python (the Rust core has the same in ``outcome.rs``).

Outcomes sit on the hot path, so they are small slotted, immutable classes rather than
pydantic models (``shared/research/perf-baseline.md``: a pydantic outcome costs ~5x more).
They are final: the core classifies answers by exact type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Final, NoReturn, cast

from .._plain import IMMUTABLE, final, uncopyable
from .duration import parse_duration_ns

__all__ = [
    "MAX_REASON_CHARS",
    "MAX_TOKEN_CHARS",
    "Block",
    "Continue",
    "Escalate",
    "HookResult",
    "HookWarning",
    "Retry",
    "Suspend",
    "has_invalid_text",
]

_set = object.__setattr__
_NO_WARNINGS: tuple[str, ...] = ()  # an outcome given no warnings holds this one tuple (I24)


def _warnings(value: Any) -> Any:
    """Kept as given, judged by the walk when it takes the answer (I24)."""
    return _NO_WARNINGS if value is None else value


def _text(owner: str, field: str, value: object, optional: bool) -> str | None:
    if isinstance(value, str) or (optional and value is None):
        return value
    wanted = "a str or None" if optional else "a str"
    raise TypeError(f"{owner}.{field} must be {wanted}, got {value!r}")


MAX_REASON_CHARS: Final = 4096
"""The longest ``reason`` an answer may hold, in characters (code points) (I28)."""
MAX_TOKEN_CHARS: Final = 128
"""The longest ``code``, ``approver_role`` or ``to`` an answer may hold (I28)."""


def has_invalid_text(outcome: _Outcome) -> bool:
    """Whether a text of ``outcome`` holds a lone surrogate, which no trace or JSON can carry
    (I16), or is longer than its bound (I28): the walk judges such an answer an invalid return.
    Only ``str``'s own methods run on a text, never a subclass's. Only called for outcomes other
    than Continue, off the common path."""
    for field in outcome._fields:
        text = getattr(outcome, field)
        if not isinstance(text, str):
            continue
        bound = MAX_REASON_CHARS if field == "reason" else MAX_TOKEN_CHARS
        if str.__len__(text) > bound:
            return True
        if not str.isascii(text):
            try:
                str.encode(text, "utf-8")
            except UnicodeEncodeError:
                return True
    return False


class _Outcome:
    __slots__ = ("warnings",)
    warnings: Any
    """The warnings as given (I24): a list or tuple of ``str``; ``()`` when none were."""
    kind: ClassVar[str]
    _fields: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if _Outcome not in cls.__bases__:
            raise TypeError(f"{cls.__bases__[0].__name__} is final; outcomes cannot be subclassed")

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values() and self.warnings == other.warnings

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self._values()))

    def _given(self) -> tuple[object, ...]:
        """The fields, and the warnings after them when some were given."""
        given = self.warnings is not _NO_WARNINGS
        return (*self._values(), self.warnings) if given else self._values()

    def __repr__(self) -> str:
        names = (*self._fields, "warnings")
        args = ", ".join(f"{f}={v!r}" for f, v in zip(names, self._given(), strict=False))
        return f"{type(self).__name__}({args})"

    def __reduce__(self) -> tuple[type[_Outcome], tuple[object, ...]]:
        return (type(self), self._given())

    def to_dict(self) -> dict[str, object]:
        """The JSON form of INTERPRETING.md §6.2."""
        return {"kind": self.kind, **{f: getattr(self, f) for f in self._fields}}


class Continue(_Outcome):
    """Let the event through, optionally replaced by ``modified`` for everything after."""

    __slots__ = ("modified",)
    __match_args__ = ("modified",)
    kind = "continue"
    _fields = ("modified",)
    modified: Any

    def __init__(self, modified: Any = None, warnings: Sequence[str] | None = None) -> None:
        _set(self, "modified", modified)
        _set(self, "warnings", _warnings(warnings))

    def to_dict(self) -> dict[str, object]:
        return {"kind": "continue", "modified": self.modified is not None}


class Block(_Outcome):
    """Stop: nothing after this middleware runs, and the operation does not happen."""

    __slots__ = ("code", "reason")
    __match_args__ = ("reason", "code")
    kind = "block"
    _fields = ("reason", "code")
    reason: str
    code: str | None

    def __init__(
        self, reason: str, code: str | None = None, warnings: Sequence[str] | None = None
    ) -> None:
        _set(self, "reason", _text("Block", "reason", reason, False))
        _set(self, "code", _text("Block", "code", code, True))
        _set(self, "warnings", _warnings(warnings))


class Suspend(_Outcome):
    """Pause until someone (``approver_role``) approves."""

    __slots__ = ("approver_role", "code", "reason")
    __match_args__ = ("reason", "approver_role", "code")
    kind = "suspend"
    _fields = ("reason", "approver_role", "code")
    reason: str
    approver_role: str | None
    code: str | None

    def __init__(
        self,
        reason: str,
        approver_role: str | None = None,
        code: str | None = None,
        warnings: Sequence[str] | None = None,
    ):
        _set(self, "reason", _text("Suspend", "reason", reason, False))
        _set(self, "approver_role", _text("Suspend", "approver_role", approver_role, True))
        _set(self, "code", _text("Suspend", "code", code, True))
        _set(self, "warnings", _warnings(warnings))


class Escalate(_Outcome):
    """Hand the decision to someone else (``to``)."""

    __slots__ = ("code", "reason", "to")
    __match_args__ = ("reason", "to", "code")
    kind = "escalate"
    _fields = ("reason", "to", "code")
    reason: str
    to: str | None
    code: str | None

    def __init__(
        self,
        reason: str,
        to: str | None = None,
        code: str | None = None,
        warnings: Sequence[str] | None = None,
    ) -> None:
        _set(self, "reason", _text("Escalate", "reason", reason, False))
        _set(self, "to", _text("Escalate", "to", to, True))
        _set(self, "code", _text("Escalate", "code", code, True))
        _set(self, "warnings", _warnings(warnings))


def _delay(value: object) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration_ns(value) / 1e9
    except ValueError:
        raise ValueError(
            "Retry.delay must be a positive number of seconds or a duration such as 250ms, "
            f"got {value!r} (ruling 15)"
        ) from None


def _max_attempts(value: object) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ValueError(f"Retry.max_attempts must be a whole number of at least 1, got {value!r}")


class Retry(_Outcome):
    """Do the operation again, after ``delay`` seconds, at most ``max_attempts`` times."""

    __slots__ = ("code", "delay", "max_attempts", "reason")
    __match_args__ = ("reason", "delay", "max_attempts", "code")
    kind = "retry"
    _fields = ("reason", "delay", "max_attempts", "code")
    reason: str
    delay: float | None
    max_attempts: int | None
    code: str | None

    def __init__(
        self,
        reason: str,
        delay: float | str | None = None,
        max_attempts: int | None = None,
        code: str | None = None,
        warnings: Sequence[str] | None = None,
    ) -> None:
        _set(self, "reason", _text("Retry", "reason", reason, False))
        _set(self, "delay", _delay(delay))
        _set(self, "max_attempts", _max_attempts(max_attempts))
        _set(self, "code", _text("Retry", "code", code, True))
        _set(self, "warnings", _warnings(warnings))


@final("harnessweaver.HookWarning")
class HookWarning:
    """One warning on a ``HookResult`` (I24): the middleware that gave it and its text."""

    __slots__ = ("middleware", "text")
    __match_args__ = ("middleware", "text")
    middleware: str
    text: str

    def __init__(self, middleware: str, text: str) -> None:
        _set(self, "middleware", _text("HookWarning", "middleware", middleware, False))
        _set(self, "text", _text("HookWarning", "text", text, False))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"HookWarning is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"HookWarning is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not HookWarning:
            return NotImplemented
        return (self.middleware, self.text) == (other.middleware, other.text)

    def __hash__(self) -> int:
        return hash(("HookWarning", self.middleware, self.text))

    def __repr__(self) -> str:
        return f"HookWarning(middleware={self.middleware!r}, text={self.text!r})"

    def __reduce__(self) -> tuple[type[HookWarning], tuple[str, str]]:
        return (HookWarning, (self.middleware, self.text))


class _ResultSlots:
    """Where a HookResult keeps its fields; ``_Building`` shares the layout without the guard."""

    __slots__ = ("_warned", "event", "outcome")
    event: Any
    outcome: Any
    _warned: tuple[HookWarning, ...]  # set only when there are some: an emit stores nothing

    @property
    def warnings(self) -> tuple[HookWarning, ...]:
        """The warnings of the answers the bus took, in run order (I24); ``()`` when none."""
        try:
            return self._warned
        except AttributeError:
            return ()


@final("harnessweaver.HookResult")
@uncopyable("HookResult", IMMUTABLE)
class HookResult(_ResultSlots):
    """What ``emit`` returns: the combined ``outcome``, the ``event`` as the chain left it and
    the ``warnings`` of the answers the bus took, in the order the middleware ran (I24)."""

    __slots__ = ()
    __match_args__ = ("outcome", "event")
    outcome: Continue | Block | Suspend | Escalate | Retry
    event: Any

    def __init__(
        self,
        outcome: Continue | Block | Suspend | Escalate | Retry,
        event: Any,
        warnings: Iterable[HookWarning] | None = None,
    ) -> None:
        items = () if warnings is None else tuple(warnings)
        for item in items:
            if type(item) is not HookWarning:
                raise TypeError(f"HookResult.warnings must hold HookWarning items, got {item!r}")
        _set(self, "outcome", outcome)
        _set(self, "event", event)
        if items:
            _set(self, "_warned", items)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"HookResult is immutable; cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not HookResult:
            return NotImplemented
        return (
            self.outcome == other.outcome
            and self.event == other.event
            and self.warnings == other.warnings
        )

    __hash__ = None  # type: ignore[assignment]  # events hold dicts

    def __repr__(self) -> str:
        return f"HookResult(outcome={self.outcome!r}, event={self.event!r})"


# Public under the package's name, like the Rust core's classes (repr, pickling, docs).
for _cls in (
    Continue,
    Block,
    Suspend,
    Escalate,
    Retry,
    HookResult,
    HookWarning,
):
    _cls.__module__ = "harnessweaver"


class _Building(_ResultSlots):
    """A HookResult being filled in by a core: plain attribute stores, no guard."""

    __slots__ = ()


def hook_result(outcome: Any, event: Any) -> HookResult:
    """A HookResult built without the constructor's immutability guard (the core's own path).

    Filled in as a ``_Building`` and then made a ``HookResult`` (the two share one layout, so
    ``__class__`` may change): a third of the cost of setting the guarded slots through their
    descriptors, which was a quarter of an emit without middleware.
    """
    result = _Building()
    result.outcome = outcome
    result.event = event
    result.__class__ = HookResult  # type: ignore[assignment]
    return cast(HookResult, result)


def warned_result(outcome: Any, event: Any, warnings: tuple[HookWarning, ...]) -> HookResult:
    """``hook_result`` with warnings (I24): a function of its own, so that an emit without
    any (``hook_result``) does exactly what it did before them."""
    result = _Building()
    result.outcome = outcome
    result.event = event
    result._warned = warnings
    result.__class__ = HookResult  # type: ignore[assignment]
    return cast(HookResult, result)
