"""``harnessweaver hook --print-config``: the settings that wire the command into an agent.

Each agent's hooks are a mapping from event name to a list of matcher groups, each with a
list of command handlers (Claude Code's ``.claude/settings.json``, Codex's
``.codex/hooks.json``, Gemini CLI's ``.gemini/settings.json``). Only the events that have a
hook point are wired; tool events match every tool.
"""

from __future__ import annotations

import shlex
from typing import Any

from .agents import AGENTS

__all__ = ["TIMEOUTS", "command_line", "snippet"]

TIMEOUTS = {"claude-code": 30, "codex": 30, "gemini": 30_000}
"""Each handler's timeout: seconds for Claude Code and Codex, milliseconds for Gemini CLI."""

_TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"}


def command_line(
    agent: str, spec: str, task: str | None, env: str | None, rewrite: str | None = None
) -> str:
    """The shell command the agent runs for each event."""
    words = ["harnessweaver", "hook", "--agent", agent, "--spec", spec]
    if task:
        words += ["--task", task]
    if env:
        words += ["--env", env]
    if rewrite:
        words += ["--rewrite", rewrite]
    return shlex.join(words)


def snippet(
    agent: str, spec: str, task: str | None, env: str | None, rewrite: str | None = None
) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` settings for ``agent``, running the command on ``spec``."""
    handler: dict[str, Any] = {
        "type": "command",
        "command": command_line(agent, spec, task, env, rewrite),
        "timeout": TIMEOUTS[agent],
    }
    if agent == "gemini":
        handler["name"] = "harnessweaver"
    hooks: dict[str, Any] = {}
    for event, hook in AGENTS[agent].events.items():
        if hook is None:
            continue
        group: dict[str, Any] = {"hooks": [handler]}
        if event in _TOOL_EVENTS:
            group = {"matcher": ".*" if agent == "gemini" else "*", **group}
        hooks[event] = [group]
    return {"hooks": hooks}
