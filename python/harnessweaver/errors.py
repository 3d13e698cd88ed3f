"""The exceptions harnessweaver raises.

Every error carries a stable ``kind``, the ``rule`` it enforces (see
``conformance/INTERPRETING.md`` §5) and ``link``, where that rule is written: a section of
the bus's specification (``docs/spec/hook-bus.md#ruling-15``) or, for the rules of the
library around the bus (a harness spec, the run loop), of its user docs. The message names
the bad value and the rule; a traceback adds ``see <link>`` as a note (PEP 678), while
``str(err)`` stays the message alone. Both cores raise these same classes, so user code
catches one set of exceptions.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

__all__ = [
    "DeclarationError",
    "EmitError",
    "HarnessweaverError",
    "RegistrationError",
    "TraceFormatError",
    "error_for",
]

SPEC: Final = "docs/spec/hook-bus.md"
"""The bus's normative specification, as a path in the repository; one anchor per rule id."""

_SPEC_ID: Final = re.compile(r"(?:rule|ruling)-\d+|detail-[a-z]+(?:-[a-z]+)*|[RSI]\d+")
"""The ids of the specification: ``rule-1``, ``ruling-15``, ``detail-trace``, ``R2``, ``I27``."""

GUIDES: Final = {
    "spec": "docs/harness-spec.md#errors",
    "yaml": "docs/harness-spec.md#errors",
    "limits": "docs/harness-spec.md#limits",
    "plugins": "docs/harness-spec.md#plugins",
    "profiles": "docs/harness-spec.md#profiles",
    "settings": "docs/harness-spec.md#items",
    "contracts": "docs/contracts.md#turning-them-on",
    "state": "docs/harness-spec.md#state",
    "approvals": "docs/approvals.md#turning-it-on",
    "agent-options": "docs/agent.md#the-harness",
    "provider": "docs/agent.md#providers",
    "pricing": "docs/agent.md#providers",
    "tools": "docs/agent.md#tools",
    "resume": "docs/agent.md#suspend-and-resume",
    "budgets": "docs/agent.md#budgets",
    "journal": "docs/agent.md#the-journal-and-the-trace",
    "writing-middleware": "README.md#write-middleware",
}
"""The rules of the library around the bus (a harness spec, the run loop, plugins), which the
bus's specification does not hold, and the section of the user docs that states each."""


@cache
def _base() -> str:
    """The project's documentation URL (``[project.urls] Documentation`` in pyproject.toml),
    ending in ``/``, that links are made absolute with; empty while there is none, and links
    stay paths in the repository."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls: list[str] = metadata("harnessweaver").get_all("Project-URL") or []
    except PackageNotFoundError:
        return ""
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation" and url.strip():
            return url.strip().rstrip("/") + "/"
    return ""


def rule_link(rule: str) -> str | None:
    """Where ``rule`` is written: ``docs/spec/hook-bus.md#<id in lower case>`` for a rule of
    the bus, the user docs' section for one of :data:`GUIDES`, ``None`` for an unknown id."""
    if _SPEC_ID.fullmatch(rule):
        path = f"{SPEC}#{rule.lower()}"
    elif rule in GUIDES:
        path = GUIDES[rule]
    else:
        return None
    return _base() + path


class HarnessweaverError(ValueError):
    """Base class: ``kind`` and ``rule`` are stable identifiers, ``link`` where the rule is
    written; ``str(err)`` is the message."""

    kind: str
    rule: str
    link: str | None

    def __init__(self, kind: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.rule = rule
        # The one place every error of both cores is made (the Rust core's through
        # error_for): the link comes from the rule id, never from parsing the message.
        self.link = rule_link(rule)
        if self.link is not None:
            self.add_note(f"see {self.link}")

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
