"""Content identity (I27): the identity function, the bus's scheme, hook records, the reader.

The corpus (``trace/identity.json``) pins what a bus records; these tests pin the function
itself on values no case can carry (NaN, sets, bytes), the reader's rule, the JSON Lines round
trip and the spec key. They run on the core the suite runs on.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest
from checkout import needs_compiled_core
from conftest import tool_call
from hypothesis import given, settings
from hypothesis import strategies as st

import harnessweaver as hw

LIMIT = 2**53 - 1
# Computed with the Rust crate serde_json_canonicalizer, independently of either core.
GOLDEN = {
    "b": [1.0, -0.0, 0.000001, 1e-7, 3.14, 2.5e-9, LIMIT, -LIMIT, 1e15],
    "a": "\u00e9\u0007",
    "\ue000": 1,
    "\U0001f600": 2,
}
GOLDEN_ID = "sha256:e5f7983fa0919e2d42207a99ff154d99c9c356a1cebb6cb51c01c8c5cf1956fb"
HEX = "0123456789abcdef"


def test_the_identity_is_the_sha256_of_the_rfc8785_form() -> None:
    assert hw.content_identity(GOLDEN) == GOLDEN_ID
    # Key order and int/float spelling are not part of what an event holds.
    reordered = {k: GOLDEN[k] for k in reversed(list(GOLDEN))}
    reordered["b"] = [1, 0, 1e-6, 1e-7, 3.14, 2.5e-9, float(LIMIT), -LIMIT, 10**15]
    assert hw.content_identity(reordered) == GOLDEN_ID
    assert hw.content_identity(tuple(GOLDEN["b"])) == hw.content_identity(list(GOLDEN["b"]))


def test_an_event_is_identified_by_its_json_form() -> None:
    event = tool_call(order=7, note="hé")
    identity = hw.content_identity(event)
    assert identity == hw.content_identity(event.model_dump(mode="json"))
    assert identity is not None and identity.startswith("sha256:") and len(identity) == 71
    assert set(identity[7:]) <= set(HEX)
    assert hw.content_identity(tool_call(order=8, note="hé")) != identity


@pytest.mark.parametrize(
    "value",
    [LIMIT, -LIMIT, 3.5, -0.0, 1e-300, "", "\U0001f600", None, True, [], {}],
    ids=repr,
)
def test_values_inside_i_json_have_an_identity(value: Any) -> None:
    assert hw.content_identity({"v": value}) is not None


@pytest.mark.parametrize(
    "value",
    [
        LIMIT + 1,
        -LIMIT - 1,
        2**64,
        1e21,
        -1e300,
        float(LIMIT + 1),
        math.inf,
        -math.inf,
        math.nan,
        "a\ud800",
        "\udfff",
        {"\udc00": 1},
        [[["deep \ud83d"]]],
    ],
    ids=ascii,
)
def test_values_outside_i_json_have_none(value: Any) -> None:
    assert hw.content_identity({"v": value}) is None
    assert hw.content_identity(tool_call(v=value)) is None


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object(), {1: "int key"}, hw.Envelope])
def test_what_is_no_json_value_is_a_type_error(value: Any) -> None:
    with pytest.raises(TypeError, match="I27"):
        hw.content_identity({"v": value})


@pytest.mark.parametrize("scheme", ["sha256", "JCS-SHA256", "", 1, True, ["jcs-sha256"]])
def test_a_bus_refuses_any_other_scheme(scheme: Any) -> None:
    with pytest.raises(hw.RegistrationError) as caught:
        hw.HookBus(identity=scheme)
    assert (caught.value.kind, caught.value.rule) == ("invalid_identity", "I27")
    shown = f"'{scheme}'" if isinstance(scheme, str) else repr(scheme)
    assert shown in str(caught.value) and "(I27)" in str(caught.value)


def test_the_scheme_is_read_back() -> None:
    assert hw.HookBus().identity is None
    assert hw.HookBus(identity=None).identity is None
    assert hw.HookBus(identity="jcs-sha256").identity == "jcs-sha256"


def _traced(bus: hw.HookBus, *events: hw.ToolCallEvent) -> hw.Trace:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="ids"))

    async def go() -> None:
        for event in events:
            await bus.emit("tool.before", event, ctx)

    anyio.run(go)
    return ctx.trace


def _noting_bus() -> hw.HookBus:
    bus = hw.HookBus(identity="jcs-sha256")

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def note(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        arguments = {**event.call.arguments, "note": "seen"}
        call = event.call.model_copy(update={"arguments": arguments})
        return hw.Continue(modified=event.model_copy(update={"call": call}))

    bus.register(note)
    return bus


def test_hook_records_name_the_event_given_and_the_event_left() -> None:
    given = tool_call(order=1)
    trace = _traced(_noting_bus(), given, tool_call(order=2**60))
    hooks = [r for r in trace if r["kind"] == "hook"]
    left = tool_call(order=1, note="seen")
    assert hooks[0]["input_identity"] == hw.content_identity(given)
    assert hooks[0]["enforced_identity"] == hw.content_identity(left)
    assert (hooks[1]["input_identity"], hooks[1]["enforced_identity"]) == (None, None)
    assert all("input_identity" not in r for r in trace if r["kind"] != "hook")
    keys = list(hooks[0])
    assert keys[-4:] == ["input_identity", "enforced_identity", "t_ns", "duration_ns"]


def test_identities_survive_json_lines_both_ways(tmp_path: Path) -> None:
    trace = _traced(_noting_bus(), tool_call(order=1), tool_call(order=2**60))
    text = trace.to_jsonl()
    assert '"input_identity":null,"enforced_identity":null' in text
    again = hw.Trace.from_jsonl(text)
    assert again.to_jsonl() == text
    assert again.records() == trace.records()


def _hook_line(**extra: Any) -> str:
    import json

    record = {"emit": 1, "hook": "task.start", "kind": "hook", "outcome": "continue"}
    return json.dumps({**record, "modified": False, **extra}) + "\n"


def _outcome_line(**extra: Any) -> str:
    import json

    record = {"emit": 1, "hook": "task.start", "kind": "outcome", "middleware": "m"}
    return json.dumps({**record, "band": "app", "outcome": "continue", "modified": False, **extra})


GOOD = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    "line",
    [
        _hook_line(input_identity=GOOD),
        _hook_line(enforced_identity=GOOD),
        _hook_line(input_identity="sha256:" + "A" * 64, enforced_identity=GOOD),
        _hook_line(input_identity="sha256:" + "0" * 63, enforced_identity=GOOD),
        _hook_line(input_identity="sha1:" + "0" * 64, enforced_identity=GOOD),
        _hook_line(input_identity=GOOD, enforced_identity=7),
        _hook_line(input_identity=GOOD, enforced_identity=GOOD + "0"),
        _outcome_line(input_identity=GOOD, enforced_identity=GOOD) + "\n",
        _outcome_line(input_identity=None, enforced_identity=None) + "\n",
    ],
)
def test_a_reader_takes_identities_only_where_i27_puts_them(line: str) -> None:
    with pytest.raises(hw.TraceFormatError) as caught:
        hw.Trace.from_jsonl(line)
    assert caught.value.kind == "invalid_trace"


@pytest.mark.parametrize(
    "pair", [(GOOD, GOOD), (None, None), (None, GOOD), (GOOD, "sha256:" + "f" * 64)]
)
def test_a_reader_keeps_identities_on_hook_records(pair: tuple[str | None, str | None]) -> None:
    line = _hook_line(input_identity=pair[0], enforced_identity=pair[1])
    (record,) = hw.Trace.from_jsonl(line).records()
    assert (record["input_identity"], record["enforced_identity"]) == pair


def test_a_spec_sets_the_scheme_and_names_a_bad_one(tmp_path: Path) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("identity: jcs-sha256\nmiddleware: []\n")
    assert hw.load(spec).bus.identity == "jcs-sha256"
    spec.write_text("middleware: []\nidentity: sha1\n")
    with pytest.raises(hw.SpecError) as caught:
        hw.load(spec)
    (problem,) = caught.value.problems
    assert (problem.kind, problem.rule, problem.line) == ("invalid_identity", "I27", 2)
    assert "'sha1'" in problem.message


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([LIMIT, LIMIT + 1, -LIMIT, -LIMIT - 1, 0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=8),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=4), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@needs_compiled_core
@settings(max_examples=2000, deadline=None)
@given(_JSON)
def test_both_cores_give_every_value_the_same_identity(value: Any) -> None:
    from harnessweaver import _core, _pycore

    assert _core.content_identity(value) == _pycore.content_identity(value)
