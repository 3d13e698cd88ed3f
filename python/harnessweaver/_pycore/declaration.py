"""Declarations: what ``@hw.middleware`` declares and what ``register`` may override.

Checks run in the fixed order of INTERPRETING.md I4 and the first failing one is raised.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, cast

from .._plain import IMMUTABLE, final, plain_str, uncopyable
from .catalogue import ORDER, hook_error
from .duration import parse_duration_ns
from .error import hooks_widened, shown, value_error
from .matcher import Matcher, narrow_matcher, parse_matcher

__all__ = ["BANDS", "MISSING", "Declaration", "apply_overrides", "declare", "snake_case"]

BANDS: Final = ("baseline", "platform", "app", "task")
BAND_INDEX: Final = {band: i for i, band in enumerate(BANDS)}
FAIL_MODES: Final = ("closed", "open")
MODES: Final = ("enforce", "audit")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""Marks an argument that was not given (``fail_mode`` has no default, ruling 14)."""


@final("harnessweaver.Declaration")
@uncopyable("Declaration", IMMUTABLE)
class Declaration:
    """A validated declaration: name, hook points, band, fail mode and timeout."""

    __slots__ = ("_match", "band", "fail_mode", "hooks", "mode", "name", "timeout", "timeout_ns")

    name: str
    hooks: tuple[str, ...]
    band: str
    fail_mode: str
    timeout: float | None
    timeout_ns: int | None
    mode: str
    _match: Matcher | None

    def __init__(
        self,
        name: str,
        hooks: tuple[str, ...],
        band: str,
        fail_mode: str,
        timeout_ns: int | None,
        match: Matcher | None = None,
        mode: str = "enforce",
    ) -> None:
        setter = object.__setattr__
        setter(self, "name", name)
        setter(self, "hooks", hooks)
        setter(self, "band", band)
        setter(self, "fail_mode", fail_mode)
        setter(self, "timeout_ns", timeout_ns)
        setter(self, "timeout", None if timeout_ns is None else timeout_ns / 1e9)
        # Each call hands out a fresh dict (like the Rust getter), so nobody changes ours.
        setter(self, "_match", match)
        setter(self, "mode", mode)

    @property
    def match(self) -> Matcher | None:
        """The matcher (I22): ``{"tool": ("refund_*",)}``, or ``None`` for every event."""
        return None if self._match is None else dict(self._match)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Declaration is immutable; cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Declaration:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[object, ...]:
        matched = None if self._match is None else tuple(self._match.items())
        key = (self.name, self.hooks, self.band, self.fail_mode, self.timeout_ns, matched)
        return key if self.mode == "enforce" else (*key, self.mode)

    def __repr__(self) -> str:
        return (
            f"Declaration(name={self.name!r}, hooks={self.hooks!r}, band={self.band!r}, "
            f"fail_mode={self.fail_mode!r}, timeout={self.timeout!r})"
        )


def _check_name(name: object, phase: str) -> str:
    name = plain_str(name)
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise value_error(phase, "invalid_name", "name", shown(name))
    return name


def _check_hooks(hooks: object, phase: str) -> tuple[str, ...]:
    # A list, tuple, set or frozenset, as the Rust binding accepts (I17): not any Set view.
    if not isinstance(hooks, list | tuple | set | frozenset):
        raise value_error(phase, "invalid_hooks", "hooks", shown(hooks))
    if not hooks:
        raise value_error(phase, "invalid_hooks", "hooks", "[]")
    if not all(isinstance(hook, str) for hook in hooks):
        raise value_error(phase, "invalid_hooks", "hooks", shown(hooks))
    names = [cast("str", plain_str(hook)) for hook in hooks]  # str subclasses: their text
    for hook in names:
        if hook not in ORDER:
            raise hook_error(phase, hook)
    return tuple(sorted(set(names), key=ORDER.__getitem__))


def _check_band(band: object, phase: str) -> str:
    band = plain_str(band)
    if not isinstance(band, str) or band not in BAND_INDEX:
        raise value_error(phase, "invalid_band", "band", shown(band))
    return band


def _check_fail_mode(fail_mode: object, name: str, phase: str) -> str:
    if fail_mode is MISSING or fail_mode is None:
        raise value_error(phase, "missing_fail_mode", "fail_mode", shown(name))
    fail_mode = plain_str(fail_mode)
    if not isinstance(fail_mode, str) or fail_mode not in FAIL_MODES:
        raise value_error(phase, "invalid_fail_mode", "fail_mode", shown(fail_mode))
    return fail_mode


def _check_r2(decl: Declaration, phase: str) -> Declaration:
    if decl.band == "baseline" and decl.fail_mode == "open":
        raise value_error(phase, "baseline_fail_open", "middleware", shown(decl.name))
    return decl


def _check_mode(mode: object, phase: str) -> str:
    """I25: ``enforce`` or ``audit``, exactly."""
    mode = plain_str(mode)
    if not isinstance(mode, str) or mode not in MODES:
        raise value_error(phase, "invalid_mode", "mode", shown(mode))
    return mode


def check_baseline_audit(decl: Declaration, phase: str, org_says_audit: bool) -> Declaration:
    """I25: only an org profile item that itself sets ``mode: audit`` audits a baseline one."""
    if decl.band == "baseline" and decl.mode == "audit" and not org_says_audit:
        raise value_error(phase, "baseline_audit_not_org", "middleware", shown(decl.name))
    return decl


def declare(
    name: object,
    hooks: object,
    *,
    band: object = "app",
    fail_mode: object = MISSING,
    timeout: object = None,
    match: object = None,
    mode: object = None,
) -> Declaration:
    """Validate a declaration in the order of I4; raise ``DeclarationError`` on the first fault."""
    phase = "declare"
    checked_name = _check_name(name, phase)
    checked_hooks = _check_hooks(hooks, phase)
    checked_band = _check_band("app" if band is None else band, phase)
    fails = _check_fail_mode(fail_mode, checked_name, phase)
    timeout_ns = None if timeout is None else parse_duration_ns(timeout, phase)
    matcher = parse_matcher(match, checked_hooks, phase)
    runs = "enforce" if mode is None else _check_mode(mode, phase)
    decl = Declaration(checked_name, checked_hooks, checked_band, fails, timeout_ns, matcher, runs)
    return check_baseline_audit(_check_r2(decl, phase), phase, False)


def _narrow(decl: Declaration, hooks: object, phase: str) -> tuple[str, ...]:
    narrowed = _check_hooks(hooks, phase)
    for hook in narrowed:
        if hook not in decl.hooks:
            raise hooks_widened(phase, hook, decl.name, decl.hooks)
    return narrowed


def apply_overrides(
    decl: Declaration,
    *,
    name: object = None,
    hooks: object = None,
    band: object = None,
    fail_mode: object = None,
    timeout: object = None,
    match: object = None,
    mode: object = None,
) -> Declaration:
    """The declaration as registered (I10); ``None`` keeps the declared value."""
    return override_from(decl, decl.band, name, hooks, band, fail_mode, timeout, None, match, mode)


BandRule = Callable[[str, str], None]


def override_from(
    decl: Declaration,
    start_band: str,
    name: object,
    hooks: object,
    band: object,
    fail_mode: object,
    timeout: object,
    allow_band: BandRule | None,
    match: object = None,
    mode: object = None,
    org_layer: bool = False,
) -> Declaration:
    """Overrides in the order of I4, starting from ``start_band``; hooks narrow against the
    declaration; ``allow_band(name, band)`` judges an explicit band; R2 on the result, then
    I25's baseline rule (``org_layer``: an org profile item's keys, which may audit baseline)."""
    phase = "register"
    new_name = decl.name if name is None else _check_name(name, phase)
    new_hooks = decl.hooks if hooks is None else _narrow(decl, hooks, phase)
    new_band = start_band
    if band is not None:
        new_band = _check_band(band, phase)
        if allow_band is not None:
            allow_band(new_name, new_band)
    fails = decl.fail_mode if fail_mode is None else _check_fail_mode(fail_mode, new_name, phase)
    timeout_ns = decl.timeout_ns if timeout is None else parse_duration_ns(timeout, phase)
    matcher = narrow_matcher(decl._match, match, new_hooks, new_name, phase)
    runs = decl.mode if mode is None else _check_mode(mode, phase)
    result = Declaration(new_name, new_hooks, new_band, fails, timeout_ns, matcher, runs)
    org_says_audit = org_layer and mode is not None and runs == "audit"
    return check_baseline_audit(_check_r2(result, phase), phase, org_says_audit)


_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(class_name: str) -> str:
    """A class's default middleware name (I1): ``RefundCap`` → ``refund_cap``,
    ``HTTPGuard`` → ``http_guard`` (the same rule as the Rust core's ``snake_case``)."""
    return _BOUNDARY.sub("_", class_name).lower()


# Public under the package's name, like the Rust core's classes (repr, pickling, docs).
for _cls in (Declaration,):
    _cls.__module__ = "harnessweaver"
