"""A small MCP server with two tools, for the quick start's proxy (quick start, step 6)."""

import subprocess

from mcp.server.mcpserver import MCPServer

server = MCPServer("workshop")


@server.tool()
def run_shell(command: str) -> str:
    """Run a shell command and return what it printed."""
    done = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


@server.tool()
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


if __name__ == "__main__":
    server.run()
