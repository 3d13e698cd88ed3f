"""What is wrong with a harness spec: :class:`Problem` and :class:`SpecError`.

Loading collects every problem of every file and item before it builds anything; if there is
one, :class:`SpecError` lists them all, one per line::

    harness.yaml:12: middleware[1] (acme.refund_cap): invalid settings: max_usd: Field
    required (settings)

A problem found by the core (a band moved outward, S8, R2, widened hooks, a bad duration…)
keeps the core's ``kind`` and ``rule``; the others have the spec-level kinds of :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..errors import HarnessweaverError

__all__ = ["RULES", "Problem", "Problems", "SpecError"]

RULES: dict[str, str] = {
    "unreadable_yaml": "yaml",
    "too_large": "limits",
    "too_deep": "limits",
    "too_many_aliases": "limits",
    "recursive_alias": "limits",
    "not_a_spec": "spec",
    "not_a_mapping": "spec",
    "bad_item": "spec",
    "unknown_key": "spec",
    "unknown_task": "spec",
    "unknown_env": "spec",
    "unknown_use": "plugins",
    "unknown_plugin": "plugins",
    "duplicate_plugin": "plugins",
    "plugin_import_error": "plugins",
    "unknown_profile": "profiles",
    "duplicate_id": "I2",
    "invalid_settings": "settings",
    "invalid_contracts": "contracts",
    "invalid_identity": "I27",
    "invalid_mode": "I25",
    "invalid_state": "state",
    "invalid_approvals": "approvals",
    "invalid_policy": "I38",
}
"""The spec-level problem kinds and the rule each enforces (docs/harness-spec.md)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong: where (``file``, ``line``, ``item``), what (``kind``, ``rule``), why.

    ``file`` is shown relative to the spec's directory; ``item`` is the item's place in its
    file, such as ``middleware[1] (acme.refund_cap)``, or empty for the file as a whole.
    """

    file: str
    item: str
    line: int | None
    kind: str
    rule: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.item}: {self.message}" if self.item else f"{where}: {self.message}"


class SpecError(HarnessweaverError):
    """A harness spec that cannot be loaded; nothing was built. ``problems`` lists why."""

    problems: tuple[Problem, ...]

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("invalid_spec", "spec", "\n".join(map(str, self.problems)))

    def __reduce__(self) -> tuple[type[SpecError], tuple[tuple[Problem, ...]]]:  # type: ignore[override]
        return (type(self), (self.problems,))


class Problems:
    """The problems found so far, in the order found, each once."""

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: dict[Problem, None] = {}

    def __bool__(self) -> bool:
        return bool(self._found)

    def __len__(self) -> int:
        return len(self._found)

    def add(self, file: str, item: str, line: int | None, kind: str, message: str) -> None:
        """A spec-level problem; its rule comes from :data:`RULES` and closes the message."""
        rule = RULES[kind]
        self._add(Problem(file, item, line, kind, rule, f"{_one_line(message)} ({rule})"))

    def core(self, file: str, item: str, line: int | None, error: HarnessweaverError) -> None:
        """A problem the core found: its kind, rule and message (which names the rule; a long
        message is cut short in its middle)."""
        self._add(Problem(file, item, line, error.kind, error.rule, _one_line(str(error))))

    def _add(self, problem: Problem) -> None:
        """Every problem is one line: what it quotes from a spec is escaped and cut short."""
        problem = replace(problem, item=_one_line(problem.item))
        self._found.setdefault(problem, None)

    def error(self) -> SpecError:
        return SpecError(self._found)


_LONGEST = 2_000  # far more than any message of ours; a core message may quote a whole value
_CONTROL = {code: f"\\x{code:02x}" for code in [*range(32), 127]} | {10: "\\n", 13: "\\r", 9: "\\t"}


def _one_line(message: str) -> str:
    """``message`` with control characters escaped, its middle cut out when too long (its end
    names the rule, so it is kept)."""
    message = message.translate(_CONTROL)
    if len(message) <= _LONGEST:
        return message
    return f"{message[: _LONGEST // 2]}…{message[-_LONGEST // 2 :]}"
