"""A small file server built with the SDK's ``MCPServer``, over Streamable HTTP on 127.0.0.1:
the HTTP upstream of the end-to-end tests. Its tools have the reference filesystem server's
names and arguments (``write_file``, ``read_text_file``, ``move_file``), so one harness.yaml
guards both; it serves the folder it is started in and nothing outside it.

    python files_server.py --port 8000        # http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import MCPServer

__all__ = ["build_server", "main"]


def _inside(root: Path, path: str) -> Path:
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ValueError(f"{path} is outside {root}")
    return target


def build_server(root: Path) -> MCPServer:
    root = root.resolve()
    server = MCPServer(name="harnessweaver-e2e-files", version="0.1.0")

    @server.tool()
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file with the given content."""
        _inside(root, path).write_text(content, encoding="utf-8")
        return f"Successfully wrote to {path}"

    @server.tool()
    def read_text_file(path: str) -> str:
        """Read a file as text."""
        return _inside(root, path).read_text(encoding="utf-8")

    @server.tool()
    def move_file(source: str, destination: str) -> str:
        """Move or rename a file."""
        _inside(root, source).rename(_inside(root, destination))
        return f"Successfully moved {source} to {destination}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = build_server(Path.cwd()).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
