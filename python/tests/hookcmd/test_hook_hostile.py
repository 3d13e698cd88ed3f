"""Documents and answers that once escaped the fail-closed path: a lone surrogate or a NaN
echoed by a rewrite, a stdout that fails, a middleware that exits, nesting the parsers cannot
take, stdin without an end. Each ends in exit status 2 and one line on stderr, in-process, as a
real process and through the warm helper: never a traceback, never exit 1 (which every agent
reads as "go on")."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest
from hookcmd_support import SCRIPTED, Ran, command, event, run_process, warm_helper

from harnessweaver import cli
from harnessweaver.hookcmd import limits, warm
from harnessweaver.hookcmd.agents import AGENTS
from harnessweaver.hookcmd.command import HookOptions, _fail, main
from harnessweaver.hookcmd.output import write_answer

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
REDACT = "middleware:\n  - {use: harnessweaver.redact_secrets, id: secrets}\n"

# Written by hand: json.dumps would write the surrogate as its escape, as the agents do.
SURROGATE_DOC = (
    '{"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", '
    '"tool_use_id": "t1", "tool_input": {"command": "echo \\ud800 ' + SECRET + '"}}'
).encode()


def _redact_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "redact.yaml"
    spec.write_text(REDACT)
    return spec


def _in_process(
    agent: str, raw: bytes, spec: Path, state: Path, env: dict[str, str] | None = None
) -> Ran:
    """main() with a stdout like the real one: UTF-8 bytes underneath, strict."""
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    err = io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        code = main(HookOptions(agent=agent, spec=spec, state=state), io.BytesIO(raw), out, err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return Ran(code, buffer.getvalue().decode("utf-8"), err.getvalue())


def _one_refusal(ran: Ran, words: str) -> None:
    assert ran.code == 2, ran
    assert ran.stdout == ""
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith("harnessweaver hook: ")
    assert lines[0].endswith("(failing closed)")
    assert words in lines[0]


# -- a rewrite that echoes a lone surrogate ------------------------------------------------


def test_a_lone_surrogate_in_a_rewrite_fails_closed_in_process(tmp_path: Path) -> None:
    ran = _in_process("claude-code", SURROGATE_DOC, _redact_spec(tmp_path), tmp_path / "s.db")
    _one_refusal(ran, "lone surrogate")
    assert SECRET not in ran.stderr


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_lone_surrogate_in_a_rewrite_fails_closed_in_a_process(
    agent: str, tmp_path: Path
) -> None:
    raw = SURROGATE_DOC
    if agent == "gemini":
        raw = raw.replace(b"PreToolUse", b"BeforeTool")
    env = {"HARNESSWEAVER_HOOK_WARM": "0"}
    ran = run_process(agent, raw, _redact_spec(tmp_path), tmp_path / "s.db", env)
    _one_refusal(ran, "lone surrogate")


def test_a_lone_surrogate_in_a_rewrite_fails_closed_through_the_warm_helper(
    tmp_path: Path,
) -> None:
    with warm_helper() as env:
        ran = run_process(
            "claude-code", SURROGATE_DOC, _redact_spec(tmp_path), tmp_path / "s.db", env
        )
    _one_refusal(ran, "lone surrogate")


def test_the_warm_client_refuses_an_answer_it_cannot_write() -> None:
    """What the helper's child answered is written inside the fail-closed path too."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    code = write_answer(0, '{"updatedInput": {"c": "\ud800"}}\n', "", out, err)
    assert code == 2
    assert "lone surrogate" in err.getvalue()
    assert write_answer(1, "", "", out, io.StringIO()) == 2  # 1 is "go on": never passed on


# -- a NaN the document smuggled in and the rewrite echoed -----------------------------------


def test_a_nan_in_a_rewritten_input_fails_closed(tmp_path: Path) -> None:
    """Python's parser takes ``NaN``; JSON and the agents do not, so an answer holding it would
    be unreadable (read as plain text: the call runs as written)."""
    raw = (
        b'{"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", '
        b'"tool_use_id": "t1", "tool_input": {"command": "rm -r /", "n": NaN}}'
    )
    env = {"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "modify"}
    ran = _in_process("codex", raw, SCRIPTED, tmp_path / "s.db", env)
    _one_refusal(ran, "cannot be written as JSON: ValueError")


# -- stdout that fails, a middleware that exits, a bug at the top ----------------------------


class _ClosedPipe(io.RawIOBase):
    """A stdout whose reader has gone."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_stdout_that_fails_blocks(tmp_path: Path) -> None:
    doc = json.dumps(event("claude-code", "PreToolUse")).encode()
    err = io.StringIO()
    options = HookOptions(agent="claude-code", spec=SCRIPTED, state=tmp_path / "s.db")
    saved = dict(os.environ)
    os.environ.update({"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "block"})
    try:
        stdout = io.TextIOWrapper(io.BufferedWriter(_ClosedPipe()), encoding="utf-8")
        code = main(options, io.BytesIO(doc), stdout, err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _one_refusal(Ran(code, "", err.getvalue()), "could not be written: BrokenPipeError")


def test_a_middleware_that_exits_blocks(tmp_path: Path) -> None:
    doc = json.dumps(event("claude-code", "PreToolUse")).encode()
    env = {"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "exit"}
    ran = _in_process("claude-code", doc, SCRIPTED, tmp_path / "s.db", env)
    _one_refusal(ran, "SystemExit")
    env["HARNESSWEAVER_HOOK_WARM"] = "0"
    _one_refusal(run_process("claude-code", doc, SCRIPTED, tmp_path / "s.db", env), "SystemExit")


def test_the_command_line_blocks_whatever_escapes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last resort in cli.py: anything the hook command lets out is still exit 2."""

    def broken(options: Any) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(warm, "run", broken)
    code = cli.main(["hook", "--agent", "gemini", "--spec", str(SCRIPTED)])
    captured = capsys.readouterr()
    _one_refusal(Ran(code, captured.out, captured.err), "KeyError (a bug: please report it)")
    assert "a bug'" not in captured.err  # the type, never the message (R9)


# -- nesting -------------------------------------------------------------------------------


def _nested(depth: int) -> bytes:
    """A PreToolUse whose document nests ``depth`` deep (the document itself is 1)."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return (
        '{"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", '
        f'"tool_use_id": "t1", "tool_input": {{"command": "x", "deep": {inner or 0}}}}}'
    ).encode()


@pytest.mark.parametrize("depth", [limits.MAX_DEPTH + 1, 254, 300, 5000, 200_000])
def test_nesting_beyond_the_limit_fails_closed_naming_it(depth: int, tmp_path: Path) -> None:
    raw = _nested(depth)
    ran = _in_process("claude-code", raw, SCRIPTED, tmp_path / "s.db")
    _one_refusal(ran, f"nests arrays and objects more than {limits.MAX_DEPTH} deep, the limit")


def test_nesting_beyond_the_limit_fails_closed_in_a_process(tmp_path: Path) -> None:
    ran = run_process("gemini", _nested(3000).replace(b"PreToolUse", b"BeforeTool"), SCRIPTED,
                      tmp_path / "s.db", {"HARNESSWEAVER_HOOK_WARM": "0"})  # fmt: skip
    _one_refusal(ran, f"more than {limits.MAX_DEPTH} deep, the limit")


PRE_TOOL = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool",
            "copilot": "PreToolUse", "cursor": "preToolUse", "vscode": "PreToolUse"}  # fmt: skip


def test_nesting_beyond_the_limit_is_refused_for_every_agent_through_the_warm_helper(
    tmp_path: Path,
) -> None:
    """Each agent's PreToolUse with its tool input nested past the limit: the one refusal
    line, in the agent's terms (Copilot CLI: exit 0 and a deny), cold and warm."""
    assert set(PRE_TOOL) == set(AGENTS)
    line = (
        "harnessweaver hook: refused: the event document nests arrays and objects more than "
        f"{limits.MAX_DEPTH} deep, the limit"
    )
    with warm_helper() as env:
        for agent, name in PRE_TOOL.items():
            doc = event(agent, name)
            doc["tool_input"] = {"deep": 0}
            raw = json.dumps(doc).replace('"deep": 0', '"deep": ' + "[" * 5000 + "]" * 5000)
            reply = _fail(AGENTS[agent], line)
            out = "" if reply.stdout is None else json.dumps(reply.stdout) + "\n"
            for warmth in ({"HARNESSWEAVER_HOOK_WARM": "0"}, env):
                ran = run_process(agent, raw.encode(), SCRIPTED, tmp_path / "s.db", warmth)
                assert ran == Ran(reply.exit_code, out, f"{line} (failing closed)\n"), agent


@pytest.mark.parametrize("depth", [limits.MAX_DEPTH + 1, 300, 100_000])
@pytest.mark.parametrize(
    ("agent", "name", "key"),
    [("copilot", "PreToolUse", "tool_input"), ("cursor", "postToolUse", "tool_output")],
)
def test_json_in_a_string_nested_beyond_the_limit_is_refused_naming_it(
    agent: str, name: str, key: str, depth: int, tmp_path: Path
) -> None:
    """The agent's JSON-in-a-string field, parsed by its adapter: it gave a ValidationError
    (300) or 'RecursionError (a bug)' (100,000), as the issue said of the whole document."""
    doc = event(agent, name)
    doc[key] = "[" * depth + "]" * depth
    ran = _in_process(agent, json.dumps(doc).encode(), SCRIPTED, tmp_path / "s.db")
    line = (
        "harnessweaver hook: refused: the event document nests arrays and objects more than "
        f"{limits.MAX_DEPTH} deep, the limit"
    )
    reply = _fail(AGENTS[agent], line)
    out = "" if reply.stdout is None else json.dumps(reply.stdout) + "\n"
    assert ran == Ran(reply.exit_code, out, f"{line} (failing closed)\n")


def test_nesting_up_to_the_limit_is_answered(tmp_path: Path) -> None:
    ran = _in_process("claude-code", _nested(limits.MAX_DEPTH), SCRIPTED, tmp_path / "s.db")
    assert (ran.code, ran.stderr) == (0, "")


def test_brackets_in_strings_do_not_nest() -> None:
    text = json.dumps({"a": "[" * 1000 + '\\"{' * 1000, "b": [[1]]}).encode()
    limits.check_depth(text)  # no error: the brackets are text
    with pytest.raises(limits.LimitError, match="more than 128 deep"):
        limits.check_depth(b'{"s": "]]]]", "x": ' + b"[" * 128 + b"]" * 128 + b"}")
    limits.check_depth(b'{"s": "\\\\", "t": "\\"[[[", "x": ' + b"[" * 127 + b"]" * 127 + b"}")


# -- the size of stdin -----------------------------------------------------------------------


class _Counting(io.RawIOBase):
    """A stdin of 5 MB that counts what was read from it."""

    def __init__(self) -> None:
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), 4096, 5_000_000 - self.taken)
        buffer[:size] = b"a" * size
        self.taken += size
        return size


def test_stdin_beyond_the_limit_is_refused_without_reading_on(tmp_path: Path) -> None:
    source = _Counting()
    stdin: IO[bytes] = io.BufferedReader(source, buffer_size=1024)
    err = io.StringIO()
    options = HookOptions(agent="codex", spec=SCRIPTED, state=tmp_path / "s.db")
    saved = dict(os.environ)
    os.environ[limits.MAX_INPUT_ENV] = "10000"
    try:
        code = main(options, stdin, io.StringIO(), err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _one_refusal(Ran(code, "", err.getvalue()), "larger than 10000 bytes")
    assert limits.MAX_INPUT_ENV in err.getvalue()
    assert source.taken <= 10001 + 4096  # what one more read of the buffer may take


def test_twenty_megabytes_are_refused_and_not_echoed(tmp_path: Path) -> None:
    raw = b'{"hook_event_name": "PreToolUse", "tool_input": {"c": "' + b"x" * 20_000_000 + b'"}}'
    ran = run_process(
        "claude-code", raw, SCRIPTED, tmp_path / "s.db", {"HARNESSWEAVER_HOOK_WARM": "0"}
    )
    _one_refusal(ran, f"larger than {limits.MAX_INPUT} bytes")
    assert len(ran.stderr) < 300


def test_a_large_write_within_the_limit_is_answered(tmp_path: Path) -> None:
    doc = event("claude-code", "PreToolUse", tool_name="Write")
    doc["tool_input"] = {"file_path": "/tmp/big.txt", "content": "y" * 5_000_000}
    ran = run_process("claude-code", json.dumps(doc).encode(), SCRIPTED, tmp_path / "s.db",
                      {"HARNESSWEAVER_HOOK_WARM": "0"})  # fmt: skip
    assert (ran.code, ran.stderr) == (0, "")


def test_the_limit_applies_through_the_warm_helper(tmp_path: Path) -> None:
    raw = json.dumps(event("claude-code", "PreToolUse")).encode()
    with warm_helper() as env:
        small = {**env, limits.MAX_INPUT_ENV: "50"}
        ran = run_process("claude-code", raw, SCRIPTED, tmp_path / "s.db", small)
        _one_refusal(ran, "larger than 50 bytes")
        ran = run_process("claude-code", raw, SCRIPTED, tmp_path / "s.db", env)
        assert (ran.code, ran.stderr) == (0, "")


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1e6", "2000000000", "١٢"])
def test_a_bad_limit_fails_closed_naming_the_variable(value: str, tmp_path: Path) -> None:
    raw = json.dumps(event("gemini", "BeforeTool")).encode()
    for warmth in ("0", "1"):
        env = {limits.MAX_INPUT_ENV: value, "HARNESSWEAVER_HOOK_WARM": warmth}
        ran = run_process("gemini", raw, SCRIPTED, tmp_path / "s.db", env)
        _one_refusal(ran, limits.MAX_INPUT_ENV)


def test_a_process_never_exits_1_on_a_closed_stdout(tmp_path: Path) -> None:
    """The agent gave up and closed the pipe: whatever happens, the status is not 'go on'."""
    doc = json.dumps(event("claude-code", "PreToolUse")).encode()
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            command("claude-code", SCRIPTED, tmp_path / "s.db"),
            input=doc,
            stdout=write,
            stderr=subprocess.PIPE,
            env={
                **os.environ,
                "HARNESSWEAVER_HOOK_WARM": "0",
                "HW_TEST_HOOK": "tool.before",
                "HW_TEST_OUTCOME": "block",
            },
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert done.returncode == 2, done
    assert b"Traceback" not in done.stderr
