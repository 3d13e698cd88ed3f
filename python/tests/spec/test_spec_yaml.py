"""The line-tracking YAML loader, and rendering details."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_support import plugged, write

import harnessweaver as hw
from harnessweaver.spec.render import render, timeout_text
from harnessweaver.spec.yaml import YamlList, YamlMap, YamlProblem, line_of, parse_yaml, plain


def test_mappings_and_lists_know_their_lines() -> None:
    doc = parse_yaml("a: 1\nitems:\n  - {x: 1}\n  - y: 2\n    z: 3\n")
    assert isinstance(doc, YamlMap) and isinstance(doc["items"], YamlList)
    assert (doc.line, line_of(doc, "items"), line_of(doc["items"], 1)) == (1, 2, 4)
    assert line_of(doc["items"][1], "z") == 5 and line_of(doc["items"][0]) == 3
    assert plain(doc) == {"a": 1, "items": [{"x": 1}, {"y": 2, "z": 3}]}
    assert type(plain(doc)["items"]) is list


def test_merge_keys_are_not_duplicates() -> None:
    assert plain(parse_yaml("b: &a {x: 1}\nc: {<<: *a, x: 2}\n")) == {"b": {"x": 1}, "c": {"x": 2}}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: 1\na: 2\n", 2, "the key 'a' is written twice"),
        ("a: b: c\n", 1, "mapping values are not allowed here"),
        ("x: *nope\n", 1, "found undefined alias 'nope'"),
        ("? [a]\n: 1\n", 1, "a key must be a plain value"),
    ],
)
def test_problems_carry_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        parse_yaml(text)
    assert (caught.value.line, caught.value.message) == (line, message)


@pytest.mark.parametrize(
    ("seconds", "text"), [(None, "-"), (0.25, "250ms"), (2.0, "2s"), (1.5, "1.5s"), (60.0, "60s")]
)
def test_timeouts_read_as_written(seconds: float | None, text: str) -> None:
    assert timeout_text(seconds) == text


def test_chains_show_middleware_registered_by_code(tmp_path: Path) -> None:
    harness = hw.load(str(write(tmp_path, plugged("middleware: [{use: acme.guard}]\n"))))
    import spec_support

    harness.bus.register(spec_support.watcher, name="late")
    late = harness.chains()["tool.before"][1]
    assert (late.name, late.use, late.source, late.layer) == ("late", None, None, None)
    assert "  2  late        -           app   open       -        (code)  -\n" in render(harness)
    with pytest.raises(ValueError, match="unknown format 'html'"):
        render(harness, "html")
