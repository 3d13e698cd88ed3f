"""``harnessweaver hook``: the bus of a harness spec as a command hook of Claude Code, Codex
CLI or Gemini CLI (``docs/integrations/coding-agents.md``).

Imported only by the ``hook`` subcommand; its modules import the bus's models only when an
event has a hook point.
"""

from __future__ import annotations

__all__: list[str] = []
