"""The protocols as the real agents showed them (issue 27): documents recorded from Claude
Code 2.1.332, Codex CLI 0.169.1 and Gemini CLI 0.61.0 (``events/<agent>/real/``), and what
their answers did there.

- a rewritten tool call takes effect where the user's permission settings let it run
  (``--rewrite settings|allow|ask``);
- events the table does not map are answered neutrally;
- Codex's ``SessionEnd`` ends the session;
- a failed command is a failure in Codex (its transcript) and Gemini (``Exit Code``);
- the model's free-text ``description`` of a shell call is not part of what the loop guard
  fingerprints, and is given back in a rewrite.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hookcmd_support import EVENTS, GUARDS, SCRIPTED, Ran, command, event, run_process

from harnessweaver.cli import main as cli_main
from harnessweaver.hookcmd.command import HookOptions, main
from harnessweaver.hookcmd.failure import failed
from harnessweaver.hookcmd.protocol import Request

REWROTE = "harnessweaver rewrote this tool call's input"
HOOK = [sys.executable, "-m", "harnessweaver.cli", "hook"]
WRAPPED = (
    "<untrusted_context>\nOutput: x\nExit Code: 2\nProcess Group PGID: 7\n</untrusted_context>"
)


def real(agent: str, name: str, session: str = "s-real", **changes: Any) -> dict[str, Any]:
    """A document the real agent sent (``events/<agent>/real/<name>.json``)."""
    doc: dict[str, Any] = json.loads((EVENTS / agent / "real" / f"{name}.json").read_text())
    return {**doc, "session_id": session, **changes}


def ask_hook(
    agent: str,
    doc: dict[str, Any],
    spec: Path,
    state: Path,
    rewrite: str | None = None,
) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    options = HookOptions(agent=agent, spec=spec, state=state)
    if rewrite is not None:
        options = options._replace(rewrite=rewrite)
    code = main(options, io.BytesIO(json.dumps(doc).encode()), out, err)
    return Ran(code, out.getvalue(), err.getvalue())


@pytest.fixture
def modify(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted middleware rewrites the tool call's command to ``echo safe``."""
    monkeypatch.setenv("HW_TEST_HOOK", "tool.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", "modify")


# -- 1. a rewrite takes effect where the user's permission settings let the call run ------

CLAUDE_UPDATED = {"command": "echo safe", "description": "list missing"}


@pytest.mark.usefixtures("modify")
@pytest.mark.parametrize(
    ("rewrite", "specific"),
    [
        (None, {"updatedInput": CLAUDE_UPDATED}),
        ("settings", {"updatedInput": CLAUDE_UPDATED}),
        (
            "allow",
            {
                "permissionDecision": "allow",
                "permissionDecisionReason": REWROTE,
                "updatedInput": CLAUDE_UPDATED,
            },
        ),
        (
            "ask",
            {
                "permissionDecision": "ask",
                "permissionDecisionReason": REWROTE + "; approve the rewritten call",
                "updatedInput": CLAUDE_UPDATED,
            },
        ),
    ],
)
def test_claude_code_rewrite_as_rewrite_says(
    rewrite: str | None, specific: dict[str, Any], tmp_path: Path
) -> None:
    # claude -p rejects every ask: the default lets Claude's own permission flow judge the
    # rewritten call (updatedInput alone), as it would have judged the model's call
    ran = ask_hook(
        "claude-code", real("claude-code", "PreToolUse"), SCRIPTED, tmp_path / "s", rewrite
    )
    assert (ran.code, ran.stderr) == (0, "")
    assert ran.answer == {"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}}


@pytest.mark.usefixtures("modify")
@pytest.mark.parametrize("rewrite", [None, "settings", "allow"])
def test_codex_applies_a_rewrite_only_with_allow(rewrite: str | None, tmp_path: Path) -> None:
    ran = ask_hook("codex", real("codex", "PreToolUse"), SCRIPTED, tmp_path / "s", rewrite)
    assert ran.answer == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo safe"},
        }
    }


@pytest.mark.usefixtures("modify")
@pytest.mark.parametrize(("agent", "name"), [("codex", "PreToolUse"), ("gemini", "BeforeTool")])
def test_rewrite_ask_refuses_where_the_agent_cannot_ask(
    agent: str, name: str, tmp_path: Path
) -> None:
    ran = ask_hook(agent, real(agent, name), SCRIPTED, tmp_path / "s", "ask")
    assert ran.code == 0
    if agent == "codex":
        specific = ran.answer["hookSpecificOutput"]
        assert specific["permissionDecision"] == "deny"
        reason = specific["permissionDecisionReason"]
    else:
        assert ran.answer["decision"] == "deny"
        reason = ran.answer["reason"]
    assert "--rewrite ask" in reason
    assert "cannot ask here" in reason


@pytest.mark.usefixtures("modify")
def test_gemini_rewrite_gives_the_description_back(tmp_path: Path) -> None:
    ran = ask_hook("gemini", real("gemini", "BeforeTool"), SCRIPTED, tmp_path / "s")
    updated = {"command": "echo safe", "description": "make marker"}
    assert ran.answer == {"hookSpecificOutput": {"tool_input": updated}}


def test_rewrite_reaches_a_real_process_and_the_printed_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"HW_TEST_HOOK": "tool.before", "HW_TEST_OUTCOME": "modify"}
    state = tmp_path / "s"
    done = subprocess.run(
        [*command("claude-code", SCRIPTED, state), "--rewrite", "allow"],
        input=json.dumps(real("claude-code", "PreToolUse")).encode(),
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"
    assert answer["updatedInput"] == CLAUDE_UPDATED
    spec = str(SCRIPTED)
    base = ["hook", "--print-config", "--agent", "claude-code", "--spec", spec]
    assert cli_main([*base, "--rewrite", "ask"]) == 0
    printed = json.loads(capsys.readouterr().out)["hooks"]["PreToolUse"][0]["hooks"][0]
    assert printed["command"].endswith(" --rewrite ask")
    assert cli_main(base) == 0  # the default is not written out
    printed = json.loads(capsys.readouterr().out)["hooks"]["PreToolUse"][0]["hooks"][0]
    assert "--rewrite" not in printed["command"]


def test_rewrite_rejects_other_values() -> None:
    done = subprocess.run(
        [*HOOK, "--agent", "codex", "--spec", str(SCRIPTED), "--rewrite", "always"],
        capture_output=True,
        input=b"{}",
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--rewrite" in done.stderr.decode()


def test_rewrite_travels_to_the_warm_helper() -> None:
    options = HookOptions(agent="claude-code", spec=SCRIPTED, rewrite="ask")
    data = json.loads(json.dumps(options.to_json()))
    assert data["rewrite"] == "ask"
    assert HookOptions.from_json(data).rewrite == "ask"
    assert HookOptions.from_json({**data, "rewrite": None}).rewrite is None
    with pytest.raises(TypeError):
        HookOptions.from_json({**data, "rewrite": "always"})
    with pytest.raises(KeyError):
        HookOptions.from_json({k: v for k, v in data.items() if k != "rewrite"})


# -- 2. events the table does not map: neutral ---------------------------------------------

UNMAPPED = [
    ("claude-code", real("claude-code", "MessageDisplay")),
    ("claude-code", real("claude-code", "PostToolBatch")),
    (  # Codex 0.169's Interrupt (its schema: session_id, turn_id, cwd, ...)
        "codex",
        {
            "session_id": "s",
            "turn_id": "t",
            "cwd": "/home/dev/demo",
            "transcript_path": None,
            "hook_event_name": "Interrupt",
        },
    ),
    ("gemini", {"session_id": "s", "hook_event_name": "SomeLaterEvent", "cwd": "/x"}),
    ("claude-code", {"hook_event_name": "FileChanged"}),  # no session: nothing needs it
]


@pytest.mark.parametrize(("agent", "doc"), UNMAPPED)
def test_an_event_the_table_does_not_map_is_neutral(
    agent: str, doc: dict[str, Any], tmp_path: Path
) -> None:
    spec = tmp_path / "harness.yaml"
    spec.write_text("middleware: 3\n")  # broken, and never read for such an event
    ran = ask_hook(agent, doc, spec, tmp_path / "s")
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    assert not (tmp_path / "s").exists()  # nothing loaded, no state opened


def test_an_unmapped_event_is_neutral_in_a_real_process(tmp_path: Path) -> None:
    ran = run_process("claude-code", real("claude-code", "PostToolBatch"), SCRIPTED, tmp_path / "s")
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"hook_event_name": 3}, "field 'hook_event_name' must be a string"),
        ({"hook_event_name": "PreToolUse", "tool_name": "Bash"}, "field 'session_id'"),
    ],
)
def test_the_event_name_and_a_mapped_events_session_are_still_required(
    doc: dict[str, Any], message: str, tmp_path: Path
) -> None:
    ran = ask_hook("claude-code", doc, SCRIPTED, tmp_path / "s")
    assert (ran.code, ran.stdout) == (2, "")
    assert message in ran.stderr


# -- 3. Codex's SessionEnd ends the session ------------------------------------------------


def test_codex_session_end_reaches_task_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("HW_TEST_RECORD", str(record))
    monkeypatch.delenv("HW_TEST_HOOK", raising=False)
    ran = ask_hook("codex", real("codex", "SessionEnd"), SCRIPTED, tmp_path / "s")
    assert (ran.code, ran.stdout, ran.stderr) == (0, "", "")
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    assert seen == [{"hook": "task.end", "run": "s-real", "step": None}]


# -- 4. a failed command is a failure in Codex and Gemini ----------------------------------


def _codex_transcript(folder: Path, status: str, code: int) -> Path:
    """A Codex transcript's end: the line recording the failed call's end (the shape seen in
    Codex 0.169's rollout files)."""
    call = real("codex", "PostToolUse-failed")
    line = {
        "timestamp": "2026-12-06T02:21:48.430Z",
        "type": "event_msg",
        "payload": {
            "type": "item_completed",
            "thread_id": call["session_id"],
            "turn_id": call["turn_id"],
            "item": {
                "type": "CommandExecution",
                "id": call["tool_use_id"],
                "command": ["/bin/bash", "-lc", call["tool_input"]["command"]],
                "status": status,
                "aggregated_output": call["tool_response"],
                "exit_code": code,
            },
        },
    }
    path = folder / "rollout.jsonl"
    path.write_text('{"type": "session_meta"}\n' + json.dumps(line) + "\n")
    return path


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_tool_failure_guard_sees_a_failed_command(agent: str, tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    if agent == "codex":
        transcript = str(_codex_transcript(tmp_path, "failed", 2))
        after = real(agent, "PostToolUse-failed", "s-f", transcript_path=transcript)
        before = real(agent, "PreToolUse", "s-f")
    else:
        after = real(agent, "AfterTool-failed-shell", "s-f")
        before = real(agent, "BeforeTool", "s-f")
    for _ in range(2):  # max_consecutive: 2
        assert ask_hook(agent, after, GUARDS, state).stdout == ""
    ran = ask_hook(agent, before, GUARDS, state)
    assert "tool_failing" in ran.stdout


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_command_that_succeeded_is_no_failure(agent: str, tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    if agent == "codex":
        transcript = str(_codex_transcript(tmp_path, "completed", 0))
        after = real(agent, "PostToolUse-failed", "s-ok", transcript_path=transcript)
        before = real(agent, "PreToolUse", "s-ok")
    else:
        after = real(agent, "AfterTool", "s-ok")
        before = real(agent, "BeforeTool", "s-ok")
    for _ in range(3):
        assert ask_hook(agent, after, GUARDS, state).stdout == ""
    assert ask_hook(agent, before, GUARDS, state).stdout == ""


def test_codex_without_its_transcript_reads_the_document_alone(tmp_path: Path) -> None:
    doc = real("codex", "PostToolUse-failed", transcript_path=str(tmp_path / "gone.jsonl"))
    assert failed("codex", doc) is False
    other_call = real("codex", "PostToolUse-failed", transcript_path=None)
    assert failed("codex", other_call) is False
    transcript = _codex_transcript(tmp_path, "failed", 2)
    elsewhere = real("codex", "PostToolUse", transcript_path=str(transcript))
    assert failed("codex", elsewhere) is False  # the transcript speaks of another call


@pytest.mark.parametrize(
    ("content", "is_error"),
    [
        (
            WRAPPED,
            True,
        ),
        ("Output: x\nSignal: SIGTERM\nProcess Group PGID: 7", True),
        ("Output: (empty)\nProcess Group PGID: 7", False),
        ("Output: Exit Code: 9\nthe end\nProcess Group PGID: 7", False),  # printed, not status
        ("Stdout: a\nStderr: b\nError: (none)\nExit Code: 0\nSignal: (none)", False),
        ([{"text": "Output: x"}, {"text": "Exit Code: 1"}], True),
        ("", False),
    ],
)
def test_gemini_status_lines(content: Any, is_error: bool) -> None:
    doc = {"tool_response": {"llmContent": content, "returnDisplay": ""}}
    assert failed("gemini", doc) is is_error


def test_an_mcp_result_marked_is_error_is_a_failure() -> None:
    doc = {"tool_response": {"content": [{"type": "text", "text": "no"}], "isError": True}}
    assert all(failed(agent, doc) for agent in ("claude-code", "codex", "gemini"))


# -- 5. Gemini's BeforeModel: the text is all there is ------------------------------------


def test_gemini_before_model_after_a_tool_call_holds_the_text_only() -> None:
    from harnessweaver.hookcmd.translate import build_event

    doc = real("gemini", "BeforeModel-after-tool-call")
    event = build_event(Request("gemini", "BeforeModel", "s", "model.before", doc), 1, None)
    # the model's function call and the tool's response never reach the document
    assert [m.role for m in event.request.messages] == ["user"]
    assert event.request.messages[0].content.endswith("make the marker")


def test_gemini_cannot_drop_a_message_so_the_request_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini merges llm_request.messages by index: a message left out would still be sent
    monkeypatch.setenv("HW_TEST_HOOK", "model.before")
    monkeypatch.setenv("HW_TEST_OUTCOME", "drop-message")
    ran = ask_hook("gemini", event("gemini", "BeforeModel"), SCRIPTED, tmp_path / "s")
    assert ran.answer["decision"] == "deny"
    assert "it removed messages" in ran.answer["reason"]


# -- 6. the loop guard: one command is one call, whatever its description ------------------


@pytest.mark.parametrize(
    ("agent", "name"), [("claude-code", "PreToolUse"), ("gemini", "BeforeTool")]
)
def test_a_repeat_with_another_description_is_a_repeat(
    agent: str, name: str, tmp_path: Path
) -> None:
    state = tmp_path / "st.db"
    command_ = real(agent, name)["tool_input"]["command"]
    answers = [
        ask_hook(
            agent,
            real(agent, name, "s-loop", tool_input={"command": command_, "description": words}),
            GUARDS,
            state,
        )
        for words in ("Show the files", "List the files again", "One more look")
    ]
    assert [ran.code for ran in answers] == [0, 0, 0]
    assert [ran.stdout for ran in answers[:2]] == ["", ""]
    assert "loop_detected" in answers[2].stdout


def test_the_description_is_not_in_the_judged_arguments() -> None:
    from harnessweaver.hookcmd.translate import build_event

    doc = real("claude-code", "PreToolUse")
    event = build_event(Request("claude-code", "PreToolUse", "s", "tool.before", doc), 1, None)
    assert dict(event.call.arguments) == {"command": "cat does-not-exist.txt"}
    codex = real("codex", "PreToolUse", tool_input={"command": "ls", "description": "kept"})
    event = build_event(Request("codex", "PreToolUse", "s", "tool.before", codex), 1, None)
    assert dict(event.call.arguments) == {
        "command": "ls",
        "description": "kept",
    }  # not a shell note
