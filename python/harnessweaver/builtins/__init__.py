"""The built-in middleware: the plugin of namespace ``harnessweaver``.

A harness spec uses them as ``harnessweaver.<name>`` without listing a plugin; the built-in
profiles (``profile://rag``, ``profile://safe-tools``) are made of them.

| middleware | hook points | fail mode | does |
|---|---|---|---|
| ``tool_allowlist`` | tool.before | closed | blocks a tool not in ``allow`` |
| ``max_messages`` | model.before | closed | blocks a request with more than ``limit`` messages |
| ``redact_secrets`` | tool.before, model.before | open | replaces ``patterns`` by ``[redacted]`` |
| ``require_citations`` | model.after | open | retries an answer without a ``[n]`` citation |
"""

from __future__ import annotations

from ..plugin import Plugin
from .citations import RequireCitations
from .messages import MaxMessages
from .redact import RedactSecrets
from .tools import ToolAllowlist

__all__ = ["MaxMessages", "RedactSecrets", "RequireCitations", "ToolAllowlist", "plugin"]

plugin = Plugin(
    namespace="harnessweaver",
    version="0.1.0",  # harnessweaver.__version__ (a test keeps them equal)
    middleware=[ToolAllowlist, MaxMessages, RedactSecrets, RequireCitations],
)
"""The built-in plugin: its middleware are ``harnessweaver.tool_allowlist`` and so on."""
