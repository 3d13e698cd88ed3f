"""``harnessweaver.redact_pii``: personal data is replaced before the model or a tool sees it.

The guard rewrites events with ``Continue(modified=...)``:

- ``task.start``: the task's input (every string, at any depth): the run admits, keeps and
  journals the input as the guard left it, so personal data in a task reaches neither the
  model nor the journal;
- ``model.before``: the contents of the request's messages, and the arguments of the tool
  calls they carry (what reaches the model provider);
- ``tool.before``: the call's arguments (every string, at any depth);
- ``tool.after``: the result's output (the same way).

Choose where with the item's ``hooks:`` (for example ``hooks: [task.start, model.before,
tool.after]`` when tools must see real addresses). When nothing was found the answer is a
plain ``Continue()`` and the event is not copied.

What it finds (``detect``), each replaced by ``[redacted:<kind>]``:

- ``email``: ``name@domain.tld``;
- ``phone``: international numbers written with a ``+`` (8 to 15 digits) and North American
  ones (``555-123-4567``, ``(555) 123-4567``, ``555.123.4567``);
- ``credit_card``: 13 to 19 digits, in groups separated by single spaces or hyphens, that
  pass the Luhn check (so order numbers and other long numbers are left alone). The groups
  are tried from every group start, longest first, so a card followed by more digits
  (``4111 1111 1111 1111 123``) is still found: no Luhn-valid card number is left in the text.
- ``patterns``: your own, named regular expressions (``employee_id: "E\\d{6}"`` gives
  ``[redacted:employee_id]``).

Your patterns run first, then email, cards and phone numbers. Cards come before phone
numbers so that a card is never taken for a phone number, and the card guarantee still holds
on the text as finally sent: a phone number is replaced whole, from the start of a group of
digits to the end of one, which cannot make new card numbers appear. Redacting twice gives
what redacting once gave. Digits are ASCII digits. These are heuristics for the common
forms; anything else belongs in ``patterns``. This guard fails closed: if it cannot redact, the
operation does not happen. ``redact_secrets`` is its sibling for API keys and tokens; both
share the rewriting code (``_rewrite``).
"""

from __future__ import annotations

import re
from typing import Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..envelope import Envelope
from ..events import ModelRequestEvent, TaskStartEvent, ToolCallEvent, ToolResultEvent
from ..middleware import middleware
from ..outcomes import Continue
from ._rewrite import (
    check_pattern,
    rewrite_request,
    rewrite_task_input,
    rewrite_tool_call,
    rewrite_tool_result,
)

__all__ = ["DETECTORS", "PiiSettings", "RedactPii", "luhn_valid", "redact_cards"]

Detector = Literal["email", "phone", "credit_card"]
DETECTORS: Final[tuple[Detector, ...]] = ("email", "phone", "credit_card")
"""The built-in detectors: all of them run by default (emails, then cards, then phones)."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")

EMAIL: Final = re.compile(
    # The look-behind lets a match start only where a local part starts: without it, a long
    # word with no @ would be scanned again from each of its characters (quadratic time). A
    # "]" counts as part of a word there, so that text right after a replacement is judged as
    # it was before (redacting twice gives what redacting once gave).
    r"(?<![A-Za-z0-9._%+\]-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_NOT_AFTER = r"(?<![\w+.)\]-])"
_NOT_BEFORE = r"(?![\w+(\[]|[.-][0-9])"
PHONE: Final = re.compile(
    # +CC followed by digits, each optionally after one separator or in parentheses
    rf"{_NOT_AFTER}\+[0-9](?:[ .-]?(?:[0-9]|\([0-9]{{1,4}}\)))+{_NOT_BEFORE}"
    # North American: (555) 123-4567, 555-123-4567, 555.123.4567, 555 123 4567
    rf"|{_NOT_AFTER}(?:\([0-9]{{3}}\)[ .-]?|[0-9]{{3}}[ .-])[0-9]{{3}}[ .-][0-9]{{4}}{_NOT_BEFORE}"
)
"""Phone numbers. A number glued to what could end or start another one (a digit, a ``+``,
a parenthesis, a bracket such as a replacement's) is not one: that keeps a number from being
cut out of a longer one, and makes redacting twice the same as redacting once (the
replacement of a neighbour is judged as the neighbour was)."""
_DIGIT_RUN: Final = re.compile(r"[0-9]+")
_CHAIN: Final = re.compile(r"[0-9]+(?:[ -][0-9]+)*")
"""Groups of digits joined by single spaces or hyphens: where card numbers can be."""
_DOUBLED: Final = tuple(d * 2 - 9 if d > 4 else d * 2 for d in range(10))
"""Each digit as the Luhn check counts it when it is doubled."""


def luhn_valid(digits: str) -> bool:
    """Whether a string of ASCII digits passes the Luhn check."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        total += _DOUBLED[value] if index % 2 else value
    return total % 10 == 0


def redact_cards(text: str, replacement: str) -> str:
    """``text`` with every card number replaced: every stretch of 13 to 19 digits, in groups
    joined by one space or hyphen, starting and ending at a group boundary, that passes the
    Luhn check. From each group, the longest such stretch is taken."""
    out: list[str] = []
    done = 0  # text[:done] is settled
    for chain in _CHAIN.finditer(text):
        found = chain.group()
        if len(found) - found.count(" ") - found.count("-") < 13:
            continue  # too few digits for a card: most numbers end here
        groups = [m.span() for m in _DIGIT_RUN.finditer(text, *chain.span())]
        first = 0
        while first < len(groups):
            card = _longest_card(text, groups, first)
            if card is None:
                first += 1
                continue
            out.append(text[done : groups[first][0]])
            out.append(replacement)
            done = groups[card][1]
            first = card + 1
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _longest_card(text: str, groups: list[tuple[int, int]], first: int) -> int | None:
    """The last group of the longest card number starting at group ``first``, if any.

    The Luhn sum is kept for both parities as digits are added (the check doubles every
    second digit counting from the last, so which ones depends on where the number ends):
    each group start costs one pass over at most 19 digits, however many ends are tried.
    """
    count = 0
    sums = [0, 0]  # sums[p]: the Luhn sum if the digits at offsets of parity p are doubled
    card = None
    for last in range(first, len(groups)):
        start, end = groups[last]
        if count + end - start > 19:
            break
        for char in text[start:end]:
            digit = ord(char) - 48
            sums[count % 2] += _DOUBLED[digit]
            sums[1 - count % 2] += digit
            count += 1
        # the last digit is never doubled: the doubled ones have the other parity
        if count >= 13 and sums[count % 2] % 10 == 0:
            card = last
    return card


def _phone(match: re.Match[str]) -> str:
    found = match.group()
    if found.startswith("+") and not 8 <= sum(char.isdigit() for char in found) <= 15:
        return found  # too short or too long for an international number (E.164)
    return "[redacted:phone]"


class PiiSettings(BaseModel):
    """``detect``: the built-in detectors to use; ``patterns``: your own, by name."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    detect: tuple[Detector, ...] = DETECTORS
    patterns: dict[str, str] = Field(default_factory=dict)

    @field_validator("patterns")
    @classmethod
    def _named_and_compiling(cls, patterns: dict[str, str]) -> dict[str, str]:
        for name, pattern in patterns.items():
            if _NAME.fullmatch(name) is None:
                raise ValueError(
                    f"pattern name {name!r} must be lower-case letters, digits and _ "
                    "(it names the replacement, [redacted:<name>])"
                )
            check_pattern(pattern)
        return patterns

    @model_validator(mode="after")
    def _finds_something(self) -> Self:
        if not self.detect and not self.patterns:
            raise ValueError("detect is empty and there are no patterns: nothing would be found")
        return self


@middleware(
    hooks=["task.start", "model.before", "tool.before", "tool.after"],
    fail_mode="closed",
    config=PiiSettings,
    sample={"detect": list(DETECTORS), "patterns": {"employee_id": r"\bE\d{6}\b"}},
)
class RedactPii:
    """Replaces emails, phone numbers, card numbers and your own patterns with
    ``[redacted:<kind>]`` in the task's input, model requests, tool-call arguments and tool
    outputs."""

    def __init__(self, config: PiiSettings) -> None:
        steps: list[tuple[re.Pattern[str], str]] = [
            (re.compile(pattern), f"[redacted:{name}]") for name, pattern in config.patterns.items()
        ]
        if "email" in config.detect:
            steps.append((EMAIL, "[redacted:email]"))
        self.steps = tuple(steps)
        self.phone = "phone" in config.detect
        self.cards = "credit_card" in config.detect

    def redact(self, text: str) -> str:
        """``text`` with every piece of personal data the guard finds replaced."""
        for pattern, replacement in self.steps:
            text = pattern.sub(replacement, text)
        if self.cards:
            text = redact_cards(text, "[redacted:credit_card]")
        if self.phone:
            text = PHONE.sub(_phone, text)
        return text

    async def __call__(
        self,
        event: TaskStartEvent | ModelRequestEvent | ToolCallEvent | ToolResultEvent,
        env: Envelope,
    ) -> Continue | None:
        modified: TaskStartEvent | ModelRequestEvent | ToolCallEvent | ToolResultEvent | None
        if isinstance(event, TaskStartEvent):
            modified = rewrite_task_input(event, self.redact)
        elif isinstance(event, ModelRequestEvent):
            modified = rewrite_request(event, self.redact)
        elif isinstance(event, ToolCallEvent):
            modified = rewrite_tool_call(event, self.redact)
        else:
            modified = rewrite_tool_result(event, self.redact)
        return None if modified is None else Continue(modified=modified)
