"""``harnessweaver.redact_pii``: emails, phone numbers, card numbers and your own patterns are
replaced in model requests, tool-call arguments and tool outputs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from builtins_support import bus_with, call, records, request, result, run, user
from hypothesis import given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.builtins import RedactPii
from harnessweaver.builtins.pii import PiiSettings, luhn_valid

pytestmark = pytest.mark.anyio

redact = RedactPii(PiiSettings()).redact
CARD = "4111 1111 1111 1111"  # a test Visa number: Luhn-valid


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("write to ana.lopez+news@mail.example.co.uk today", "write to [redacted:email] today"),
        ("call +44 20 7946 0958", "call [redacted:phone]"),
        ("call (555) 123-4567 or 555.123.4567", "call [redacted:phone] or [redacted:phone]"),
        (f"card {CARD}, thanks", "card [redacted:credit_card], thanks"),
        ("amex 3782-822463-10005", "amex [redacted:credit_card]"),
        # a card followed by more digits (a CVV) is still found
        (f"card {CARD} 123", "card [redacted:credit_card] 123"),
    ],
)
def test_what_is_found(text: str, redacted: str) -> None:
    assert redact(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "order 1234 5678 9012 3456",  # 16 digits, but not Luhn-valid
        "id 41111111111111111111",  # a card's digits inside a longer number
        "on 2026-11-30 at 10:15, +100 points, version 1.2.3, pi 3.14159",
        "ip 192.168.1.10 and a user@localhost without a domain",
    ],
)
def test_what_is_left_alone(text: str) -> None:
    assert redact(text) == text


async def test_model_request_messages_and_their_tool_calls_are_redacted() -> None:
    bus, ctx = bus_with(RedactPii), run()
    asked = hw.Message(
        role="assistant",
        tool_calls=(hw.ToolCall(name="lookup", arguments={"email": "bo@example.com"}),),
    )
    event = request(
        hw.Message(role="system", content="be kind"), user("I am bo@example.com"), asked
    )
    done = await bus.emit("model.before", event, ctx)
    system, said, called = done.event.request.messages
    assert system is event.request.messages[0]  # untouched messages are kept as they are
    assert said.content == "I am [redacted:email]"
    assert called.tool_calls[0].arguments == {"email": "[redacted:email]"}


async def test_the_task_input_is_redacted_at_task_start() -> None:
    bus, ctx = bus_with(RedactPii), run()
    task = hw.TaskStartEvent(task="support", input={"from": "bo@example.com", "n": [1, "x"]})
    done = await bus.emit("task.start", task, ctx)
    assert done.event.input == {"from": "[redacted:email]", "n": [1, "x"]}
    assert done.outcome == hw.Continue(modified=done.event)
    plain = hw.TaskStartEvent(task="support", input="nothing personal")
    kept = await bus.emit("task.start", plain, ctx)
    assert kept.outcome == hw.Continue() and kept.event is plain


async def test_tool_arguments_and_outputs_are_redacted_at_any_depth() -> None:
    bus, ctx = bus_with(RedactPii), run()
    before = await bus.emit("tool.before", call(to=["bo@example.com", 3], note=None), ctx)
    assert before.event.call.arguments == {"to": ["[redacted:email]", 3], "note": None}
    output = {"rows": [{"phone": "555-123-4567", "n": 1}], "ok": True}
    after = await bus.emit("tool.after", result(output=output), ctx)
    assert after.event.result.output == {
        "rows": [{"phone": "[redacted:phone]", "n": 1}],
        "ok": True,
    }
    assert after.event.result.is_error is False


async def test_nothing_found_means_a_plain_continue_and_the_same_event() -> None:
    bus, ctx = bus_with(RedactPii), run()
    events: list[tuple[str, Any]] = [
        ("model.before", request(user("hello"))),
        ("tool.before", call(q="weather", n=[1, 2])),
        ("tool.after", result(output={"temp": 21})),
    ]
    for hook, event in events:
        done = await bus.emit(hook, event, ctx)
        assert done.outcome == hw.Continue() and done.event is event
    assert [r["modified"] for r in records(ctx, "redact_pii")] == [False, False, False]


async def test_own_patterns_and_chosen_detectors() -> None:
    bus, ctx = bus_with(RedactPii, detect=["email"], patterns={"employee_id": r"\bE\d{6}\b"}), run()
    text = f"E123456 at bo@example.com paid with {CARD}"
    done = await bus.emit("tool.before", call(note=text), ctx)
    assert done.event.call.arguments == {
        "note": f"[redacted:employee_id] at [redacted:email] paid with {CARD}"
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"detect": ["ssn"]}, "detect.0: Input should be 'email', 'phone' or 'credit_card'"),
        ({"patterns": {"id": "("}}, "patterns: Value error, invalid regular expression '('"),
        ({"patterns": {"id": "x*"}}, "patterns: Value error, the regular expression 'x*' matches"),
        ({"patterns": {"Bad Name": "x"}}, "patterns: Value error, pattern name 'Bad Name' must"),
        ({"patterns": ["x"]}, "patterns: Input should be a valid dictionary"),
        ({"detect": []}, "(settings): Value error, detect is empty and there are no patterns"),
        ({"replace": "x"}, "replace: Extra inputs are not permitted"),
    ],
)
def test_settings_are_checked(values: dict[str, Any], message: str) -> None:
    with pytest.raises(hw.RegistrationError, match=re.escape(message)):
        bus_with(RedactPii, **values)


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112") and not luhn_valid("1234567890123456")


def luhn_valid_cards_left(text: str) -> list[str]:
    """Every card the guard promises to find, by brute force: a stretch of 13 to 19 ASCII
    digits, single spaces or hyphens between digits, with no digit right before or after it,
    that passes the Luhn check."""
    found = []
    for start in range(len(text)):
        if not text[start].isascii() or not text[start].isdigit():
            continue
        if start and text[start - 1] in "0123456789":
            continue
        for end in range(start + 1, len(text) + 1):
            piece = text[start:end]
            if re.fullmatch(r"[0-9](?:[ -]?[0-9])*", piece) is None:
                continue
            if end < len(text) and text[end] in "0123456789":
                continue
            digits = re.sub("[ -]", "", piece)
            if 13 <= len(digits) <= 19 and luhn_valid(digits):
                found.append(piece)
    return found


def with_check_digit(body: str) -> str:
    """``body`` and the digit that makes it Luhn-valid."""
    return next(body + d for d in "0123456789" if luhn_valid(body + d))


cards = st.builds(with_check_digit, st.text("0123456789", min_size=12, max_size=18)).map(
    lambda digits: " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))
)
# Digits, separators, the characters phone numbers and addresses are made of, and brackets
# (a replacement's): glued together they make the neighbours the detectors must get right.
noise = st.text(st.sampled_from("0123456789 -ab+@.()[]_%:\n"), max_size=16)
known = st.sampled_from(["bo@ex.com", "+44 20 7946 0958", "(555) 123-4567", "555-123-4567"])
texts = st.lists(st.one_of(cards, noise, known), max_size=6).map("".join)


@settings(max_examples=300, deadline=None, database=None)
@given(texts)
def test_no_luhn_valid_card_number_is_left(text: str) -> None:
    assert luhn_valid_cards_left(redact(text)) == []


@settings(max_examples=200, deadline=None, database=None)
@given(texts)
def test_redaction_is_idempotent(text: str) -> None:
    # what a later guard, or the same guard at the next hook point, sees needs no more work
    once = redact(text)
    assert redact(once) == once
