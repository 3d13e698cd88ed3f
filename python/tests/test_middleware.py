"""@hw.middleware on functions and classes: names, validation at declaration, settings."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import harnessweaver as hw


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float


def test_a_function_keeps_its_name_and_stays_callable() -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="2s")
    async def guard(event: Any, env: hw.Envelope) -> None:
        """Guards."""
        return None

    assert isinstance(guard, hw.Middleware)
    decl = guard.spec.declaration
    assert (decl.name, decl.hooks, decl.band, decl.fail_mode, decl.timeout) == (
        "guard",
        ("tool.before",),
        "app",
        "closed",
        2.0,
    )
    assert guard.__name__ == "guard" and guard.__doc__ == "Guards."


@pytest.mark.parametrize(
    ("class_name", "expected"),
    [
        ("RefundCap", "refund_cap"),
        ("HTTPGuard", "http_guard"),
        ("Guard2FA", "guard2_fa"),
        ("OAuth2Token", "o_auth2_token"),
        ("already_snake", "already_snake"),
    ],
)
def test_a_class_name_becomes_snake_case(class_name: str, expected: str) -> None:
    async def call(self: object, event: Any, env: hw.Envelope) -> None:
        return None

    cls = type(class_name, (), {"__call__": call})
    declared = hw.middleware(hooks=["tool.before"], fail_mode="open")(cls)
    assert declared is cls
    assert cls.__harnessweaver__.declaration.name == expected


def test_fail_mode_is_required_at_declaration() -> None:
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(hw.DeclarationError) as caught:
        hw.middleware(hooks=["tool.before"])(guard)  # type: ignore[call-overload]
    assert caught.value.kind == "missing_fail_mode" and caught.value.rule == "ruling-14"
    assert "'guard'" in str(caught.value) and "ruling 14" in str(caught.value)


def test_baseline_open_fails_at_declaration_naming_r2() -> None:
    async def tracer(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(hw.DeclarationError, match=r"\(R2\)") as caught:
        hw.middleware(hooks=["model.after"], band="baseline", fail_mode="open")(tracer)
    assert caught.value.kind == "baseline_fail_open"


def test_a_sync_function_is_rejected() -> None:
    def guard(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(hw.DeclarationError, match="must be an async function") as caught:
        hw.middleware(hooks=["tool.before"], fail_mode="open")(guard)  # type: ignore[arg-type]
    assert caught.value.kind == "not_async"


def test_a_class_without_async_call_is_rejected() -> None:
    class Guard:
        def __call__(self, event: Any, env: hw.Envelope) -> None:
            return None

    with pytest.raises(hw.DeclarationError, match="async def __call__"):
        hw.middleware(hooks=["tool.before"], fail_mode="open")(Guard)


def test_config_is_for_classes_and_must_be_a_pydantic_model() -> None:
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(hw.DeclarationError, match="for middleware classes"):
        hw.middleware(hooks=["tool.before"], fail_mode="open", config=CapSettings)(guard)  # type: ignore[arg-type]

    class Guard:
        async def __call__(self, event: Any, env: hw.Envelope) -> None:
            return None

    with pytest.raises(hw.DeclarationError, match="pydantic model class"):
        hw.middleware(hooks=["tool.before"], fail_mode="open", config=dict)(Guard)  # type: ignore[arg-type]


def test_a_sample_is_validated_against_config_at_declaration() -> None:
    class Cap:
        def __init__(self, config: CapSettings) -> None:
            self.max_usd = config.max_usd

        async def __call__(self, event: Any, env: hw.Envelope) -> None:
            return None

    with pytest.raises(hw.DeclarationError, match="max_usd") as caught:
        hw.middleware(hooks=["tool.before"], fail_mode="closed", config=CapSettings, sample={})(Cap)
    assert caught.value.kind == "invalid_settings"
    ok = hw.middleware(
        hooks=["tool.before"], fail_mode="closed", config=CapSettings, sample={"max_usd": 5}
    )(Cap)
    assert ok.__harnessweaver__.sample == {"max_usd": 5}


def test_declare_checks_run_in_the_order_of_i4() -> None:
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    with pytest.raises(hw.DeclarationError) as caught:
        hw.middleware(hooks=[], band="core", fail_mode="sometimes", timeout="x")(guard)  # type: ignore[call-overload]
    assert caught.value.kind == "invalid_hooks"
    with pytest.raises(hw.DeclarationError) as caught:
        hw.middleware(hooks=["tool.before"], band="core", timeout="x")(guard)  # type: ignore[call-overload]
    assert caught.value.kind == "invalid_band"
    with pytest.raises(hw.DeclarationError) as caught:
        hw.middleware(hooks=["tool.before"], timeout="x")(guard)  # type: ignore[call-overload]
    assert caught.value.kind == "missing_fail_mode"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("250ms", 0.25), ("2s", 2.0), ("1.5s", 1.5), ("1m", 60.0), (2, 2.0), (0.5, 0.5)],
)
def test_parse_duration_accepts_ruling_15_forms(value: object, seconds: float) -> None:
    assert hw.parse_duration(value) == seconds


@pytest.mark.parametrize(
    "value",
    [
        0,
        -1,
        0.0,
        "0s",
        "2 s",
        "2h",
        "abc",
        "",
        "1.5",
        "ms",
        "2S",
        True,
        None,
        float("nan"),
        float("inf"),
    ],
)
def test_parse_duration_rejects_everything_else(value: object) -> None:
    with pytest.raises(hw.DeclarationError) as caught:
        hw.parse_duration(value)
    assert caught.value.kind == "invalid_duration" and "ruling 15" in str(caught.value)
    if isinstance(value, str):
        assert f"'{value}'" in str(caught.value)


def test_declarations_compare_by_value() -> None:
    async def a(event: Any, env: hw.Envelope) -> None:
        return None

    first = hw.middleware(hooks=["tool.after", "tool.before"], fail_mode="open")(a).spec.declaration
    again = hw.middleware(hooks=("tool.before", "tool.after", "tool.before"), fail_mode="open")(a)
    assert first == again.spec.declaration and hash(first) == hash(again.spec.declaration)
    assert first.hooks == ("tool.before", "tool.after")  # catalogue order, repeats collapse (I3)
    assert repr(first) == (
        "Declaration(name='a', hooks=('tool.before', 'tool.after'), band='app', "
        "fail_mode='open', timeout=None)"
    )


class _Seconds(float):
    pass


class _Whole(int):
    pass


class _Text(str):
    pass


class _FloatLike:
    def __float__(self) -> float:
        return 2.0


# I17: values that only Python can express; the corpus holds the JSON-expressible ones
# (conformance/cases/declaration/odd-inputs.json).
_ODD_TIMEOUTS_REJECTED: list[object] = [
    Decimal("0.25"),
    Fraction(1, 4),
    _FloatLike(),
    10**400,
    -(10**400),
    1e300,
    float("-inf"),
    -0.0,
    5e-324,
    b"2s",
    "2s\udcff",
    bytearray(b"2"),
]


@pytest.mark.parametrize("value", _ODD_TIMEOUTS_REJECTED, ids=lambda v: repr(v)[:32])
def test_odd_timeouts_are_invalid_durations_on_every_core(value: object) -> None:
    with pytest.raises(hw.DeclarationError) as caught:
        hw.parse_duration(value)
    assert caught.value.kind == "invalid_duration"
    str(caught.value).encode("utf-8")  # a message is valid text, whatever the value


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(_Seconds(0.5), 0.5), (_Whole(2), 2.0), (_Text("250ms"), 0.25), (True + 1, 2.0)],
    ids=repr,
)
def test_int_float_and_str_subclasses_are_durations(value: object, seconds: float) -> None:
    assert hw.parse_duration(value) == seconds


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("name", "\udcff", "invalid_name"),
        ("name", "guard\udcff", "invalid_name"),
        ("name", _Text("gu ard"), "invalid_name"),
        ("hooks", ["\udcff"], "unknown_hook"),
        ("hooks", ["nope", 5], "invalid_hooks"),
        ("hooks", {"tool.before": 1}.keys(), "invalid_hooks"),
        ("band", "\udcff", "invalid_band"),
        ("fail_mode", "\udcff", "invalid_fail_mode"),
        ("timeout", "\udcff", "invalid_duration"),
        ("timeout", Decimal(1), "invalid_duration"),
        ("timeout", 10**400, "invalid_duration"),
    ],
    ids=lambda v: repr(v)[:32],
)
def test_odd_declaration_values_get_their_fields_error(
    field: str, value: object, kind: str
) -> None:
    given: dict[str, Any] = {"name": "guard", "hooks": ["tool.before"], "fail_mode": "closed"}
    given[field] = value
    decl: Any = hw.middleware(**given)
    with pytest.raises(hw.DeclarationError) as caught:
        decl(_noop)
    assert caught.value.kind == kind
    assert "\\udcff" in str(caught.value) or "\udcff" not in repr(value)  # shown escaped


async def _noop(event: Any, env: hw.Envelope) -> None:
    return None


def test_both_cores_agree_on_odd_declarations() -> None:
    rust = pytest.importorskip("harnessweaver._core")
    from harnessweaver import _pycore

    def verdict(core: Any, field: str, value: object) -> object:
        given: dict[str, Any] = {"band": "app", "fail_mode": "closed", "timeout": None}
        name: object = value if field == "name" else "guard"
        hooks: object = value if field == "hooks" else ["tool.before"]
        if field in given:
            given[field] = value
        try:
            decl = core.declare(name, hooks, **given)
        except hw.HarnessweaverError as exc:
            return (exc.kind, str(exc))
        return (decl.name, tuple(decl.hooks), decl.band, decl.fail_mode, decl.timeout_ns)

    values: list[object] = [
        *_ODD_TIMEOUTS_REJECTED, _Seconds(0.5), _Whole(3), "0.0001ms", " 2s", "1e3s", "\uff12s",
        "\udcff", "g\udcff", "\ud800\udc00", "é", ["\udcff"], ["nope", 5], [5, "nope"],
        {"tool.before": 1}.keys(), frozenset({"tool.before"}), _Text("task"), "APP", None,
    ]  # fmt: skip
    for field in ("name", "hooks", "band", "fail_mode", "timeout"):
        for value in values:
            assert verdict(rust, field, value) == verdict(_pycore, field, value), (field, value)
