"""``harnessweaver mcp`` in front of an MCP server, inside the real Claude Code CLI (the pinned
``claude``), run headless with ``claude -p`` against a scripted fake Anthropic Messages API on
127.0.0.1; and, for the Block, inside Gemini CLI (``gemini -p --yolo``, its tools named
``mcp_notes_<tool>``) against the fake Gemini API and Codex CLI (``codex exec``, the tools
in the namespace ``mcp__notes``) against the fake Responses API.

The project's ``.mcp.json`` is exactly what ``harnessweaver mcp --print-config --client
claude-code`` prints for the proxy fronting ``notes_server.py`` (a server of the official SDK
whose tools record each call they run). The project's settings approve that server and allow
its tools (headless, Claude Code runs no MCP tool the user has not allowed), so only the
harness stands between the model and the tool. The model is scripted to call the tool by the
name Claude Code gives it, ``mcp__notes__<tool>``; what it read back is taken from the fake
server's request log, whether the tool ran from the server's record.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _codex import CodexBox
from _gemini import GeminiBox, write_settings
from _gemini import tool_results as gemini_results
from common import AGENTS_DIR, Run, Sandbox, agent_cli, base_env, harnessweaver_command, run_agent
from fakemodel.anthropic import AnthropicHandler, tool_results
from fakemodel.openai_responses import function_outputs
from fakemodel.server import FakeServer, Turn
from test_claude_code import CLAUDE_ENV, result_text

SERVER = "notes"
NOTES_SERVER = AGENTS_DIR / "notes_server.py"


def mcp_tool(tool: str) -> str:
    """The name Claude Code gives the model for ``tool`` of the server ``notes``."""
    return f"mcp__{SERVER}__{tool}"


def recorded(record: Path) -> list[dict[str, Any]]:
    """The calls the notes server ran, as it recorded them (none when it never ran one)."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text("utf-8").splitlines()]


def decisions(trace: Path) -> list[tuple[str, str, str, bool, str | None]]:
    """(hook, tool, outcome, modified, code) of each middleware's outcome in the proxy's
    trace (JSON Lines), in order."""
    if not trace.exists():
        return []
    records = [json.loads(line) for line in trace.read_text("utf-8").splitlines()]
    return [
        (r["hook"], r.get("tool"), r["outcome"], r["modified"], r.get("code"))
        for r in records
        if r.get("kind") == "outcome"
    ]


def leftovers(record: Path, wait: float = 10.0) -> list[str]:
    """The processes still running the notes server that writes ``record`` once ``wait``
    seconds have passed (the agent stops the proxy at its end; the proxy must stop its
    upstream)."""
    needle = str(record).encode()
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if needle in cmdline and b"notes_server.py" in cmdline:
                alive.append(f"{entry.name}: {cmdline.replace(bytes(1), b' ').decode()}")
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def print_mcp_config(
    client: str,
    spec: Path,
    record: Path,
    trace: Path,
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> str:
    """What ``harnessweaver mcp --print-config --client CLIENT --spec SPEC --name notes --trace
    TRACE -- <the notes server recording to RECORD>`` prints, run in ``cwd`` as a user would."""
    argv = [str(harnessweaver_command()), "mcp", "--print-config", "--client", client]
    options = ["--spec", str(spec), "--name", SERVER, "--trace", str(trace)]
    upstream = [sys.executable, str(NOTES_SERVER), str(record)]
    done = subprocess.run(
        [*argv, *options, "--", *upstream],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"--print-config exited {done.returncode}: {done.stderr}", pytrace=False)
    return done.stdout


@dataclass
class ClaudeMcp:
    """One throwaway project wired for Claude Code with the notes server behind the proxy."""

    sandbox: Sandbox
    server: FakeServer
    runs: list[Run] = field(default_factory=list)

    @property
    def record(self) -> Path:
        """Where the notes server writes each call it runs, one JSON line per call."""
        return self.sandbox.root / "tool-calls.jsonl"

    def calls(self) -> list[dict[str, Any]]:
        return recorded(self.record)

    @property
    def trace(self) -> Path:
        """The proxy's trace (``--trace``), JSON Lines."""
        return self.sandbox.root / "trace.jsonl"

    def decisions(self) -> list[tuple[str, str, str, bool, str | None]]:
        return decisions(self.trace)

    def wire(self, spec_text: str) -> dict[str, Any]:
        """The spec, the printed ``.mcp.json`` (the proxy tracing to :attr:`trace`), the
        approval of its server and the rules that allow its tools; the folder trusted, as a
        user's first interactive run would."""
        spec = self.sandbox.write_spec(spec_text)
        printed = print_mcp_config(
            "claude-code", spec, self.record, self.trace, cwd=self.sandbox.project
        )
        config: dict[str, Any] = json.loads(printed)
        self.sandbox.write_json(self.sandbox.project / ".mcp.json", config)
        settings = {
            "enabledMcpjsonServers": [SERVER],
            "permissions": {"allow": [mcp_tool("write_note"), mcp_tool("delete_file")]},
        }
        self.sandbox.write_json(self.sandbox.project / ".claude" / "settings.json", settings)
        project = str(self.sandbox.project.resolve())
        trusted = {"projects": {project: {"hasTrustDialogAccepted": True}}}
        self.sandbox.write_json(self.sandbox.home / ".claude.json", trusted)
        return config

    def run(self, prompt: str) -> Run:
        log = self.sandbox.root / f"claude-debug-{len(self.runs)}.log"
        env = base_env(self.sandbox)
        env.update(CLAUDE_ENV, ANTHROPIC_BASE_URL=self.server.url)
        argv = [str(agent_cli("claude")), "-p", prompt, "--debug=mcp", "--debug-file", str(log)]
        run = run_agent(argv, cwd=self.sandbox.project, env=env, timeout=90)
        self.runs.append(run)
        return run

    def leftovers(self) -> list[str]:
        return leftovers(self.record)

    def named_to_model(self) -> set[str]:
        """The MCP tools named to the model in the last request it was sent. Claude Code
        defers MCP tools: not in the request's ``tools``, they are listed by name in the text
        of the conversation (the model loads a schema with ``ToolSearch``), once the server is
        connected. Only text blocks count: a tool call and its result name the tool too."""
        found: set[str] = set()
        for text in _texts(self._sent()[-1]):
            found.update(re.findall(r"mcp__[A-Za-z0-9_-]+", text))
        return found

    def results(self) -> list[dict[str, Any]]:
        """The tool results in the last conversation the model was sent, oldest first."""
        return tool_results(self._sent()[-1])

    def _sent(self) -> list[dict[str, Any]]:
        sent = [
            body
            for _, _, body in self.server.requests
            if isinstance(body, dict) and body.get("tools")
        ]
        assert sent, "Claude Code never asked the model anything:\n" + self.describe()
        return sent

    def describe(self) -> str:
        logs = sorted(self.sandbox.root.glob("claude-debug-*.log"))
        tail = logs[-1].read_text(encoding="utf-8", errors="replace")[-4000:] if logs else ""
        return "\n".join(run.describe() for run in self.runs) + f"\ndebug log: {tail}"


def _texts(body: dict[str, Any]) -> Iterator[str]:
    """The text of a Messages request's system prompt and text blocks (no tool blocks)."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else [{"type": "text", "text": system or ""}]
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            blocks = [*blocks, *content]
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            yield str(block.get("text", ""))


@pytest.fixture
def claude(sandbox: Sandbox) -> Iterator[ClaudeMcp]:
    with FakeServer(AnthropicHandler, [Turn(text="done")]) as server:
        yield ClaudeMcp(sandbox, server)


GUARD_PLUGIN = '''"""A plugin of the test: deletions outside scratch/ are refused (a Block
that depends on the arguments, so the tool stays listed)."""
import harnessweaver as hw


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def keep_files(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    path = str(event.call.arguments.get("path", ""))
    if event.tool.name == "delete_file" and not path.startswith("scratch/"):
        return hw.Block(reason=f"{path} is outside scratch/", code="keep_files")
    return None


plugin = hw.Plugin(namespace="e2e", version="1.0.0", middleware=[keep_files])
'''

KEEP_FILES = 'plugins:\n  local: ["e2e_keep"]\nmiddleware:\n  - {use: e2e.keep_files}\n'


def test_a_blocked_mcp_call_never_runs_and_the_model_reads_why(claude: ClaudeMcp) -> None:
    (claude.sandbox.project / "e2e_keep.py").write_text(GUARD_PLUGIN, encoding="utf-8")
    claude.wire(KEEP_FILES)
    claude.server.turns = [
        Turn(tool=mcp_tool("delete_file"), arguments={"path": "important.txt"}),
        Turn(tool=mcp_tool("delete_file"), arguments={"path": "scratch/old.txt"}),
        Turn(text="done"),
    ]

    run = claude.run("delete important.txt, then scratch/old.txt")

    assert claude.calls() == [{"tool": "delete_file", "arguments": {"path": "scratch/old.txt"}}], (
        "the blocked call ran, or the allowed one did not:\n" + claude.describe()
    )
    blocked, allowed = claude.results()
    assert blocked.get("is_error") is True, blocked
    # Claude Code adds a line of its own (the tool's schema) after an error of a deferred tool.
    assert result_text(blocked).splitlines()[0] == (
        "harnessweaver refused the call: important.txt is outside scratch/ (code: keep_files)"
    ), blocked
    assert allowed.get("is_error") is not True, allowed
    assert claude.decisions() == [
        ("tool.before", "delete_file", "block", False, "keep_files"),
        ("tool.before", "delete_file", "continue", False, None),
    ]
    assert run.returncode == 0 and "done" in run.stdout, claude.describe()
    assert claude.leftovers() == [], "the upstream server outlived the agent"


ONLY_NOTES = """\
middleware:
  - {use: harnessweaver.tool_allowlist, id: tools, allow: [write_note]}
"""


def test_a_tool_the_spec_always_refuses_is_not_offered_and_never_runs(claude: ClaudeMcp) -> None:
    claude.wire(ONLY_NOTES)
    claude.server.turns = [
        Turn(tool=mcp_tool("delete_file"), arguments={"path": "important.txt"}),
        Turn(text="done"),
    ]

    claude.run("delete important.txt")

    assert claude.calls() == [], "the refused tool ran:\n" + claude.describe()
    named = claude.named_to_model()
    assert mcp_tool("write_note") in named, named
    assert mcp_tool("delete_file") not in named, named
    (result,) = claude.results()
    assert result.get("is_error") is True, result
    no_such_tool = f"Error: No such tool available: {mcp_tool('delete_file')}"
    assert result_text(result) == f"<tool_use_error>{no_such_tool}</tool_use_error>", result
    assert claude.decisions() == [], "a call of the hidden tool reached the proxy"
    assert claude.leftovers() == [], "the upstream server outlived the agent"


REDACT_EMAILS = """\
middleware:
  - {use: harnessweaver.redact_pii, id: pii, hooks: [tool.after], detect: [email]}
"""


def test_an_allowed_mcp_call_runs_once_and_the_model_reads_its_redacted_result(
    claude: ClaudeMcp,
) -> None:
    claude.wire(REDACT_EMAILS)
    note = "call ada@example.com tomorrow"
    claude.server.turns = [
        Turn(tool=mcp_tool("write_note"), arguments={"text": note}),
        Turn(text="done"),
    ]

    run = claude.run("write the note")

    assert claude.calls() == [{"tool": "write_note", "arguments": {"text": note}}], (
        claude.describe()
    )
    (result,) = claude.results()
    assert result.get("is_error") is not True, result
    # Claude Code gives the model a result's structured content where there is one (the SDK's
    # MCPServer makes {"result": ...} of a str-returning tool): it must be redacted too.
    assert result_text(result) == '{"result":"noted: call [redacted:email] tomorrow"}', result
    assert claude.decisions() == [("tool.after", "write_note", "continue", True, None)]
    assert run.returncode == 0 and "done" in run.stdout, claude.describe()
    assert claude.leftovers() == [], "the upstream server outlived the agent"


# -- Gemini CLI: the same proxy, wired as --print-config --client gemini prints it ---------------


class GeminiMcp(GeminiBox):
    """A throwaway HOME and working folder for Gemini CLI (``gemini -p --yolo``: every tool
    call approved), its ``~/.gemini/settings.json`` holding no hook, only the proxied notes
    server as ``--print-config --client gemini`` prints it."""

    def _configure(self) -> None:
        self.record = self.root / "tool-calls.jsonl"
        self.trace = self.root / "trace.jsonl"
        printed = print_mcp_config(
            "gemini", self.spec, self.record, self.trace, cwd=self.work, env=self.env
        )
        write_settings(self.home, self.work, json.loads(printed))

    def calls(self) -> list[dict[str, Any]]:
        return recorded(self.record)


def test_gemini_a_blocked_mcp_call_never_runs_and_the_model_reads_why(tmp_path: Path) -> None:
    # No hook is wired, so no warm helper: its socket folder (the third argument) stays unused.
    box = GeminiMcp(tmp_path, KEEP_FILES, tmp_path, **{"e2e_keep.py": GUARD_PLUGIN})
    turns = [
        Turn(tool="mcp_notes_delete_file", arguments={"path": "important.txt"}),
        Turn(tool="mcp_notes_delete_file", arguments={"path": "scratch/old.txt"}),
        Turn(text="done"),
    ]
    with box.serving(turns) as server:
        run = box.run(server, "delete important.txt, then scratch/old.txt", debug=False)

    assert box.calls() == [{"tool": "delete_file", "arguments": {"path": "scratch/old.txt"}}], (
        run.output
    )
    blocked, allowed = (json.loads(text) for text in gemini_results(run.conversation()[-1]))
    # Gemini CLI shows the model the whole MCP result inside a sentence of its own.
    error = blocked["response"]["error"]
    assert error.startswith("MCP tool 'delete_file' reported tool error"), blocked
    refusal = "harnessweaver refused the call: important.txt is outside scratch/ (code: keep_files)"
    assert refusal in error, blocked
    assert allowed["response"] == {
        "output": "<untrusted_context>\ndeleted scratch/old.txt\n</untrusted_context>"
    }, allowed
    assert decisions(box.trace) == [
        ("tool.before", "delete_file", "block", False, "keep_files"),
        ("tool.before", "delete_file", "continue", False, None),
    ]
    assert run.code == 0 and "done" in run.stdout, run.output
    assert leftovers(box.record) == [], "the upstream server outlived the agent"


# -- Codex CLI: the same proxy, wired as --print-config --client codex prints it -----------------


def test_codex_a_blocked_mcp_call_never_runs_and_the_model_reads_why(tmp_path: Path) -> None:
    # Codex offers the server's tools as the namespace mcp__notes; approval_policy "never"
    # (CodexBox's config) runs every call without asking. No hook is wired. Codex starts MCP
    # servers with a few variables only (HOME, PATH, LANG: no PYTHONPATH), so the proxy is
    # the installed `harnessweaver` the printed command names (this tree's in nox -s agents).
    with CodexBox(tmp_path) as box:
        (box.root / "e2e_keep.py").write_text(GUARD_PLUGIN, encoding="utf-8")
        spec = box.spec(KEEP_FILES)
        record, trace = box.root / "tool-calls.jsonl", box.root / "trace.jsonl"
        # Not the box's PATH, whose first `harnessweaver` is the hook recorder.
        env = {**box.env(), "PATH": f"{harnessweaver_command().parent}:/usr/bin:/bin"}
        printed = print_mcp_config("codex", spec, record, trace, cwd=box.project, env=env)
        with (box.codex_home / "config.toml").open("a", encoding="utf-8") as config:
            config.write("\n" + printed)
        namespace = f"mcp__{SERVER}"
        run = box.run(
            [
                Turn(tool="delete_file", namespace=namespace, arguments={"path": "important.txt"}),
                Turn(tool="delete_file", namespace=namespace, arguments={"path": "scratch/a"}),
                Turn(text="done"),
            ],
            "delete important.txt, then scratch/a",
        )

    assert recorded(record) == [{"tool": "delete_file", "arguments": {"path": "scratch/a"}}], (
        run.stderr
    )
    blocked, allowed = (item["output"] for item in function_outputs(run.requests[-1]))
    # Codex reads an MCP result as its own "Wall time" line, then the content.
    wall, refusal = (part["text"] for part in blocked)
    assert wall.startswith("Wall time: ") and wall.endswith(" seconds\nOutput:"), blocked
    assert refusal == (
        "harnessweaver refused the call: important.txt is outside scratch/ (code: keep_files)"
    ), blocked
    assert allowed.startswith("Wall time: "), allowed
    assert allowed.endswith(' seconds\nOutput:\n{"result":"deleted scratch/a"}'), allowed
    assert decisions(trace) == [
        ("tool.before", "delete_file", "block", False, "keep_files"),
        ("tool.before", "delete_file", "continue", False, None),
    ]
    assert run.status == 0 and "done" in run.stdout, run.stderr
    assert leftovers(record) == [], "the upstream server outlived the agent"
