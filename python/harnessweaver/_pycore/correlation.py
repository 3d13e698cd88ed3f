"""What ties an emit's records to their run, step and tool (I21; paired with the Rust core's
``correlation.rs``).

Every record of an emit carries its *key*: ``(emit, hook, run, step, tool)``. The last three
come from the context's run id and the event the caller emitted (never a middleware's
modification), so an operator finds a blocked call by its run, step and tool name.
"""

from __future__ import annotations

from typing import Any, Final

from .catalogue import HOOKS

__all__ = ["STEPPED", "TOOLED", "emit_key", "shown_text", "valid_step"]

STEPPED: Final = frozenset(name for name, _ in HOOKS) - {"task.start", "task.end"}
"""Hook points whose event has a ``step``."""
TOOLED: Final = frozenset({"tool.before", "tool.after"})
"""Hook points whose event names a tool (``event.tool.name``)."""
_MAX_STEP: Final = 2**53 - 1  # I19's bound: every JSON reader holds it exactly


def shown_text(text: str) -> str:
    """``text`` as a record shows it: each surrogate code point, which UTF-8 cannot carry (so
    a trace holding it could not be written), as U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def valid_step(step: object) -> bool:
    """Whether ``step`` is shown: an integer (not a bool) from 0 to 2^53 - 1."""
    return type(step) is int and 0 <= step <= _MAX_STEP


_last: tuple[Any, ...] = (None, None, None, ())
"""The last emit's (hook, event, envelope, correlation): a loop that emits one event again and
again (a retry, a benchmark) reads it once. Both are immutable (I18, a frozen dataclass), and
held here, so the same objects cannot be new ones at a reused address."""


def emit_key(emit: int, hook: str, event: Any, env: Any) -> tuple[Any, ...]:
    """The key every record of emit number ``emit`` on ``hook`` is traced with."""
    global _last
    last_hook, last_event, last_env, tail = _last
    if event is last_event and env is last_env and hook is last_hook:
        return (emit, hook, *tail)
    run = env.run_id
    if not isinstance(run, str):  # only an envelope that is no hw.Envelope gets this far
        raise TypeError(f"Envelope run_id must be a string, got {run!r} (I21)")
    if not run.isascii():
        run = shown_text(run)
    step = tool = None
    if hook in STEPPED:
        # An event built without validation (or a subclass's property) may hold or do anything:
        # what cannot be read is not shown (I21, I29), as in the Rust core. A try costs nothing
        # in CPython 3.11 until something raises.
        try:
            step = event.step
        except Exception:
            step = None
        if type(step) is not int or not 0 <= step <= _MAX_STEP:
            step = None
        if hook in TOOLED:
            try:
                tool = event.tool.name
            except Exception:
                tool = None
            if type(tool) is not str:
                # A str subclass is text too, as in Rust, read from its storage (I29).
                tool = str.__str__(tool) if issubclass(type(tool), str) else None
            if tool is not None and not tool.isascii():
                tool = shown_text(tool)
    _last = (hook, event, env, (run, step, tool))
    return (emit, hook, run, step, tool)
