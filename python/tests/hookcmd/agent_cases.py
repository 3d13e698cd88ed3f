"""Shared checks for the agents with a module of their own (Copilot CLI, Cursor, VS Code):
the recorded documents, each event's hook point, and what a run emitted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookcmd_support import EVENTS, SCRIPTED, Ran, run_in_process

SESSION_FIELD = {"copilot": "session_id", "cursor": "conversation_id", "vscode": "session_id"}


def doc(agent: str, name: str, session: str = "session-1", **changes: Any) -> dict[str, Any]:
    """The recorded document of ``name``, in ``session``, with ``changes``."""
    data: dict[str, Any] = json.loads((EVENTS / agent / f"{name}.json").read_text())
    return {**data, SESSION_FIELD[agent]: session, **changes}


def recorded(agent: str) -> list[str]:
    return sorted(path.stem for path in (EVENTS / agent).glob("*.json"))


def hooks_seen(record: Path) -> list[str]:
    """The hook points the scripted middleware saw, in order."""
    if not record.exists():
        return []
    return [json.loads(line)["hook"] for line in record.read_text().splitlines()]


def run(agent: str, data: dict[str, Any] | bytes, tmp: Path) -> Ran:
    return run_in_process(agent, data, SCRIPTED, tmp / "state.db")
