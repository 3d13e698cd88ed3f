"""The MCP enforcement point: a harness spec on every tool call of every MCP client.

``harnessweaver mcp`` fronts an MCP server (stdio, or Streamable HTTP) with the official MCP
SDK's client and server sessions: each ``tools/call`` is emitted at ``tool.before`` and its
result at ``tool.after`` on the bus of the spec (docs/integrations/mcp.md). ``guard`` does the
same inside a Python server built with the SDK, through its middleware seam.

Needs the ``mcp`` extra (``pip install '.[mcp]'`` from a clone).
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401  (the SDK, checked once: every module here needs it)
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed in the tests
    if exc.name != "mcp":
        raise
    raise ModuleNotFoundError(
        "harnessweaver.mcp needs the MCP SDK, the `mcp` extra (from a clone: pip install '.[mcp]')",
        name="mcp",
    ) from None

from .guard import guard

__all__ = ["guard"]
