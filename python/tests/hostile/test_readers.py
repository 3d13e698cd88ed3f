"""Hostile nesting through every reader of the package (issue 28): arrays and objects nested
around and far past each reader's limit, inside otherwise valid trace lines, journal lines and
hook-command documents. Each reader answers with its one documented outcome, the same on both
cores, and never a ``RecursionError``:

- ``Trace.from_jsonl``: a record nests 2 deep, so any deeper line is ``invalid_trace`` (I32);
- ``read_journal``, ``recover`` and a writer appending to the journal: a complete line that
  does not decode is ``invalid_journal`` naming its number (docs/agent.md, "Crashes"); a torn
  last line, without its newline, is ignored;
- the hook command (``main`` with stdin), every agent: a document nesting deeper than
  ``MAX_DEPTH`` is refused with the one line naming the limit, in the agent's terms; within it
  the nesting changes nothing (the answer is the one without it).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hostile_support import hostile_settings
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.agent.journal import JournalWriter
from harnessweaver.hookcmd import limits
from harnessweaver.hookcmd.agents import AGENTS
from harnessweaver.hookcmd.command import HookOptions, _fail, main

TESTS = Path(__file__).resolve().parents[1]
EVENTS = TESTS / "hookcmd" / "events"
SCRIPTED = TESTS / "hookcmd" / "support" / "scripted.yaml"
PRE_TOOL = {
    "claude-code": "PreToolUse",
    "codex": "PreToolUse",
    "gemini": "BeforeTool",
    "copilot": "PreToolUse",
    "cursor": "preToolUse",
    "vscode": "PreToolUse",
}
HOOK_RECORD = '{"emit":1,"hook":"task.start","kind":"hook","outcome":"continue","modified":false'
OUTCOME_RECORD = (
    '{"emit":1,"hook":"tool.before","kind":"outcome","middleware":"m","band":"app",'
    '"outcome":"continue","modified":false'
)

# Depths around each limit (TypeScript's 64, serde_json's and the hook command's 128, pydantic's
# about 254, Python's parser's about 1,000) and far past them.
depths = st.one_of(
    st.integers(min_value=1, max_value=300),
    st.sampled_from([63, 64, 65, 126, 127, 128, 129, 254, 255, 999, 1000, 1001, 5000, 200_000]),
)
# Which levels are arrays and which objects: a pattern repeated to the depth.
shapes = st.lists(st.booleans(), min_size=1, max_size=8)


def nested(depth: int, shape: list[bool], inner: str = "1") -> str:
    """``depth`` arrays and objects, each level chosen by ``shape`` (repeated), around
    ``inner``; written as text (``json.dumps`` would recurse)."""
    levels = list(itertools.islice(itertools.cycle(shape), depth))
    opens = "".join('{"a":' if level else "[" for level in levels)
    closes = "".join("}" if level else "]" for level in reversed(levels))
    return opens + inner + closes


# --- Trace.from_jsonl ---------------------------------------------------------------------------


@hostile_settings
@given(
    depth=depths,
    shape=shapes,
    where=st.sampled_from(["line", "warnings", "warning", "tool", "emit", "unknown"]),
    before=st.integers(min_value=0, max_value=3),
)
def test_a_trace_line_nested_past_a_record_is_invalid_trace(
    depth: int, shape: list[bool], where: str, before: int
) -> None:
    value = nested(depth, shape)
    line = {
        "line": value,
        "warnings": f'{OUTCOME_RECORD},"warnings":{value}}}',  # a list or an object: 2 deep
        "warning": f'{OUTCOME_RECORD},"warnings":["w",{value}]}}',  # an item: 3 deep
        "tool": f'{HOOK_RECORD},"tool":{value}}}',
        "emit": f'{{"emit":{value},"hook":"task.start"}}',
        "unknown": f'{HOOK_RECORD},"x":{value}}}',
    }[where]
    valid = "".join(HOOK_RECORD.replace('"emit":1', f'"emit":{n}') + "}\n" for n in range(1, 5))
    text = "".join(valid.splitlines(keepends=True)[:before]) + line + "\n"
    with pytest.raises(hw.TraceFormatError) as caught:
        hw.Trace.from_jsonl(text)
    assert (caught.value.kind, caught.value.rule) == ("invalid_trace", "I8")
    assert f"invalid trace line {before + 1}: " in str(caught.value)


# --- the journal --------------------------------------------------------------------------------

_JOURNAL: list[str] = []


def journal_lines() -> list[str]:
    """The lines of a real run's journal (a start, a step, an end), made once."""
    if not _JOURNAL:
        sys.path.insert(0, str(TESTS / "agent"))
        try:
            from agent_support import harness
        finally:
            sys.path.remove(str(TESTS / "agent"))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "run.jsonl"
            anyio.run(harness(script=["done"], journal=path).run, "go")
            _JOURNAL.extend(path.read_text(encoding="utf-8").splitlines(keepends=True))
    return _JOURNAL


@hostile_settings
@given(
    depth=depths,
    shape=shapes,
    form=st.sampled_from(["bare", "format 1", "format 2"]),
    at=st.integers(min_value=0, max_value=3),
)
def test_a_journal_line_nested_however_deep_is_invalid_journal(
    depth: int, shape: list[bool], form: str, at: int
) -> None:
    lines = journal_lines()
    value = nested(depth, shape)
    hostile = {
        "bare": value,
        "format 1": f'{{"kind":{value}}}',
        "format 2": f'{{"v":2,"kind":{value}}}',
    }
    at = min(at, len(lines))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        path.write_text("".join([*lines[:at], hostile[form] + "\n", *lines[at:]]), "utf-8")
        for read in (hw.read_journal, hw.recover, lambda p: JournalWriter(p, append=True)):
            with pytest.raises(hw.JournalError) as caught:
                read(path)
            assert caught.value.kind == "invalid_journal"
            assert f"line {at + 1} is not a journal line" in str(caught.value)
        # The same line without its newline, last: a torn line, ignored.
        path.write_text("".join([*lines[:at], hostile[form]]), "utf-8")
        assert len(hw.read_journal(path)) == at


# --- the hook command ---------------------------------------------------------------------------

_BASELINE: dict[str, tuple[int, str, str]] = {}


def _document(agent: str, nesting: str | None) -> bytes:
    doc: dict[str, Any] = json.loads((EVENTS / agent / f"{PRE_TOOL[agent]}.json").read_text())
    doc["session_id"] = "hostile"
    text = json.dumps(doc)
    if nesting is None:
        return text.encode()
    # Inside the tool's input, where it becomes the call's arguments (pydantic reads them).
    return text.replace('"tool_input": {', f'"tool_input": {{"x_nested": {nesting}, ', 1).encode()


def _answer(agent: str, raw: bytes) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as folder:
        options = HookOptions(agent=agent, spec=SCRIPTED, state=Path(folder) / "s.db")
        out, err = io.StringIO(), io.StringIO()
        code = main(options, io.BytesIO(raw), out, err)
    return code, out.getvalue(), err.getvalue()


@hostile_settings
@given(agent=st.sampled_from(sorted(AGENTS)), depth=depths, shape=shapes)
def test_a_hook_document_nested_past_the_limit_is_refused_naming_it(
    agent: str, depth: int, shape: list[bool]
) -> None:
    assert set(PRE_TOOL) == set(AGENTS)  # every agent is fuzzed
    raw = _document(agent, nested(depth, shape))
    answer = _answer(agent, raw)
    assert "Traceback" not in answer[2] and "a bug" not in answer[2]
    if depth + 2 > limits.MAX_DEPTH:  # the document, then tool_input, then the nesting
        line = (
            "harnessweaver hook: refused: the event document nests arrays and objects more than "
            f"{limits.MAX_DEPTH} deep, the limit"
        )
        reply = _fail(AGENTS[agent], line)
        out = "" if reply.stdout is None else json.dumps(reply.stdout, ensure_ascii=False) + "\n"
        assert answer == (reply.exit_code, out, f"{line} (failing closed)\n")
        return
    if agent not in _BASELINE:
        _BASELINE[agent] = _answer(agent, _document(agent, None))
    assert answer == _BASELINE[agent]


# JSON an agent sends inside a string (the byte scan counts it as text): parsed by the agent's
# adapter, held to the same limit.
IN_A_STRING = {"copilot": ("PreToolUse", "tool_input"), "cursor": ("postToolUse", "tool_output")}


@hostile_settings
@given(agent=st.sampled_from(sorted(IN_A_STRING)), depth=depths, shape=shapes)
def test_json_in_a_string_nested_past_the_limit_is_refused_naming_it(
    agent: str, depth: int, shape: list[bool]
) -> None:
    name, key = IN_A_STRING[agent]
    doc: dict[str, Any] = json.loads((EVENTS / agent / f"{name}.json").read_text())
    doc[key] = nested(depth, shape, '"x"')
    answer = _answer(agent, json.dumps(doc).encode())
    assert "Traceback" not in answer[2] and "a bug" not in answer[2]
    assert "ValidationError" not in answer[2]
    refused = "refused: the event document nests arrays and objects more than 128 deep"
    assert (refused in answer[2]) == (depth > limits.MAX_DEPTH)


@hostile_settings
@given(agent=st.sampled_from(sorted(AGENTS)), short=st.integers(min_value=1, max_value=200))
def test_a_hook_document_past_the_size_limit_is_refused_naming_it(agent: str, short: int) -> None:
    raw = _document(agent, nested(100, [True, False]))
    limit = len(raw) - short  # the document is ``short`` bytes too long
    saved = os.environ.get(limits.MAX_INPUT_ENV)
    os.environ[limits.MAX_INPUT_ENV] = str(limit)
    try:
        answer = _answer(agent, raw)
    finally:
        if saved is None:
            del os.environ[limits.MAX_INPUT_ENV]
        else:
            os.environ[limits.MAX_INPUT_ENV] = saved
    line = (
        f"harnessweaver hook: refused: the event document is larger than {limit} bytes, the "
        f"limit ({limits.MAX_INPUT_ENV}; default {limits.MAX_INPUT})"
    )
    reply = _fail(AGENTS[agent], line)
    out = "" if reply.stdout is None else json.dumps(reply.stdout, ensure_ascii=False) + "\n"
    assert answer == (reply.exit_code, out, f"{line} (failing closed)\n")
