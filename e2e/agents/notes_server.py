"""A tiny MCP server of the end-to-end tests (stdio, the official SDK's ``MCPServer``): its
tools append each call they run to the file named by the first argument, one JSON line per
call, so a test can tell whether a tool ran at all.

``python notes_server.py LOG`` serves ``write_note`` (records the note, answers with it) and
``delete_file`` (records the path it would delete; deletes nothing).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

LOG = Path(sys.argv[1])
server = MCPServer("notes")


def _record(tool: str, arguments: dict[str, str]) -> None:
    with LOG.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def write_note(text: str) -> str:
    """Writes a note and answers with what it wrote."""
    _record("write_note", {"text": text})
    return f"noted: {text}"


@server.tool()
def delete_file(path: str) -> str:
    """Deletes a file (here: records that it was asked to)."""
    _record("delete_file", {"path": path})
    return f"deleted {path}"


if __name__ == "__main__":
    server.run()
