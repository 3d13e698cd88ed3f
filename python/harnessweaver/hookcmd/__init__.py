"""``harnessweaver hook``: the bus of a harness spec as a command hook of the coding agents
(Claude Code, Codex CLI, Gemini CLI, GitHub Copilot CLI, Cursor, VS Code;
``docs/integrations/coding-agents.md``), with ``hook doctor`` to check the wiring.

Imported only by the ``hook`` subcommand; its modules import the bus's models only when an
event has a hook point, and the warm client (``warm.py``, ``hook.py``) imports none of them.
"""

from __future__ import annotations

__all__: list[str] = []
