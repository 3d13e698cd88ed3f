"""Outcomes and HookResult behave the same in both cores: values, immutability, equality."""

from __future__ import annotations

import pickle

import pytest

import harnessweaver as hw

ALL = [
    hw.Continue(),
    hw.Continue(modified=hw.TaskStartEvent(task="t")),
    hw.Block("no", code="refund_cap"),
    hw.Suspend("wait", approver_role="finance"),
    hw.Escalate("look", to="oncall", code="x"),
    hw.Retry("again", delay="250ms", max_attempts=3),
]


def test_repr_is_the_constructor_call() -> None:
    assert repr(hw.Block("no", code="c")) == "Block(reason='no', code='c')"
    assert repr(hw.Continue()) == "Continue(modified=None)"
    assert repr(hw.Suspend("w", approver_role="finance")) == (
        "Suspend(reason='w', approver_role='finance', code=None)"
    )
    assert repr(hw.Escalate("e")) == "Escalate(reason='e', to=None, code=None)"
    assert repr(hw.Retry("r", delay=2, max_attempts=1)) == (
        "Retry(reason='r', delay=2.0, max_attempts=1, code=None)"
    )


@pytest.mark.parametrize("outcome", ALL, ids=lambda o: type(o).__name__)
def test_outcomes_are_immutable(outcome: object) -> None:
    with pytest.raises(AttributeError):
        outcome.reason = "changed"  # type: ignore[attr-defined]


@pytest.mark.parametrize("outcome", ALL[2:], ids=lambda o: type(o).__name__)
def test_equal_values_are_equal_and_hash_alike(outcome: object) -> None:
    twin = pickle.loads(pickle.dumps(outcome))
    assert twin == outcome and hash(twin) == hash(outcome) and twin is not outcome
    assert outcome != hw.Block("other")


def test_different_kinds_never_compare_equal() -> None:
    assert hw.Block("x") != hw.Suspend("x")
    assert hw.Block("x") != ("x", None)


def test_kind_and_to_dict_give_the_corpus_json() -> None:
    assert [o.kind for o in ALL] == [
        "continue",
        "continue",
        "block",
        "suspend",
        "escalate",
        "retry",
    ]
    assert hw.Continue().to_dict() == {"kind": "continue", "modified": False}
    assert ALL[1].to_dict() == {"kind": "continue", "modified": True}
    assert hw.Retry("r", delay="250ms").to_dict() == {
        "kind": "retry",
        "reason": "r",
        "delay": 0.25,
        "max_attempts": None,
        "code": None,
    }


def test_outcomes_work_in_match_statements() -> None:
    match hw.Suspend("weekend", approver_role="finance"):
        case hw.Suspend(reason, role):
            assert (reason, role) == ("weekend", "finance")
        case _:
            pytest.fail("Suspend did not match its own pattern")


def test_outcome_annotation_alias_accepts_every_outcome() -> None:
    assert all(isinstance(o, hw.Outcome) for o in ALL)  # type: ignore[misc, arg-type]
    assert not isinstance("block", hw.Outcome)  # type: ignore[misc, arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: hw.Block(42), "Block.reason must be a str, got 42"),  # type: ignore[arg-type]
        (lambda: hw.Block("x", code=3), "Block.code must be a str or None, got 3"),  # type: ignore[arg-type]
        (lambda: hw.Suspend(None), "Suspend.reason must be a str, got None"),  # type: ignore[arg-type]
        (lambda: hw.Escalate("x", to=1), "Escalate.to must be a str or None, got 1"),  # type: ignore[arg-type]
    ],
)
def test_wrong_field_types_are_type_errors_naming_the_field(build: object, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        build()  # type: ignore[operator]
    assert str(caught.value) == message


@pytest.mark.parametrize("delay", [0, -1, "2 s", True, "soon"])
def test_retry_delay_follows_the_duration_rule(delay: object) -> None:
    with pytest.raises(ValueError, match=r"Retry\.delay must be a positive number"):
        hw.Retry("r", delay=delay)  # type: ignore[arg-type]


@pytest.mark.parametrize("attempts", [0, -2, 1.5, True, "3"])
def test_retry_max_attempts_is_a_whole_number_from_one(attempts: object) -> None:
    with pytest.raises(ValueError, match="max_attempts must be a whole number"):
        hw.Retry("r", max_attempts=attempts)  # type: ignore[arg-type]


def test_outcomes_are_final() -> None:
    with pytest.raises(TypeError):

        class Mine(hw.Block):  # type: ignore[misc]
            pass


def test_hook_result_holds_outcome_and_event_and_is_unhashable() -> None:
    event = hw.TaskStartEvent(task="t")
    result = hw.HookResult(hw.Block("b"), event)
    assert (result.outcome, result.event) == (hw.Block("b"), event)
    assert result == hw.HookResult(hw.Block("b"), hw.TaskStartEvent(task="t"))
    with pytest.raises(TypeError):
        hash(result)
    with pytest.raises(AttributeError):
        result.outcome = hw.Continue()  # type: ignore[misc]
    assert repr(result).startswith("HookResult(outcome=Block(reason='b', code=None), event=")
