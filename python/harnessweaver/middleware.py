"""``@hw.middleware``: declaring middleware on async functions and on classes.

The declaration is validated by the core when the decorator runs (ruling 14: ``fail_mode`` is
required; ruling 15: durations; R2: no ``open`` in the baseline band). A decorated function
becomes a :class:`Middleware`; a decorated class stays a class and carries its
:class:`MiddlewareSpec`, and is built as ``Cls(config)`` from validated settings.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ._select import core
from .errors import DeclarationError, RegistrationError

if TYPE_CHECKING:
    from ._pycore.declaration import Declaration
    from .envelope import Envelope
    from .outcomes import Outcome

__all__ = ["SAMPLE", "Middleware", "MiddlewareSpec", "build", "middleware", "spec_of"]

E = TypeVar("E")
T = TypeVar("T", bound=type)
MiddlewareFunc = Callable[[E, "Envelope"], Awaitable["Outcome | None"]]

_SPEC_ATTR = "__harnessweaver__"
_RULE = "writing-middleware"
SAMPLE = "harnessweaver.sample"
"""The validation-context key set while a declaration's ``sample`` settings are checked, at
import: a settings validator that checks the environment (an optional package installed, say)
skips that check for the sample, which must hold wherever the module imports."""


@dataclass(frozen=True, slots=True)
class MiddlewareSpec:
    """A middleware's declaration plus what it needs to be built."""

    declaration: Declaration
    target: Callable[..., Any]
    config: type[BaseModel] | None = None
    sample: Mapping[str, Any] | None = None
    state: bool = False
    """Declared ``state=True``: it keeps counts in a state store and has ``attach_state(view)``
    (``harnessweaver.state``), which the spec loader calls once after building it."""

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def is_class(self) -> bool:
        return isinstance(self.target, type)


class Middleware(Generic[E]):
    """An async function declared as middleware.

    Call it as the bus does: ``await mw(event, env)``.
    """

    spec: MiddlewareSpec
    __wrapped__: MiddlewareFunc[E]

    def __init__(self, func: MiddlewareFunc[E], spec: MiddlewareSpec) -> None:
        functools.update_wrapper(self, func)
        self.spec = spec

    def __call__(self, event: E, env: Envelope) -> Awaitable[Outcome | None]:
        return self.__wrapped__(event, env)

    def __repr__(self) -> str:
        decl = self.spec.declaration
        return f"<middleware {decl.name} hooks={list(decl.hooks)} band={decl.band}>"


def _error(message: str) -> DeclarationError:
    return DeclarationError("not_async", _RULE, message)


def _check_class(cls: type, config: object, sample: object) -> None:
    call = vars(cls).get("__call__") or next(
        (vars(base)["__call__"] for base in cls.__mro__ if "__call__" in vars(base)), None
    )
    if call is None or not inspect.iscoroutinefunction(call):
        raise _error(
            f"middleware class {cls.__name__} needs an `async def __call__(self, event, env)`"
        )
    if config is not None and not (isinstance(config, type) and issubclass(config, BaseModel)):
        raise DeclarationError(
            "invalid_config",
            _RULE,
            f"config of {cls.__name__} must be a pydantic model class, got {config!r}",
        )
    if sample is not None:
        if config is None:
            raise DeclarationError(
                "invalid_config", _RULE, f"{cls.__name__} has a sample but no config to validate it"
            )
        _settings(config, sample, cls.__name__, DeclarationError, {SAMPLE: True})  # type: ignore[arg-type]


@overload
def middleware(
    *,
    hooks: list[str] | tuple[str, ...],
    fail_mode: str = ...,
    band: str = "app",
    timeout: float | str | None = None,
    match: Mapping[str, str | Sequence[str]] | None = None,
    mode: str | None = None,
    name: str | None = None,
    config: None = None,
    sample: None = None,
    state: bool = False,
) -> Callable[[MiddlewareFunc[E] | T], Middleware[E] | T]: ...
@overload
def middleware(
    *,
    hooks: list[str] | tuple[str, ...],
    fail_mode: str = ...,
    band: str = "app",
    timeout: float | str | None = None,
    match: Mapping[str, str | Sequence[str]] | None = None,
    mode: str | None = None,
    name: str | None = None,
    config: type[BaseModel] | None = None,
    sample: Mapping[str, Any] | None = None,
    state: bool = False,
) -> Callable[[T], T]: ...
def middleware(
    *,
    hooks: Any,
    fail_mode: Any = core.MISSING,
    band: Any = "app",
    timeout: Any = None,
    match: Any = None,
    mode: Any = None,
    name: Any = None,
    config: Any = None,
    sample: Any = None,
    state: Any = False,
) -> Callable[[Any], Any]:
    """Declare an async function, or a class with an async ``__call__``, as middleware.

    ``hooks`` are the hook points it attaches to; ``fail_mode`` (required) is ``"closed"``
    (a raise or timeout blocks) or ``"open"`` (recorded, the run continues); ``band`` is only
    the default band; ``timeout`` a duration (``"2s"``, ``"250ms"``) or seconds; ``match``
    which events it applies to (I22: ``{"tool": "refund_*"}``, ``{"model": ["gpt-*"]}``); ``mode``
    ``"enforce"`` (the default) or ``"audit"`` (I25: traced as what it would do, counts as a
    plain Continue); ``name``
    defaults to the function's name or the class name in snake case; ``config`` is a class's
    pydantic settings model (it is built as ``Cls(config)``) and ``sample`` the settings the
    conformance suite builds it with. ``state=True`` (classes only) says it keeps state in a
    store shared as the spec's ``state:`` says: the class has ``attach_state(view)``, called
    once after it is built (``harnessweaver.state``, docs/state.md).
    """
    if not isinstance(state, bool):
        raise DeclarationError("invalid_config", _RULE, f"state is true or false, got {state!r}")

    def decorate(target: Any) -> Any:
        if isinstance(target, type):
            _check_class(target, config, sample)
            if state and not callable(getattr(target, "attach_state", None)):
                raise DeclarationError(
                    "invalid_config",
                    _RULE,
                    f"stateful middleware class {target.__name__} needs an "
                    "`attach_state(self, view)` (harnessweaver.state.Stateful has one)",
                )
            default = core.snake_case(target.__name__)
        elif inspect.iscoroutinefunction(target):
            if config is not None or sample is not None:
                raise DeclarationError(
                    "invalid_config",
                    _RULE,
                    "config and sample are for middleware classes; "
                    f"{target.__name__} is a function",
                )
            if state:
                raise DeclarationError(
                    "invalid_config",
                    _RULE,
                    f"state=True is for middleware classes; {target.__name__} is a function",
                )
            default = target.__name__
        else:
            raise _error(
                f"middleware {getattr(target, '__name__', target)!r} must be an async function "
                "or a class with an async __call__"
            )
        decl = core.declare(
            default if name is None else name,
            hooks,
            band=band,
            fail_mode=fail_mode,
            timeout=timeout,
            match=match,
            mode=mode,
        )
        spec = MiddlewareSpec(decl, target, config, sample, state)
        if isinstance(target, type):
            setattr(target, _SPEC_ATTR, spec)
            return target
        return Middleware(target, spec)

    return decorate


def spec_of(obj: object) -> MiddlewareSpec | None:
    """The spec of a declared middleware (function, class or instance), else None."""
    if isinstance(obj, Middleware):
        return obj.spec
    spec = getattr(obj if isinstance(obj, type) else type(obj), _SPEC_ATTR, None)
    return spec if isinstance(spec, MiddlewareSpec) else None


def _settings(
    config: type[BaseModel],
    settings: Mapping[str, Any],
    owner: str,
    error: type[Exception],
    context: Mapping[str, object] | None = None,
) -> BaseModel:
    try:
        return config.model_validate(
            dict(settings), context=None if context is None else dict(context)
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(settings)'}: {e['msg']}" for e in exc.errors()
        )
        raise error(
            "invalid_settings", _RULE, f"invalid settings for {owner}: {problems}"
        ) from None


def build(
    obj: object, settings: Mapping[str, Any] | None
) -> tuple[MiddlewareSpec, Callable[..., Any]]:
    """The spec and the callable the bus runs for a declared middleware."""
    spec = spec_of(obj)
    if spec is None:
        raise TypeError(f"{obj!r} is not middleware: declare it with @hw.middleware(...)")
    if isinstance(obj, Middleware):
        if settings is not None:
            raise RegistrationError("invalid_settings", _RULE, f"{spec.name} takes no settings")
        return spec, obj.__wrapped__
    if not isinstance(obj, type):
        if settings is not None:
            raise RegistrationError(
                "invalid_settings",
                _RULE,
                f"{spec.name} is already built; pass settings to its class",
            )
        return spec, obj.__call__  # type: ignore[operator]
    if spec.config is None:
        if settings:
            raise RegistrationError("invalid_settings", _RULE, f"{spec.name} takes no settings")
        return spec, obj().__call__
    validated = _settings(spec.config, settings or {}, spec.name, RegistrationError)
    return spec, obj(validated).__call__
