"""``harnessweaver hook`` inside the real Claude Code CLI (the pinned ``claude``), run headless
with ``claude -p`` against a scripted fake Anthropic Messages API on 127.0.0.1.

Each test wires the hooks exactly as ``harnessweaver hook --agent claude-code --print-config``
prints them into the throwaway project's ``.claude/settings.json``, next to a user permission
rule that allows ``Bash`` (so only the hook stands between the model and the shell), and
scripts the model to call ``Bash`` with a command whose effect on the project folder shows
whether it ran. What the model read after the call is taken from the fake server's request
log. Every test asserts the behaviour the docs promise, whether or not today's code keeps it;
none is skipped. One agent run per check (two for the resumed session).
"""

from __future__ import annotations

import re
import shlex
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from common import (
    Run,
    Sandbox,
    agent_cli,
    base_env,
    harnessweaver_command,
    percentile,
    print_config,
    run_agent,
)
from fakemodel.anthropic import AnthropicHandler, tool_results
from fakemodel.server import FakeServer, Turn

AGENT = "claude-code"

CLAUDE_ENV = {
    "ANTHROPIC_API_KEY": "dummy",
    # Claude Code's switches for its own traffic: none of it may try to leave loopback.
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}

ALLOW_BASH = {"allow": ["Bash"]}
"""The user's own rule: without a hook, every scripted ``Bash`` call would run."""

_HOOK_LINE = re.compile(
    r"Hooks: (?P<event>[A-Za-z]+)(?::\S*)? \[(?P<command>[^\]]*)\] finished with status "
    r"(?P<status>-?\d+) \((?P<ms>\d+)ms\)"
)
"""A hook's end in Claude Code's debug log (``--debug=hooks``), with the time it took."""

BARE = "-c pass"
"""The hook command of the run that gives the scale: the interpreter, started for nothing."""


def bash(command: str, description: str = "run a command") -> Turn:
    return Turn(tool="Bash", arguments={"command": command, "description": description})


def result_text(block: dict[str, Any]) -> str:
    """A ``tool_result``'s content as text (a string, or text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@dataclass
class Claude:
    """One throwaway project wired for Claude Code, and its fake model server."""

    sandbox: Sandbox
    server: FakeServer
    warm_dir: Path
    hook_times: dict[str, dict[str, list[float]]]
    runs: list[Run] = field(default_factory=list)

    def wire(
        self,
        spec: Path,
        permissions: dict[str, Any] | None = None,
        *,
        also: tuple[str, ...] = (),
        command: str | None = None,
        printed: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """The printed hooks (exactly; ``also``: the same handler on more events; ``command``:
        another command in every handler, for scale; ``printed``: more --print-config options)
        and the user's permission rules in the
        project's settings. The folder is trusted, as a user's first interactive run would:
        else Claude ignores the project's permission rules."""
        settings = dict(print_config(AGENT, spec, self.sandbox.project, *printed))
        for event in also:
            settings["hooks"][event] = settings["hooks"]["Stop"]
        if command is not None:
            for groups in settings["hooks"].values():
                for group in groups:
                    for handler in group["hooks"]:
                        handler["command"] = command
        settings["permissions"] = ALLOW_BASH if permissions is None else permissions
        self.sandbox.write_json(self.sandbox.project / ".claude" / "settings.json", settings)
        project = str(self.sandbox.project.resolve())
        trusted = {"projects": {project: {"hasTrustDialogAccepted": True}}}
        self.sandbox.write_json(self.sandbox.home / ".claude.json", trusted)
        return settings

    def run(self, prompt: str, *options: str) -> Run:
        """``claude -p PROMPT`` in the project; hook timings are read from its debug log."""
        log = self.sandbox.root / f"claude-debug-{len(self.runs)}.log"
        env = base_env(self.sandbox, self.warm_dir)
        env.update(CLAUDE_ENV, ANTHROPIC_BASE_URL=self.server.url)
        argv = [str(agent_cli("claude")), "-p", prompt, "--debug=hooks", "--debug-file", str(log)]
        run = run_agent([*argv, *options], cwd=self.sandbox.project, env=env, timeout=90)
        self.runs.append(run)
        self._collect_times(log)
        return run

    def _collect_times(self, log: Path) -> None:
        if not log.exists():
            return
        for match in _HOOK_LINE.finditer(log.read_text(encoding="utf-8", errors="replace")):
            if match["command"].split(" --agent ")[0].endswith("hook.py"):
                who = f"{AGENT} (--print-config --fast)"
            elif "harnessweaver" in match["command"]:
                who = AGENT
            elif match["command"].endswith(BARE):
                who = f"{AGENT} ({BARE} as the hook)"
            else:
                continue
            per_event = self.hook_times.setdefault(who, {})
            per_event.setdefault(match["event"], []).append(float(match["ms"]))

    def results(self) -> list[dict[str, Any]]:
        """The tool results in the last conversation the model was sent: what the model read
        about each of its calls, oldest first."""
        sent = [
            body
            for _, _, body in self.server.requests
            if isinstance(body, dict) and body.get("tools")
        ]
        assert sent, "Claude Code never asked the model anything:\n" + self.describe()
        return tool_results(sent[-1])

    def describe(self) -> str:
        return "\n".join(run.describe() for run in self.runs)


@pytest.fixture
def claude(
    sandbox: Sandbox, warm_dir: Path, hook_times: dict[str, dict[str, list[float]]]
) -> Iterator[Claude]:
    with FakeServer(AnthropicHandler, [Turn(text="done")]) as server:
        yield Claude(sandbox, server, warm_dir, hook_times)


MARKER = bash("touch marker.txt", "create a marker")

# -- 1. Block ----------------------------------------------------------------------------------


def test_a_blocked_tool_never_runs_and_the_model_reads_why(claude: Claude) -> None:
    spec = claude.sandbox.write_spec(
        "middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [Read]}\n"
    )
    claude.wire(spec)
    claude.server.turns = [MARKER, Turn(text="done")]

    claude.run("create the marker")

    assert not (claude.sandbox.project / "marker.txt").exists(), claude.describe()
    (result,) = claude.results()
    assert result.get("is_error") is True
    assert "tool 'Bash' is not allowed (tool_not_allowed)" in result_text(result), result


# -- 2. Suspend --------------------------------------------------------------------------------

HOLD_PLUGIN = '''"""A plugin of the test: every shell command waits for a reviewer (Suspend)."""
import harnessweaver as hw


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def hold_shell(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.tool.name == "Bash":
        return hw.Suspend(reason="shell commands wait for a reviewer", approver_role="reviewer")
    return None


plugin = hw.Plugin(namespace="e2e", version="1.0.0", middleware=[hold_shell])
'''


def test_a_suspended_call_does_not_run_headless_and_the_model_reads_why(claude: Claude) -> None:
    # Suspend at tool.before is an ask; `claude -p` has no one to ask: the call must not run
    # (even though the user's rules allow Bash), the model reads why, the session goes on.
    (claude.sandbox.project / "e2e_hold.py").write_text(HOLD_PLUGIN, encoding="utf-8")
    spec = claude.sandbox.write_spec(
        'plugins:\n  local: ["e2e_hold"]\nmiddleware:\n  - {use: e2e.hold_shell}\n'
    )
    claude.wire(spec)
    claude.server.turns = [MARKER, Turn(text="done")]

    run = claude.run("create the marker")

    assert not (claude.sandbox.project / "marker.txt").exists(), claude.describe()
    (result,) = claude.results()
    assert result.get("is_error") is True
    assert "shell commands wait for a reviewer" in result_text(result), result
    assert run.returncode == 0 and "done" in run.stdout, claude.describe()


# -- 3. Continue(modified) ---------------------------------------------------------------------

SECRET = "sk-e2eSECRETtoken12345"
REDACT = "middleware:\n  - {use: harnessweaver.redact_secrets, id: secrets}\n"
WRITE_KEY = bash(f"printf '%s' 'key={SECRET}' > marker.txt", "write the key")


def test_a_rewritten_call_runs_as_rewritten(claude: Claude) -> None:
    claude.wire(claude.sandbox.write_spec(REDACT))
    claude.server.turns = [WRITE_KEY, Turn(text="done")]

    claude.run("write the key")

    marker = claude.sandbox.project / "marker.txt"
    assert marker.exists(), "the rewritten call did not run:\n" + claude.describe()
    assert marker.read_text(encoding="utf-8") == "key=[redacted]"
    (result,) = claude.results()
    assert result.get("is_error") is False, result


def test_a_rewritten_call_still_obeys_the_users_deny_rule(claude: Claude) -> None:
    # The user's own `permissions.deny` still decides on the call as rewritten: a rewrite must
    # never let through what the user's settings refuse.
    claude.wire(claude.sandbox.write_spec(REDACT), {"allow": ["Bash"], "deny": ["Bash(printf:*)"]})
    claude.server.turns = [WRITE_KEY, Turn(text="done")]

    claude.run("write the key")

    assert not (claude.sandbox.project / "marker.txt").exists(), claude.describe()
    (result,) = claude.results()
    assert result.get("is_error") is True, result
    assert SECRET not in result_text(result), result


# -- 4. The loop guard, within a session and across a resumed one ------------------------------

LOOP = "middleware:\n  - {use: harnessweaver.loop_guard, warn_after: null, block_after: 3}\n"
AGAIN = bash("echo again >> count.txt", "append a line")


def test_the_loop_guard_refuses_the_third_identical_call(claude: Claude) -> None:
    claude.wire(claude.sandbox.write_spec(LOOP))
    claude.server.turns = [AGAIN, AGAIN, AGAIN, Turn(text="done")]

    claude.run("append three lines")

    assert lines(claude.sandbox.project / "count.txt") == 2, claude.describe()
    first, second, third = claude.results()
    assert first.get("is_error") is False and second.get("is_error") is False
    assert third.get("is_error") is True
    assert "(loop_detected)" in result_text(third), third


def test_the_loop_guard_counts_across_a_resumed_session(claude: Claude) -> None:
    claude.wire(claude.sandbox.write_spec(LOOP))
    session = str(uuid.uuid4())
    claude.server.turns = [AGAIN, AGAIN, Turn(text="two lines, stopping here")]
    claude.run("append two lines", "--session-id", session)
    assert lines(claude.sandbox.project / "count.txt") == 2, claude.describe()

    # The same session, resumed by a new process: its third identical call is a repeat.
    claude.server.turns = [AGAIN, AGAIN, AGAIN, Turn(text="done")]
    claude.run("append one more", "--resume", session)

    results = claude.results()
    assert len(results) == 3, f"the resumed session did not carry its history: {results}"
    assert lines(claude.sandbox.project / "count.txt") == 2, (
        "the third identical call ran: the loop guard's counts did not survive the end of the "
        "first invocation (its SessionEnd)\n" + claude.describe()
    )
    assert "(loop_detected)" in result_text(results[2]), results[2]


# -- 5. A spec that does not load --------------------------------------------------------------

GOOD = "middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [Bash]}\n"
BROKEN = "middleware:\n  - {use: harnessweaver.loop_guard, warn_after: null, block_after: 1}\n"
"""``block_after`` must be at least 2: this spec does not load."""


def test_a_spec_that_does_not_load_refuses_the_session_and_says_why(claude: Claude) -> None:
    spec = claude.sandbox.write_spec(GOOD)
    claude.wire(spec)
    spec.write_text(BROKEN, encoding="utf-8")  # wired while it loaded, then edited
    claude.server.turns = [MARKER, Turn(text="done")]

    run = claude.run("create the marker")

    assert not (claude.sandbox.project / "marker.txt").exists(), claude.describe()
    assert "block_after" in run.stdout + run.stderr, claude.describe()


def test_a_spec_broken_mid_session_refuses_the_call_and_the_model_reads_why(
    claude: Claude,
) -> None:
    spec = claude.sandbox.write_spec(GOOD)
    claude.wire(spec)
    claude.server.turns = [MARKER, Turn(text="done")]

    def break_spec(answered: int, turn: Turn) -> None:
        # While the model "thinks": the prompt's hooks passed, the call's must fail closed.
        if answered == 0:
            spec.write_text(BROKEN, encoding="utf-8")

    claude.server.on_turn = break_spec

    claude.run("create the marker")

    assert not (claude.sandbox.project / "marker.txt").exists(), claude.describe()
    (result,) = claude.results()
    assert result.get("is_error") is True, result
    assert "block_after" in result_text(result), result
    # Failing closed ends the turn: a Stop answered with exit 2 means "keep working" to Claude
    # Code, which then asks the model again and again with a harness that cannot load.
    asked = [body for _, _, body in claude.server.requests if isinstance(body, dict)]
    assert len(asked) == 2, f"the model was asked {len(asked)} times:\n" + claude.describe()


# -- Events the command has no hook point for ----------------------------------------------------


def test_events_without_a_hook_point_are_answered_neutrally(claude: Claude) -> None:
    # Documented: the command answers the agent's other events neutrally, should you wire them.
    # Claude Code 2.1.332 sends PostToolBatch after every batch of calls and MessageDisplay for
    # the final text, in every `claude -p` run.
    also = ("PostToolBatch", "MessageDisplay", "PermissionRequest", "PermissionDenied")
    claude.wire(claude.sandbox.write_spec(GOOD), also=also)
    claude.server.turns = [
        bash("echo 1 >> log.txt", "first line"),
        bash("echo 2 >> log.txt", "second line"),
        Turn(text="done"),
    ]

    run = claude.run("write two lines")

    assert lines(claude.sandbox.project / "log.txt") == 2, claude.describe()
    assert [r.get("is_error") for r in claude.results()] == [False, False]
    assert run.returncode == 0 and "done" in run.stdout, claude.describe()


# -- 6. Wall time per hook event -----------------------------------------------------------------


def test_wall_time_per_hook_event_is_reported(
    claude: Claude, hook_times: dict[str, dict[str, list[float]]]
) -> None:
    # Claude Code's own measure of each hook (its debug log), never asserted: the printed
    # hooks, then for scale the same run with `<harnessweaver's interpreter> -c pass` as the
    # command of every hook.
    spec = claude.sandbox.write_spec(
        "middleware:\n"
        "  - {use: harnessweaver.tool_allowlist, id: tools, allow: [Bash]}\n"
        "  - {use: harnessweaver.loop_guard}\n"
    )
    calls = 6
    turns = [bash(f"echo {n} >> log.txt", f"line {n}") for n in range(calls)]
    claude.server.turns = [*turns, Turn(text="done")]
    before = {event: len(values) for event, values in hook_times.get(AGENT, {}).items()}
    claude.wire(spec)
    claude.run("write six lines")

    assert lines(claude.sandbox.project / "log.txt") == calls, claude.describe()
    measured = {
        event: values[before.get(event, 0) :] for event, values in hook_times[AGENT].items()
    }
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        assert measured.get(event), f"no time of {event} in Claude's debug log"
    assert len(measured["PreToolUse"]) == calls

    interpreter = harnessweaver_interpreter()
    claude.wire(spec, command=f"{shlex.quote(interpreter)} {BARE}")
    claude.run("write six lines again")
    assert lines(claude.sandbox.project / "log.txt") == 2 * calls, claude.describe()
    bare = hook_times[f"{AGENT} ({BARE} as the hook)"]["PreToolUse"]

    claude.wire(spec, printed=("--fast",))  # the hook as `python -S -P .../hook.py`
    claude.run("write six lines once more")
    assert lines(claude.sandbox.project / "log.txt") == 3 * calls, claude.describe()
    fast = hook_times[f"{AGENT} (--print-config --fast)"]["PreToolUse"]
    print(
        f"\n{AGENT}: PreToolUse p50 {percentile(measured['PreToolUse'], 50):.0f} ms, "
        f"--fast {percentile(fast, 50):.0f} ms, "
        f"with `{interpreter} {BARE}` as the hook {percentile(bare, 50):.0f} ms"
    )


def harnessweaver_interpreter() -> str:
    """The Python that runs the ``harnessweaver`` command (its script's first line)."""
    first = harnessweaver_command().read_text(encoding="utf-8", errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable
