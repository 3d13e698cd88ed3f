"""Generated hostile specs: whatever a file holds, ``hw.load`` returns a harness or raises
:class:`hw.SpecError` (never another exception, never a hang), every problem is one line that
names the file and a rule, and ``harnessweaver hooks`` exits 0 or 2 without a traceback.

Sizes are bounded so one example stays small; the limits themselves are tested, past their
edge, in ``test_spec_hostile.py``. ``HARNESSWEAVER_SPEC_FUZZ_EXAMPLES`` sets how many specs
the first property tries (default 300), for a longer run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.cli import EXIT_ERROR, EXIT_OK, main
from harnessweaver.spec.errors import RULES

ODD_SCALARS = [
    "~", "null", "yes", "no", "on", ".nan", "-.inf", "1e400", "0x1F", "0o17", "9" * 60,
    "-0", "2001-12-14t21:59:43.10-05:00", "2002-12-14", "!!binary aGVsbG8=", "!!str 1",
    "!!int '1'", "!!float x", "!!set {a, b}", "!!omap [a: 1, b: 2]", "!!pairs [a: 1]",
    "!!python/object:os.system x", "!!python/name:os.system ''", "!custom x", "!!map {}",
    "'\\u0000'", '"a\\nb"', '"\\x00\\uFEFF\\U0001F600"', "'\ufeff'", "<<", "=", "'a\nb'",
    "|\n  x\n",
    "*undefined", "&a b", "? [a]\n: 1", "'" + "x" * 5000 + "'", "[a, [b, [c]]]", "{a: {b: c}}",
    "harnessweaver.tool_allowlist", "acme.guard", "closed", "open", "baseline", "task", "2s",
    "0", "-1", "1.5", "true", "false", "[]", "{}", "[tool.before]", "[nope]",
    "audit", "enforce",  # I25
]  # fmt: skip
KEYS = [
    "use", "id", "band", "hooks", "fail_mode", "timeout", "enabled", "allow", "limit",
    "patterns", "middleware", "profiles", "envs", "tasks", "contracts", "guardrails",
    "validation", "rules", "tool.before", "profile", "<<", "1", "null", "[a]", "? x",
    "mode",  # I25
]  # fmt: skip


def _indent(text: str, by: int) -> str:
    return text.replace("\n", "\n" + " " * by)


@st.composite
def hostile_value(draw: st.DrawFn) -> str:
    """YAML text for one value, on one line or indented lines of its own."""
    choice = draw(st.sampled_from([0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7]))  # mostly odd scalars
    if choice == 0:
        return draw(st.sampled_from(ODD_SCALARS))
    if choice == 1:  # nesting, deep or not
        depth = draw(st.integers(1, 200))
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ("[{a: ", "}]")]))
        return opener * depth + "x" + closer * depth
    if choice == 2:  # aliases of aliases, maybe past the limit
        levels, width = draw(st.integers(1, 8)), draw(st.integers(1, 12))
        text = "[&b0 [x, y]"
        for level in range(1, levels):
            text += f", &b{level} [" + ", ".join([f"*b{level - 1}"] * width) + "]"
        return text + "]"
    if choice == 3:  # an alias inside what it names
        return draw(st.sampled_from(["&r [*r]", "&r {a: *r}", "&r {<<: *r}", "&r [[*r]]"]))
    if choice == 4:  # a huge scalar
        return draw(st.sampled_from(["x", "'y", '"z', "- "])) * draw(st.integers(1, 20_000))
    if choice == 5:  # a key written twice, merge keys
        key = draw(st.sampled_from(KEYS))
        return draw(st.sampled_from([f"{{{key}: 1, {key}: 2}}", f"{{<<: {{{key}: 1}}, x: 2}}"]))
    if choice == 6:
        items = draw(st.lists(hostile_value(), max_size=3))
        return "[" + ", ".join(item.replace("\n", " ") for item in items) + "]"
    return draw(st.text(st.characters(exclude_categories=["Cc", "Cs"]), max_size=40))


@st.composite
def hostile_item(draw: st.DrawFn) -> str:
    keys = draw(st.lists(st.sampled_from(KEYS), max_size=5))
    use = draw(st.sampled_from(["harnessweaver.tool_allowlist", "harnessweaver.max_messages"]))
    lines = [f"- use: {use}"] if draw(st.booleans()) else ["- x: 1"]
    for key in keys:
        lines.append(f"  {key}: {_indent(draw(hostile_value()), 4)}")
    return "\n".join(lines)


@st.composite
def hostile_spec(draw: st.DrawFn) -> bytes:
    """A whole file: spec-shaped text with hostile values, or junk; perhaps a BOM first."""
    shape = draw(st.integers(0, 5))
    if shape == 0:
        body = draw(st.binary(max_size=300))
    elif shape == 1:
        body = draw(st.text(max_size=300)).encode("utf-8", "surrogatepass")
    elif shape == 2:
        body = draw(hostile_value()).encode("utf-8", "surrogatepass")
    else:
        items = "\n".join(draw(st.lists(hostile_item(), min_size=1, max_size=4)))
        where, indent = draw(st.sampled_from(PLACES))
        extra = draw(st.sampled_from(KEYS))
        tail = f"\n{extra}: {_indent(draw(hostile_value()), 2)}\n"
        text = where + " " * indent + _indent(items, indent) + tail
        body = text.encode("utf-8", "surrogatepass")
    return draw(st.sampled_from(BOMS)) + body


PLACES = [
    ("middleware:\n", 2),
    ("envs:\n  e:\n    middleware:\n", 6),
    ("tasks:\n  t:\n    guardrails:\n      tool.before:\n", 8),
    ("tasks:\n  t:\n    validation:\n      rules:\n", 8),
]
"""Where the generated items go: the app's middleware, an env overlay, a task."""
BOMS = [b""] * 6 + [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff\x00"]


def check_problems(error: hw.SpecError) -> None:
    assert error.problems
    for problem in error.problems:
        line = str(problem)
        assert "\n" not in line and "\r" not in line, line
        assert problem.file and problem.rule and line.startswith(problem.file)
        assert problem.kind in RULES or problem.rule not in set(RULES.values())


EXAMPLES = int(os.environ.get("HARNESSWEAVER_SPEC_FUZZ_EXAMPLES", "300"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_spec())
def test_a_hostile_spec_loads_or_is_a_spec_error(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "harness.yaml"
        spec.write_bytes(content)
        for options in ({}, {"task": "t", "env": "e"}):
            try:
                harness = hw.load(spec, org_profiles=[], **options)  # type: ignore[arg-type]
            except hw.SpecError as error:
                check_problems(error)
            else:
                assert isinstance(harness, hw.Harness)


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_spec())
def test_hooks_exits_0_or_2_on_a_hostile_spec(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "harness.yaml"
        spec.write_bytes(content)
        with pytest.MonkeyPatch.context() as patch:
            errors: list[str] = []
            patch.setattr("sys.stderr", _Lines(errors))
            patch.setattr("sys.stdout", _Lines([]))
            status = main(["hooks", str(spec)])
        assert status in (EXIT_OK, EXIT_ERROR)
        text = "".join(errors)
        assert (status == EXIT_ERROR) == bool(text)
        assert "Traceback" not in text and "a bug in harnessweaver" not in text


class _Lines:
    """A stand-in for stdout or stderr that keeps what is written."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def write(self, text: str) -> int:
        self.into.append(text)
        return len(text)

    def flush(self) -> None:
        return None
