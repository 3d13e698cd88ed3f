"""The exceptions harnessweaver raises.

Every error carries a stable ``kind`` and the ``rule`` it enforces (see
``conformance/INTERPRETING.md`` §5), and a message that names the bad value and the rule.
Both cores raise these same classes, so user code catches one set of exceptions.
"""

from __future__ import annotations

__all__ = [
    "DeclarationError",
    "EmitError",
    "HarnessweaverError",
    "RegistrationError",
    "TraceFormatError",
    "error_for",
]


class HarnessweaverError(ValueError):
    """Base class: ``kind`` and ``rule`` are stable identifiers; ``str(err)`` is the message."""

    kind: str
    rule: str

    def __init__(self, kind: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.rule = rule

    @property
    def message(self) -> str:
        return str(self)

    def __reduce__(self) -> tuple[type[HarnessweaverError], tuple[str, str, str]]:
        return (type(self), (self.kind, self.rule, str(self)))


class DeclarationError(HarnessweaverError):
    """A middleware declaration breaks a rule (bad name, hooks, band, fail mode, timeout, R2)."""


class RegistrationError(HarnessweaverError):
    """Registering or unregistering on a bus breaks a rule (overrides, duplicate names)."""


class EmitError(HarnessweaverError):
    """``emit``/``chain`` was called with an unknown hook point or an event of the wrong type."""


class TraceFormatError(HarnessweaverError):
    """A JSON Lines trace could not be read back."""


_PHASES: dict[str, type[HarnessweaverError]] = {
    "declare": DeclarationError,
    "register": RegistrationError,
    "emit": EmitError,
    "trace": TraceFormatError,
}


def error_for(phase: str, kind: str, rule: str, message: str) -> HarnessweaverError:
    """Build the exception of ``phase`` ("declare", "register", "emit" or "trace")."""
    return _PHASES[phase](kind, rule, message)
