"""Chain deadlines in a harness spec (I26): ``deadlines:`` of the harness and of each task.

``deadlines: {tool.before: 2s}`` gives each emit at that hook point a time budget for its
whole chain. A task may set its own; the selected task's deadline for a hook point applies
when it is *earlier* than the harness's (a task may tighten the budget, never loosen it).
Every task's deadlines are checked, selected or not. The values are checked by the core (the
bus's own ``deadlines=`` check), so a problem keeps the core's kind (``invalid_deadline``,
``unknown_hook``) and rule, and names the file, the key and its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..bus import HookBus
from ..errors import HarnessweaverError
from .errors import Problems
from .model import Document
from .yaml import line_of, plain

__all__ = ["spec_deadlines"]


def _checked(
    node: object, where: str, file: str, line: int | None, problems: Problems
) -> dict[str, tuple[Any, float]]:
    """``{hook: (value as written, seconds)}`` of one ``deadlines:`` mapping."""
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        what = "deadlines map hook points to durations such as 2s or 250ms"
        problems.add(file, where, line, "not_a_mapping", f"{what}, got {type(node).__name__}")
        return {}
    out: dict[str, tuple[Any, float]] = {}
    for hook, value in node.items():
        value = plain(value)
        at = line_of(node, hook) or line
        try:
            bus = HookBus(deadlines={hook: value})
            seconds = bus.deadline(hook) if isinstance(hook, str) else None
        except HarnessweaverError as exc:
            problems.core(file, f"{where}.{hook}", at, exc)
            continue
        if seconds is not None:
            out[hook] = (value, seconds)
    return out


def spec_deadlines(spec: Document, task: str | None, problems: Problems) -> dict[str, Any]:
    """The chain deadlines of the harness with ``task`` (as ``HookBus(deadlines=...)`` takes
    them); problems of the harness's and every task's ``deadlines:`` go to ``problems``."""
    line = spec.lines.get("deadlines")
    chosen = _checked(spec.deadlines, "deadlines", spec.file, line, problems)
    for name, node in spec.task_deadlines.items():
        where = f"tasks.{name}.deadlines"
        own = _checked(node, where, spec.file, line_of(node), problems)
        if name != task:
            continue
        for hook, (value, seconds) in own.items():
            if hook not in chosen or seconds < chosen[hook][1]:
                chosen[hook] = (value, seconds)
    return {hook: value for hook, (value, _) in chosen.items()}
