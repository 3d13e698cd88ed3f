"""Error messages, worded exactly as the Rust core words them (``error.rs``).

Every message names the bad value verbatim and ends with the rule it enforces.
"""

from __future__ import annotations

from typing import Final

from .._plain import plain_str
from ..errors import HarnessweaverError, error_for

__all__ = ["hooks_widened", "shown", "value_error"]

_RULES: Final = {
    "invalid_name": ("I1", "I1"),
    "invalid_hooks": ("I3", "I3"),
    "unknown_hook": ("ruling-2", "ruling 2"),
    "invalid_band": ("rule-1", "rule 1"),
    "missing_fail_mode": ("ruling-14", "ruling 14"),
    "invalid_fail_mode": ("ruling-14", "ruling 14"),
    "invalid_duration": ("ruling-15", "ruling 15"),
    "baseline_fail_open": ("R2", "R2"),
    "hooks_widened": ("ruling-18", "ruling 18"),
    "duplicate_name": ("I2", "I2"),
    "unknown_middleware": ("I2", "I2"),
    "event_type_mismatch": ("I7", "I7"),
    "invalid_trace": ("I8", "I8"),
    "unknown_layer": ("I13", "I13"),
    "invalid_match": ("I22", "I22"),
    "unknown_match_key": ("I22", "I22"),
    "match_key_not_carried": ("I22", "I22"),
    "match_widened": ("I22", "I22"),
    "invalid_mode": ("I25", "I25"),
    "baseline_audit_not_org": ("I25", "I25"),
    "invalid_deadline": ("I26", "I26"),
}
_HOOKS: Final = (
    "task.start, step.start, model.before, model.after, tool.before, tool.after, step.end, task.end"
)
_EXPLAIN: Final = {
    "invalid_name": "a middleware name is one or more identifiers joined by dots, such as "
    "refund_cap or acme.refund_cap",
    "invalid_hooks": "hooks is a non-empty list of hook point names",
    "unknown_hook": f"the hook points are {_HOOKS}",
    "invalid_band": "a band is one of baseline, platform, app or task",
    "missing_fail_mode": "a fail mode is declared, never implied; declare fail_mode='closed' or "
    "fail_mode='open'",
    "invalid_fail_mode": "fail_mode is 'closed' or 'open'",
    "invalid_duration": "a timeout is a positive number of seconds or a string with a unit such "
    "as 250ms, 2s, 1.5s or 1m",
    "baseline_fail_open": "baseline middleware always fails closed; declare fail_mode='closed' "
    "or use another band",
    "hooks_widened": "a registration may narrow the declared hook points, never widen them",
    "duplicate_name": "a bus holds one middleware of each name",
    "unknown_middleware": "only a registered middleware can be unregistered",
    "event_type_mismatch": "the event is not of the hook point's event type",
    "unknown_layer": "a layer is one of org_profile, plugin_profile, profile_file, "
    "builtin_profile, framework, app, env or task",
    "invalid_match": "a matcher maps tool or model to a pattern or a list of 1 to 32 patterns "
    "of 1 to 128 characters",
    "unknown_match_key": "the match keys are tool and model",
    "match_key_not_carried": "tool is carried by tool.before and tool.after, model by model.before",
    "match_widened": "a registration may narrow a matcher, never widen it",
    "invalid_mode": "mode is 'enforce' or 'audit'",
    "baseline_audit_not_org": "only an org profile item that itself sets mode: audit may audit "
    "a baseline middleware",
    "invalid_deadline": (
        "a chain deadline is a positive number of seconds or a string with a unit such as"
        " 250ms, 2s, 1.5s or 1m; an emit's own deadline may also be 0"
    ),
}


def shown(value: object) -> str:
    """A value as messages show it: text quoted verbatim, anything else as its repr. Lone
    surrogates, which no valid text holds, are written as ``\\udcff`` escapes (I17). A str
    subclass shows its characters, never its own ``__str__`` or ``__repr__``."""
    value = plain_str(value)
    if not isinstance(value, str):
        try:
            return repr(value)
        except Exception:  # a repr that raises: shown as the Rust core shows it
            return "<unprintable>"
    if not value.isascii():
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return f"'{value}'"


def value_error(
    phase: str, kind: str, field: str, what: str, detail: str | None = None
) -> HarnessweaverError:
    """The error for a bad value ``what`` (already shown) of ``field``; ``detail`` replaces
    the standard explanation when there is something more precise to say."""
    rule, label = _RULES[kind]
    explain = _EXPLAIN[kind] if detail is None else detail
    if kind == "unknown_hook":
        message = f"unknown hook point {what}: {explain} ({label})"
    elif kind == "missing_fail_mode":
        message = f"middleware {what} declares no {field}: {explain} ({label})"
    elif kind == "baseline_fail_open":
        message = (
            f"middleware {what} is in the baseline band with fail_mode 'open': {explain} ({label})"
        )
    elif kind == "baseline_audit_not_org":
        message = (
            f"middleware {what} is in the baseline band with mode 'audit': {explain} ({label})"
        )
    elif kind == "duplicate_name":
        message = f"a middleware named {what} is already registered: {explain} ({label})"
    elif kind == "unknown_middleware":
        message = f"no middleware named {what} is registered: {explain} ({label})"
    else:
        message = f"invalid {field} {what}: {explain} ({label})"
    return error_for(phase, kind, rule, message)


def hooks_widened(
    phase: str, hook: str, middleware: str, declared: tuple[str, ...]
) -> HarnessweaverError:
    """Ruling 18: a registration named a hook point the declaration does not have."""
    return error_for(
        phase,
        "hooks_widened",
        "ruling-18",
        f"registration of middleware '{middleware}' widens its hooks with '{hook}': it declares "
        f"{', '.join(declared)}; {_EXPLAIN['hooks_widened']} (ruling 18)",
    )
