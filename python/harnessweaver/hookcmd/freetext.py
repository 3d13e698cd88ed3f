"""The free text a model writes beside a shell command, kept out of what the harness judges.

Claude Code's ``Bash`` and Gemini CLI's ``run_shell_command`` take a ``description`` the
model writes in its own words ("List files", "Show the directory"): it is shown to the user
and never run. Were it part of the call's arguments, one command sent twice with two
descriptions would be two different calls to the loop guard, which fingerprints the
arguments. So the event's arguments leave it out, and a rewritten call gets it back, as the
model wrote it, in what the agent runs (Claude Code replaces the whole input with
``updatedInput``; Gemini CLI would otherwise read its absence as a removed argument).

No heavy imports: the command reads this before it knows whether to load the harness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FREE_TEXT", "judged", "restored"]

FREE_TEXT: dict[tuple[str, str], tuple[str, ...]] = {
    ("claude-code", "Bash"): ("description",),
    ("gemini", "run_shell_command"): ("description",),
}
"""(agent, tool name) -> the arguments that are the model's free text about the call."""


def judged(agent: str, tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_input`` without the model's free text: the arguments the harness judges."""
    skip = FREE_TEXT.get((agent, tool), ())
    return {key: value for key, value in tool_input.items() if key not in skip}


def restored(
    agent: str, tool: str, arguments: Mapping[str, Any], tool_input: Mapping[str, Any]
) -> dict[str, Any]:
    """The rewritten ``arguments`` with the free text of the original ``tool_input`` given
    back (the harness never saw it, so it cannot have meant to change it)."""
    out = dict(arguments)
    for key in FREE_TEXT.get((agent, tool), ()):
        if key in tool_input and key not in out:
            out[key] = tool_input[key]
    return out
