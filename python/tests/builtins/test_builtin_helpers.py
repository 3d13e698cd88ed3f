"""What the built-ins share: notes to the model, rewriting an event's text."""

from __future__ import annotations

import pytest
from builtins_support import call, request, result, user

import harnessweaver as hw
from harnessweaver.builtins._notes import NOTE_PREFIX, with_note
from harnessweaver.builtins._rewrite import (
    check_pattern,
    rewrite_json,
    rewrite_request,
    rewrite_tool_call,
    rewrite_tool_result,
)


def upper_x(text: str) -> str:
    return text.replace("x", "X")


def test_a_note_extends_a_last_user_message() -> None:
    noted = with_note(request(user("hi")), "careful")
    assert noted.request.messages == (user(f"hi\n\n{NOTE_PREFIX} careful"),)


def test_a_note_after_anything_else_is_one_new_user_message() -> None:
    said = hw.Message(role="assistant", content="ok")
    assert with_note(request(said), "a").request.messages == (said, user(f"{NOTE_PREFIX} a"))
    assert with_note(request(), "a").request.messages == (user(f"{NOTE_PREFIX} a"),)


def test_two_notes_add_one_message() -> None:
    # guards warning at the same hook point stay within "at most one more user message"
    said = hw.Message(role="assistant", content="ok")
    twice = with_note(with_note(request(said), "a"), "b")
    assert twice.request.messages == (said, user(f"{NOTE_PREFIX} a\n\n{NOTE_PREFIX} b"))


def test_rewrite_json_keeps_unchanged_values_identical() -> None:
    value = {"a": ["x", {"b": "y"}], "c": 1}
    assert rewrite_json(value, str.upper) == {"a": ["X", {"b": "Y"}], "c": 1}
    same = {"a": ["y", {"b": "z"}], "n": None}
    assert rewrite_json(same, upper_x) is same
    mixed = {"kept": ["y"], "changed": "x"}
    out = rewrite_json(mixed, upper_x)
    assert isinstance(out, dict) and out["kept"] is mixed["kept"] and out["changed"] == "X"


def test_rewriting_events_returns_none_when_nothing_changed() -> None:
    assert rewrite_request(request(user("y")), upper_x) is None
    assert rewrite_tool_call(call(q="y"), upper_x) is None
    assert rewrite_tool_result(result(output=["y", 1]), upper_x) is None
    changed = rewrite_tool_result(result(output=["x", 1]), upper_x)
    assert changed is not None and changed.result.output == ["X", 1]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(", "invalid regular expression '\\('"), ("a?", "matches the empty string")],
)
def test_check_pattern(pattern: str, message: str) -> None:
    assert check_pattern("a+") == "a+"
    with pytest.raises(ValueError, match=message):
        check_pattern(pattern)
