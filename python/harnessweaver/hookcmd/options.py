"""The hook command's arguments, and their form on the way to the warm helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["REWRITES", "HookOptions"]

REWRITES = ("settings", "allow", "ask")
"""``--rewrite``: how a rewritten tool call is answered (``docs/integrations/coding-agents.md``,
"Outcomes as decisions"): the agent's own permission settings judge the rewritten call
(``settings``, the default, ``None`` here), it runs without the agent's approval prompt
(``allow``), or a person approves it (``ask``)."""


class HookOptions(NamedTuple):
    """The command's arguments (a named tuple: the warm path does not load dataclasses)."""

    agent: str
    spec: Path
    task: str | None = None
    env: str | None = None
    state: Path | None = None
    org_profiles: tuple[Path, ...] | None = None
    rewrite: str | None = None
    state_ttl: int | None = None
    """Seconds a session's state outlives its last event (``None``: the environment's or the
    default, ``hookcmd/lifetime.py``)."""
    trace: Path | None = None
    """``--trace FILE``: where each event's trace records are appended (``hookcmd/trace.py``)."""

    def to_json(self) -> dict[str, Any]:
        """JSON for the helper, paths made absolute (the helper's child runs elsewhere
        first; it then takes this process's working directory)."""
        profiles = self.org_profiles
        return {
            "agent": self.agent,
            "spec": str(self.spec.absolute()),
            "task": self.task,
            "env": self.env,
            "state": None if self.state is None else str(self.state.absolute()),
            "org_profiles": None if profiles is None else [str(p.absolute()) for p in profiles],
            "rewrite": self.rewrite,
            "state_ttl": self.state_ttl,
            "trace": None if self.trace is None else str(self.trace.absolute()),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HookOptions:
        """What :meth:`to_json` wrote (a ``TypeError`` or ``KeyError`` for anything else)."""
        profiles = data["org_profiles"]
        state = data["state"]
        trace = data["trace"]
        options = cls(
            agent=_text(data["agent"]),
            spec=Path(_text(data["spec"])),
            task=_maybe(data["task"]),
            env=_maybe(data["env"]),
            state=None if state is None else Path(_text(state)),
            org_profiles=None if profiles is None else tuple(Path(_text(p)) for p in profiles),
            rewrite=_choice(data["rewrite"], REWRITES),
            state_ttl=_maybe_int(data["state_ttl"]),
            trace=None if trace is None else Path(_text(trace)),
        )
        return options


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def _maybe(value: object) -> str | None:
    return None if value is None else _text(value)


def _choice(value: object, choices: tuple[str, ...]) -> str | None:
    text = _maybe(value)
    if text is not None and text not in choices:
        raise TypeError(f"expected one of {', '.join(choices)}")
    return text


def _maybe_int(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a whole number, got {type(value).__name__}")
    return value
