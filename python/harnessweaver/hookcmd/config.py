"""``harnessweaver hook --print-config``: the settings that wire the command into an agent.

Each agent's hooks are a mapping from event name to a list of matcher groups, each with a
list of command handlers (Claude Code's ``.claude/settings.json``, Codex's
``.codex/hooks.json``, Gemini CLI's ``.gemini/settings.json``). Only the events that have a
hook point are wired; tool events match every tool.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from .agents import AGENTS

__all__ = ["PROJECT_DIR", "TIMEOUTS", "command_line", "snippet", "spec_word"]

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


PROJECT_DIR = {"claude-code": '"$CLAUDE_PROJECT_DIR"', "gemini": "$GEMINI_PROJECT_DIR"}
"""How each agent's project directory is written in a hook command, where it has one. Claude
Code sets ``CLAUDE_PROJECT_DIR`` for the shell (quoted, as its docs write it); Gemini CLI
replaces ``$GEMINI_PROJECT_DIR`` in the command text with the directory already shell-quoted,
so quoting it again would put literal quotes in the path. Codex documents no such variable."""


def spec_word(agent: str, spec: str, project: Path | None) -> str:
    """The ``--spec`` argument as shell text: relative to the agent's project variable when
    ``spec`` (absolute) is inside ``project``, else the absolute path."""
    variable = PROJECT_DIR.get(agent)
    path = Path(spec)
    if variable is None or project is None or not path.is_relative_to(project):
        return shlex.quote(spec)
    return f"{variable}/{shlex.quote(path.relative_to(project).as_posix())}"


def command_line(
    agent: str,
    spec: str,
    task: str | None,
    env: str | None,
    *,
    rewrite: str | None = None,
    project: Path | None = None,
    trace: str | None = None,
    fast: bool = False,
) -> str:
    """The shell command the agent runs for each event: ``harnessweaver hook`` as found on
    the agent's ``PATH``, or with ``fast`` this interpreter on ``hookcmd/hook.py`` without
    ``site`` (the warm client of built-in modules only: docs/performance.md, "Start-up")."""
    if fast:
        from .warm import command_line as fast_client

        words = [*fast_client(), "--agent", agent]
    else:
        words = ["harnessweaver", "hook", "--agent", agent]
    after = []
    if task:
        after += ["--task", task]
    if env:
        after += ["--env", env]
    if rewrite:
        after += ["--rewrite", rewrite]
    if trace:
        after += ["--trace", trace]
    spec_text = spec_word(agent, spec, project)
    return " ".join(filter(None, [shlex.join(words), "--spec", spec_text, shlex.join(after)]))


def snippet(
    agent: str,
    spec: str,
    task: str | None,
    env: str | None,
    *,
    rewrite: str | None = None,
    project: Path | None = None,
    trace: str | None = None,
    fast: bool = False,
) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` settings for ``agent``, running the command on ``spec``
    (``project``: the agent's project directory, see :func:`spec_word`)."""
    if agent in _FLAT:
        words = command_line(
            agent, spec, task, env, rewrite=rewrite, project=project, trace=trace, fast=fast
        )
        return _flat(agent, words)
    handler: dict[str, Any] = {
        "type": "command",
        "command": command_line(
            agent, spec, task, env, rewrite=rewrite, project=project, trace=trace, fast=fast
        ),
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
