"""Matchers (I22): which events of its hook points a middleware applies to.

The same rules and messages as the Rust core's ``matcher.rs``: keys ``tool`` and ``model``,
``*``/``?`` globs matched against the whole name, case-sensitively; a key absent from the
event or not text matches. Checked once, when declared or registered; the registry plans one
chain per (hook point, key value).
"""

from __future__ import annotations

from typing import Any, Final

from .error import shown, value_error
from .text import whole_text

__all__ = [
    "CARRIED",
    "KEYS",
    "Matcher",
    "admits",
    "glob_match",
    "key_value",
    "narrow_matcher",
    "parse_matcher",
]

MAX_PATTERNS: Final = 32
MAX_PATTERN_CHARS: Final = 128
KEYS: Final = ("tool", "model")
CARRIED: Final = {"tool.before": "tool", "tool.after": "tool", "model.before": "model"}
"""The key each hook point carries (``model.after``'s event holds no model name)."""

Matcher = dict[str, tuple[str, ...]]
"""A checked matcher: key → 1 to 32 distinct patterns in the order given."""


def glob_match(pattern: str, name: str) -> bool:
    """``*`` any run of characters, ``?`` one, everything else itself; the whole name."""
    p = n = 0
    star = -1
    star_n = 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, star_n = p, n
            p += 1
        elif p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif star >= 0:
            p = star + 1
            star_n += 1
            n = star_n
        else:
            return False
    return all(c == "*" for c in pattern[p:])


def _is_text(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no valid text (I17)
        return False
    return True


def key_value(key: str, event: Any) -> str | None:
    """The key's text in the caller's event, or ``None`` (absent, not text), which matches."""
    try:
        value = event.tool.name if key == "tool" else event.request.model
    except Exception:  # an event built without validation may hold anything (I22)
        return None
    # Read as a str by its real type, from its storage: a subclass's own methods (encode,
    # __hash__, __eq__) never run, here or in the plan cache (I29), as in the Rust core.
    if not issubclass(type(value), str) or not whole_text(value):
        return None
    return str.__str__(value)


def admits(matcher: Matcher | None, hook: str, value: str | None) -> bool:
    """Whether a middleware with ``matcher`` runs on an event of ``hook`` holding ``value``."""
    key = CARRIED.get(hook)
    if matcher is None or key is None or value is None:
        return True
    patterns = matcher.get(key)
    return patterns is None or any(glob_match(p, value) for p in patterns)


def _invalid(phase: str, what: str, detail: str) -> Exception:
    return value_error(phase, "invalid_match", "match", what, detail)


def _patterns(key: str, value: object, phase: str) -> tuple[str, ...]:
    if isinstance(value, str):
        items: list[object] | tuple[object, ...] = (value,)
    elif isinstance(value, list | tuple):
        items = value
    else:
        raise _invalid(phase, shown(value), f"match.{key} is a pattern or a list of patterns")
    if not items:
        raise _invalid(phase, "[]", f"match.{key} lists at least one pattern")
    if len(items) > MAX_PATTERNS:
        raise _invalid(
            phase, f"{len(items)} patterns", f"match.{key} lists at most {MAX_PATTERNS} patterns"
        )
    patterns: list[str] = []
    for item in items:
        if not _is_text(item):
            raise _invalid(phase, shown(item), "a pattern is text")
        assert isinstance(item, str)
        if not item:
            raise _invalid(phase, "''", "a pattern holds 1 to 128 characters")
        if len(item) > MAX_PATTERN_CHARS:
            raise _invalid(phase, shown(item), "a pattern holds 1 to 128 characters")
        if item not in patterns:
            patterns.append(item)
    return tuple(patterns)


def _values(value: object, phase: str) -> Matcher:
    if not isinstance(value, dict):
        raise _invalid(phase, shown(value), _EXPLAIN)
    if not value:
        raise _invalid(phase, "{}", "a matcher names at least one key")
    for key in value:
        if not (_is_text(key) and key in KEYS):
            raise value_error(phase, "unknown_match_key", "match key", shown(key))
    return {key: _patterns(key, value[key], phase) for key in KEYS if key in value}


_EXPLAIN: Final = (
    "a matcher maps tool or model to a pattern or a list of 1 to 32 patterns of 1 to 128 characters"
)


def _check_carried(
    matcher: Matcher, keys: tuple[str, ...], hooks: tuple[str, ...], phase: str
) -> None:
    for key in keys:
        if key in matcher and not any(CARRIED.get(h) == key for h in hooks):
            raise value_error(
                phase,
                "match_key_not_carried",
                "match key",
                shown(key),
                f"none of its hook points ({', '.join(hooks)}) carries it; tool is carried by "
                "tool.before and tool.after, model by model.before",
            )


def parse_matcher(value: object, hooks: tuple[str, ...], phase: str) -> Matcher | None:
    """A declared ``match`` checked in the order of I22; ``None`` is no matcher."""
    if value is None:
        return None
    matcher = _values(value, phase)
    _check_carried(matcher, KEYS, hooks, phase)
    return matcher


def _covered(pattern: str, declared: tuple[str, ...]) -> bool:
    if pattern in declared:
        return True
    return (
        "*" not in pattern and "?" not in pattern and any(glob_match(d, pattern) for d in declared)
    )


def narrow_matcher(
    declared: Matcher | None, value: object, hooks: tuple[str, ...], middleware: str, phase: str
) -> Matcher | None:
    """A registration's ``match`` applied to the declared matcher: it may narrow, never widen."""
    if value is None:
        return declared
    given = _values(value, phase)
    result = dict(declared or {})
    added: list[str] = []
    for key in KEYS:
        if key not in given:
            continue
        old = None if declared is None else declared.get(key)
        if old is None:
            added.append(key)
        else:
            for pattern in given[key]:
                if not _covered(pattern, old):
                    raise value_error(
                        phase,
                        "match_widened",
                        f"match.{key} of middleware {shown(middleware)}",
                        shown(pattern),
                        f"it declares {', '.join(old)}; a registration may narrow a matcher (a "
                        "declared pattern, or a name one matches), never widen it",
                    )
        result[key] = given[key]
    _check_carried(result, tuple(added), hooks, phase)
    return {key: result[key] for key in KEYS if key in result}
