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

__all__ = ["TIMEOUTS", "snippet"]

TIMEOUTS = {
    "claude-code": 30,
    "codex": 30,
    "gemini": 30_000,
    "copilot": 30,
    "cursor": 30,
    "vscode": 30,
}
"""Each handler's timeout: milliseconds for Gemini CLI, seconds for every other agent."""

_TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"}

_FLAT = frozenset({"copilot", "cursor", "vscode"})
"""Agents whose hooks are a flat list of handlers per event (no matcher groups), in a file
with ``"version": 1`` (Copilot CLI's and Cursor's ``hooks.json``)."""


def command_line(agent: str, spec: str, task: str | None, env: str | None) -> str:
    """The shell command the agent runs for each event."""
    words = ["harnessweaver", "hook", "--agent", agent, "--spec", spec]
    if task:
        words += ["--task", task]
    if env:
        words += ["--env", env]
    return shlex.join(words)


def snippet(agent: str, spec: str, task: str | None, env: str | None) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` settings for ``agent``, running the command on ``spec``."""
    if agent in _FLAT:
        return _flat(agent, command_line(agent, spec, task, env))
    handler: dict[str, Any] = {
        "type": "command",
        "command": command_line(agent, spec, task, env),
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


def _flat(agent: str, command: str) -> dict[str, Any]:
    """Copilot CLI (``bash`` + ``timeoutSec``), Cursor (``command`` + ``timeout`` +
    ``failClosed: true``: a crash or a timeout then blocks) and VS Code (``command`` +
    ``timeout``)."""
    handler: dict[str, Any]
    if agent == "copilot":
        handler = {"type": "command", "bash": command, "timeoutSec": TIMEOUTS[agent]}
    elif agent == "cursor":
        handler = {"command": command, "timeout": TIMEOUTS[agent], "failClosed": True}
    else:
        handler = {"type": "command", "command": command, "timeout": TIMEOUTS[agent]}
    hooks = {
        event: [dict(handler)] for event, hook in AGENTS[agent].events.items() if hook is not None
    }
    out: dict[str, Any] = {"hooks": hooks}
    return out if agent == "vscode" else {"version": 1, **out}
