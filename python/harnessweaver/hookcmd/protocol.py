"""What every agent's hook protocol has in common: the request read from stdin, the decision
the bus came to, and the reply written back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["EXIT_BLOCK", "Decision", "HookInputError", "Reply", "Request"]

EXIT_BLOCK = 2
"""The exit status that blocks in all three agents (stderr is the reason)."""

DecisionKind = Literal["continue", "modify", "block", "ask", "stop", "retry", "allow"]


class HookInputError(ValueError):
    """The event document is not one this agent sends: bad JSON, an unknown event, a missing
    or mistyped field. The message names the field and the rule."""


@dataclass(frozen=True, slots=True)
class Request:
    """One event document: the agent's event name, its session and the hook point it maps to
    (``None``: no hook point; answered with the agent's neutral reply)."""

    agent: str
    name: str
    session: str
    hook: str | None
    doc: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Decision:
    """The bus's outcome, as an agent can act on it.

    ``block`` (Block), ``ask`` (Suspend: ``event`` is the chain's event, ``outcome`` the
    Suspend, for the approvals book), ``stop`` (Escalate: the run ends), ``retry`` (Retry),
    ``modify`` (Continue with a modified ``event``), ``continue``, ``allow`` (a person approved
    the call through the approvals book: it runs without the agent's own prompt; ``event``
    set when the approval edited its arguments). ``warnings``: the result's warnings (I24)
    as ``middleware: text`` lines."""

    kind: DecisionKind
    reason: str = ""
    event: Any = None
    warnings: tuple[str, ...] = ()
    outcome: Any = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What the command writes: a JSON document on stdout (``None``: nothing), text on
    stderr, and the exit status."""

    stdout: dict[str, Any] | None = None
    exit_code: int = 0
    stderr: str | None = None
