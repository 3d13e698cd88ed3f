"""The scope index: a request is decided by the policies whose scope may match it, and the
answer is the whole set's (a policy whose scope does not match can neither determine nor
error). Checked on random policies and requests against Cedar on the whole set."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.policies.cedar import CedarPolicySet, Evaluation, PolicySource
from harnessweaver.policies.request import cedar_request
from harnessweaver.policies.statements import read_head, split_statements

pytest.importorskip("cedarpy")

TOOLS = ("a", "b", "c")
HOOKS = ("tool.before", "tool.after")

principals = st.sampled_from(
    ["principal", 'principal == User::"u"', "principal is Agent", 'principal in User::"u"']
)
actions = st.sampled_from(
    [
        "action",
        'action == Action::"tool.before"',
        'action == Action::"tool.after"',
        'action in [Action::"tool.after", Action::"tool.before"]',
        'action == Action::"model.before"',
    ]
)
resources = st.sampled_from(
    ["resource", *(f'resource == Tool::"{t}"' for t in TOOLS), "resource is Tool"]
)
conditions = st.sampled_from(
    [
        "",
        " when { context.arguments.n > 2 }",
        " unless { context.arguments.n == 1 }",
        " when { context.arguments.missing == 1 }",  # errors when the argument is absent
        ' when { context.hook == "tool.after" && context.is_error }',
    ]
)
notes = st.sampled_from(["", '@requireApproval("ops") ', "@escalate "])
heads = st.tuples(notes, st.sampled_from(["permit", "forbid"]), principals)
scopes = st.tuples(actions, resources, conditions)
policy = st.tuples(heads, scopes).map(
    lambda p: f"{p[0][0]}{p[0][1]}({p[0][2]}, {p[1][0]}, {p[1][1]}){p[1][2]};"
)

requests = st.tuples(
    st.sampled_from(HOOKS),
    st.sampled_from((*TOOLS, "d")),
    st.sampled_from([{}, {"user": "u"}, {"agent": "x"}]),
    st.sampled_from([{}, {"n": 1}, {"n": 5}]),
)


def event(hook: str, tool: str, arguments: dict[str, Any]) -> Any:
    spec, toolcall = hw.ToolSpec(name=tool), hw.ToolCall(name=tool, arguments=arguments)
    if hook == "tool.before":
        return hw.ToolCallEvent(tool=spec, call=toolcall)
    return hw.ToolResultEvent(tool=spec, call=toolcall, result=hw.ToolResult(is_error=True))


def seen(answer: Evaluation) -> tuple[Any, ...]:
    return (
        answer.allowed,
        sorted(p.shown for p in answer.determining),
        sorted(p.shown for p in answer.errors),
        answer.errored,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(policy, min_size=1, max_size=12), st.lists(requests, min_size=1, max_size=6))
def test_a_slice_answers_as_the_whole_set(texts: list[str], asked: list[Any]) -> None:
    compiled = CedarPolicySet.compile([PolicySource("p.cedar", "\n".join(texts))])
    for hook, tool, attributes, arguments in asked:
        request = cedar_request(hook, event(hook, tool, arguments), attributes, None)
        assert seen(compiled.evaluate(request)) == seen(compiled.evaluate(request, sliced=False))


@given(st.lists(policy, min_size=1, max_size=6))
def test_the_head_reader_agrees_with_the_engine(texts: list[str]) -> None:
    import json

    import cedarpy

    for text in texts:
        head = read_head(text)
        est = json.loads(cedarpy.policies_to_json_str(text))["staticPolicies"]["policy0"]
        assert head.annotations == est.get("annotations", {})
        for key, found in (("action", head.action), ("resource", head.resource)):
            scope = est[key]
            expected = (
                (scope["entity"]["type"], scope["entity"]["id"]) if scope["op"] == "==" else None
            )
            assert found == expected


def test_a_policy_split_between_files_is_read_from_the_engine() -> None:
    sources = [
        PolicySource("a.cedar", '@id("half") permit(principal,'),
        PolicySource(
            "b.cedar",
            'action, resource == Tool::"a");\nforbid(principal, action, resource == Tool::"b");',
        ),
    ]
    compiled = CedarPolicySet.compile(sources)
    assert compiled.ids == ("half", "policy1")
    allowed = compiled.decide("tool.before", event("tool.before", "a", {}), {})
    denied = compiled.decide("tool.before", event("tool.before", "b", {}), {})
    assert allowed == hw.Continue()
    assert denied == hw.Block(reason="forbidden by Cedar policy policy1", code="cedar:policy1")


def test_escapes_in_annotations_and_scopes_are_read_by_the_engine() -> None:
    text = '@id("a\\"b") permit(principal, action, resource == Tool::"x\\ty");'
    compiled = CedarPolicySet.compile([PolicySource("p", text)])
    assert compiled.ids == ('a"b',)
    assert compiled.decide("tool.before", event("tool.before", "x\ty", {}), {}) == hw.Continue()
    assert compiled.decide("tool.before", event("tool.before", "x", {}), {}).kind == "block"


def test_slices_are_bounded() -> None:
    from harnessweaver.policies.cedar import CACHED_SLICES

    compiled = CedarPolicySet.compile(
        [PolicySource("p", 'permit(principal, action, resource == Tool::"a");')]
    )
    for i in range(CACHED_SLICES + 10):
        compiled.decide("tool.before", event("tool.before", f"t{i}", {}), {})
    assert len(compiled._slices._cache) == CACHED_SLICES


def test_statements_end_at_semicolons_outside_strings_and_comments() -> None:
    text = (
        "permit(principal, action, resource);\n\n"
        '// "a; b"\n@id("x;y")\nforbid(principal, action, resource)\n'
        ' when { "q;\\"" == "" };\n// tail\n'
    )
    found = split_statements(text)
    assert [s.line for s in found] == [1, 4]
    assert found[1].text.strip().startswith('// "a; b"')
    assert len(found) == 2
