"""The errors a policy middleware raises while it decides (I38).

Each is raised inside the middleware, so the bus turns it into a failure under the item's fail
mode (closed: Block), never a Continue. The bus records the exception's type name only (I5,
R9), so these names are part of the contract: ``CedarRequestError``, ``CedarEvaluationError``
and ``AuthZenError`` are the same in every implementation. Their messages name a path or a
policy id, never a value of the event (an argument may hold a secret).
"""

from __future__ import annotations

__all__ = [
    "AuthZenError",
    "CedarEvaluationError",
    "CedarLoadError",
    "CedarRequestError",
    "PolicyError",
]


class PolicyError(Exception):
    """A policy middleware could not decide; the fail mode decides instead."""


class CedarRequestError(PolicyError):
    """The event (or the envelope's attributes) cannot become a Cedar request: ``path`` says
    where (``context.arguments.amount``), never what was there."""

    def __init__(self, path: str, *, why: str) -> None:
        super().__init__(f"cannot build the Cedar request: {why} at {path} (I38)")
        self.path = path


class CedarEvaluationError(PolicyError):
    """A policy errored while it was evaluated and the item says ``on_error: fail``."""

    def __init__(self, policies: tuple[str, ...]) -> None:
        shown = ", ".join(policies) or "(unknown)"
        super().__init__(f"Cedar policy {shown} errored while evaluated (I38)")
        self.policies = policies


class CedarLoadError(PolicyError):
    """Policies, a schema or entities that cannot be compiled (I38). ``key`` is the setting at
    fault (``policies``, ``schema``, ``entities``, ``namespace``), ``file`` the file as
    written (``None``: the setting itself) and ``line`` the 1-based line in it. The spec loader
    reports it as a problem; the behaviour form of the conformance runner raises it."""

    def __init__(self, key: str, *, why: str, file: str | None = None, line: int = 1) -> None:
        where = f"{file}:{line}: " if file is not None else ""
        super().__init__(f"{where}{why} (I38)")
        self.key = key
        self.message = why
        self.file = file
        self.line = line


class AuthZenError(PolicyError):
    """The AuthZEN decision point gave no usable decision (unreachable, timeout, HTTP error,
    not JSON, a decision that is not a boolean)."""
