"""The exceptions harnessweaver raises.

Every error carries a stable ``kind``, the ``rule`` it enforces (see
``conformance/INTERPRETING.md`` §5), ``link``, where that rule is written as a path in the
repository (a section of the bus's specification, ``docs/spec/hook-bus.md#ruling-15``, or, for
the rules of the library around the bus (a harness spec, the run loop), of its user docs), and
``url``, the same section online, which resolves for a wheel user with no clone. The message
names the bad value and the rule; a traceback adds ``see <url>`` as a note (PEP 678), while
``str(err)`` stays the message alone (the corpus compares it, byte for byte with TypeScript's).
Both cores raise these same classes, so user code catches one set of exceptions.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "DOCUMENTATION",
    "DeclarationError",
    "EmitError",
    "HarnessweaverError",
    "RegistrationError",
    "TraceFormatError",
    "error_for",
    "rule_link",
    "rule_url",
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
    "writing-middleware": "docs/concepts.md#middleware-in-code-the-reference",
}
"""The rules of the library around the bus (a harness spec, the run loop, plugins), which the
bus's specification does not hold, and the section of the user docs that states each."""


DOCUMENTATION: Final = "https://github.com/harnessweaver/harnessweaver/blob/main/docs/index.md"
"""The documentation's entry point, ``docs/index.md`` online: ``[project.urls] Documentation``
in pyproject.toml and ``homepage`` in ts-runner/package.json say the same (a test checks), and
TypeScript's errors make the same URLs from it."""

_ROOT_URL: Final = DOCUMENTATION.removesuffix("docs/index.md")
"""The repository's files online: a link's path, appended, is its URL."""


def rule_link(rule: str) -> str | None:
    """Where ``rule`` is written: ``docs/spec/hook-bus.md#<id in lower case>`` for a rule of
    the bus, the user docs' section for one of :data:`GUIDES`, ``None`` for an unknown id."""
    if _SPEC_ID.fullmatch(rule):
        path = f"{SPEC}#{rule.lower()}"
    elif rule in GUIDES:
        path = GUIDES[rule]
    else:
        return None
    return path


def rule_url(rule: str) -> str | None:
    """``rule_link(rule)`` online (under :data:`DOCUMENTATION`'s tree): it resolves without a
    clone. ``None`` for an unknown id."""
    path = rule_link(rule)
    return None if path is None else _ROOT_URL + path


class HarnessweaverError(ValueError):
    """Base class: ``kind`` and ``rule`` are stable identifiers, ``link`` where the rule is
    written (a path in the repository), ``url`` the same online; ``str(err)`` is the message."""

    kind: str
    rule: str
    link: str | None
    url: str | None

    def __init__(self, kind: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.rule = rule
        # The one place every error of both cores is made (the Rust core's through
        # error_for): the link comes from the rule id, never from parsing the message.
        self.link = rule_link(rule)
        self.url = rule_url(rule)
        if self.url is not None:
            self.add_note(f"see {self.url}")

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
